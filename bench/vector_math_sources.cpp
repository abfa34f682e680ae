// Benchmark: SLEEF beside libmvec per math function, type and instruction set, and isthmus's pick.
//
// The vector loops take each function from whichever library was faster on the machine they
// were tuned on (Note [vector math sources] in core/src/cpu/simd/vector_math_loops.hpp). This
// program times both libraries' vector functions in a plain loop over 1M elements in the cache
// (best of 15) and prints, for each row, their ratio and the library the build picked, flagging
// rows where the other library is more than 10% faster on this CPU: rerun it on a new CPU family
// before trusting the table there.
#include "cpu/vector_math.hpp"

#include <immintrin.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace vm = isthmus::cpu::vmath;

namespace {

constexpr int N = 1 << 20;

template <class F>
double best_ms(F f) {
    double best = 1e30;
    for (int r = 0; r < 15; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        f();
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count();
        best = ms < best ? ms : best;
    }
    return best;
}

// One row: the time of each library on float32 and float64 for one set.
struct timing {
    double sleef32, mvec32, sleef64, mvec64;
};

} // namespace

// Both libraries' entry points, declared here: sleef.h declares a set's functions only when the
// whole file is compiled for that set, and this file compiles each set's loops by a pragma.
extern "C" {
#define ISTHMUS_DECLARE(FN, U)                                                                     \
    __m512 _ZGVeN16v_##FN##f(__m512);                                                              \
    __m512d _ZGVeN8v_##FN(__m512d);                                                                \
    __m256 _ZGVdN8v_##FN##f(__m256);                                                               \
    __m256d _ZGVdN4v_##FN(__m256d);                                                                \
    __m512 Sleef_##FN##f16##U##avx512f(__m512);                                                    \
    __m512d Sleef_##FN##d8##U##avx512f(__m512d);                                                   \
    __m256 Sleef_##FN##f8##U##avx2(__m256);                                                        \
    __m256d Sleef_##FN##d4##U##avx2(__m256d);
// clang-format off
#define ISTHMUS_FUNCTIONS(X) \
    X(exp, _u10) X(exp2, _u10) X(log, _u35) X(log2, _u35) X(log10, _u10) X(expm1, _u10) \
    X(log1p, _u10) X(cbrt, _u35) X(sin, _u35) X(cos, _u35) X(tan, _u35) X(asin, _u35) \
    X(acos, _u35) X(atan, _u35) X(sinh, _u35) X(cosh, _u35) X(tanh, _u35) X(asinh, _u10) \
    X(acosh, _u10) X(atanh, _u10) X(erf, _u10) X(erfc, _u15)
// clang-format on
ISTHMUS_FUNCTIONS(ISTHMUS_DECLARE)
__m512 _ZGVeN16vv_powf(__m512, __m512);
__m512d _ZGVeN8vv_pow(__m512d, __m512d);
__m256 _ZGVdN8vv_powf(__m256, __m256);
__m256d _ZGVdN4vv_pow(__m256d, __m256d);
__m512 Sleef_powf16_u10avx512f(__m512, __m512);
__m512d Sleef_powd8_u10avx512f(__m512d, __m512d);
__m256 Sleef_powf8_u10avx2(__m256, __m256);
__m256d Sleef_powd4_u10avx2(__m256d, __m256d);
}

namespace {

// The timing loops of each set are compiled for that set only.
#pragma GCC push_options
#pragma GCC target("avx512f")
#define ISTHMUS_TIME_512(FN, U)                                                                    \
    timing time_512_##FN(const float* a, float* o, const double* ad, double* od) {                 \
        timing t;                                                                                  \
        t.sleef32 = best_ms([&] {                                                                  \
            for (int i = 0; i < N; i += 16)                                                        \
                _mm512_storeu_ps(o + i, Sleef_##FN##f16##U##avx512f(_mm512_loadu_ps(a + i)));      \
        });                                                                                        \
        t.mvec32 = best_ms([&] {                                                                   \
            for (int i = 0; i < N; i += 16)                                                        \
                _mm512_storeu_ps(o + i, _ZGVeN16v_##FN##f(_mm512_loadu_ps(a + i)));                \
        });                                                                                        \
        t.sleef64 = best_ms([&] {                                                                  \
            for (int i = 0; i < N; i += 8)                                                         \
                _mm512_storeu_pd(od + i, Sleef_##FN##d8##U##avx512f(_mm512_loadu_pd(ad + i)));     \
        });                                                                                        \
        t.mvec64 = best_ms([&] {                                                                   \
            for (int i = 0; i < N; i += 8)                                                         \
                _mm512_storeu_pd(od + i, _ZGVeN8v_##FN(_mm512_loadu_pd(ad + i)));                  \
        });                                                                                        \
        return t;                                                                                  \
    }
ISTHMUS_FUNCTIONS(ISTHMUS_TIME_512)
// pow(a, b), b the input reversed
timing time_512_pow(const float* a, float* o, const double* ad, double* od) {
    timing t;
    t.sleef32 = best_ms([&] {
        for (int i = 0; i < N; i += 16)
            _mm512_storeu_ps(o + i, Sleef_powf16_u10avx512f(_mm512_loadu_ps(a + i),
                                                            _mm512_loadu_ps(a + N - 16 - i)));
    });
    t.mvec32 = best_ms([&] {
        for (int i = 0; i < N; i += 16)
            _mm512_storeu_ps(
                o + i, _ZGVeN16vv_powf(_mm512_loadu_ps(a + i), _mm512_loadu_ps(a + N - 16 - i)));
    });
    t.sleef64 = best_ms([&] {
        for (int i = 0; i < N; i += 8)
            _mm512_storeu_pd(od + i, Sleef_powd8_u10avx512f(_mm512_loadu_pd(ad + i),
                                                            _mm512_loadu_pd(ad + N - 8 - i)));
    });
    t.mvec64 = best_ms([&] {
        for (int i = 0; i < N; i += 8)
            _mm512_storeu_pd(
                od + i, _ZGVeN8vv_pow(_mm512_loadu_pd(ad + i), _mm512_loadu_pd(ad + N - 8 - i)));
    });
    return t;
}
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
#define ISTHMUS_TIME_256(FN, U)                                                                    \
    timing time_256_##FN(const float* a, float* o, const double* ad, double* od) {                 \
        timing t;                                                                                  \
        t.sleef32 = best_ms([&] {                                                                  \
            for (int i = 0; i < N; i += 8)                                                         \
                _mm256_storeu_ps(o + i, Sleef_##FN##f8##U##avx2(_mm256_loadu_ps(a + i)));          \
        });                                                                                        \
        t.mvec32 = best_ms([&] {                                                                   \
            for (int i = 0; i < N; i += 8)                                                         \
                _mm256_storeu_ps(o + i, _ZGVdN8v_##FN##f(_mm256_loadu_ps(a + i)));                 \
        });                                                                                        \
        t.sleef64 = best_ms([&] {                                                                  \
            for (int i = 0; i < N; i += 4)                                                         \
                _mm256_storeu_pd(od + i, Sleef_##FN##d4##U##avx2(_mm256_loadu_pd(ad + i)));        \
        });                                                                                        \
        t.mvec64 = best_ms([&] {                                                                   \
            for (int i = 0; i < N; i += 4)                                                         \
                _mm256_storeu_pd(od + i, _ZGVdN4v_##FN(_mm256_loadu_pd(ad + i)));                  \
        });                                                                                        \
        return t;                                                                                  \
    }
ISTHMUS_FUNCTIONS(ISTHMUS_TIME_256)
timing time_256_pow(const float* a, float* o, const double* ad, double* od) {
    timing t;
    t.sleef32 = best_ms([&] {
        for (int i = 0; i < N; i += 8)
            _mm256_storeu_ps(
                o + i, Sleef_powf8_u10avx2(_mm256_loadu_ps(a + i), _mm256_loadu_ps(a + N - 8 - i)));
    });
    t.mvec32 = best_ms([&] {
        for (int i = 0; i < N; i += 8)
            _mm256_storeu_ps(
                o + i, _ZGVdN8vv_powf(_mm256_loadu_ps(a + i), _mm256_loadu_ps(a + N - 8 - i)));
    });
    t.sleef64 = best_ms([&] {
        for (int i = 0; i < N; i += 4)
            _mm256_storeu_pd(od + i, Sleef_powd4_u10avx2(_mm256_loadu_pd(ad + i),
                                                         _mm256_loadu_pd(ad + N - 4 - i)));
    });
    t.mvec64 = best_ms([&] {
        for (int i = 0; i < N; i += 4)
            _mm256_storeu_pd(
                od + i, _ZGVdN4vv_pow(_mm256_loadu_pd(ad + i), _mm256_loadu_pd(ad + N - 4 - i)));
    });
    return t;
}
#pragma GCC pop_options

// Inputs inside each function's domain: (0.1, 0.9), acosh (1, 100).
void fill(const char* fn, std::vector<float>& a, std::vector<double>& ad) {
    std::mt19937 g(1);
    const bool acosh = std::strcmp(fn, "acosh") == 0;
    std::uniform_real_distribution<float> u(acosh ? 1.0f : 0.1f, acosh ? 100.0f : 0.9f);
    for (int i = 0; i < N; ++i) ad[i] = a[i] = u(g);
}

void report(const char* isa, const char* fn, vm::fn f, const timing& t) {
    const vm::table* tab =
        vm::table_for(std::string(isa) == "avx512" ? vm::isa::avx512 : vm::isa::avx2);
    const auto row = [&](const char* type, double s, double m, const vm::source& src) {
        const std::string picked = src.library ? src.library : "-";
        const bool mvec = picked == "libmvec";
        const double other = mvec ? s : m, mine = mvec ? m : s;
        std::printf("%-7s %-6s %-8s %8.3f ms %8.3f ms %6.2f   %-10s%s\n", isa, fn, type, s, m,
                    m / s, picked.c_str(),
                    other < 0.9 * mine ? "   <- the other library is faster here" : "");
    };
    row("float32", t.sleef32, t.mvec32, tab ? tab->src32[static_cast<int>(f)] : vm::source{});
    row("float64", t.sleef64, t.mvec64, tab ? tab->src64[static_cast<int>(f)] : vm::source{});
}

// pow: both libraries beside the build's own loop (Note [float32 pow through double], Note
// [float64 pow in double-double]), which the table holds instead of either.
void report_pow(const char* isa, const timing& t, const std::vector<float>& a,
                const std::vector<double>& ad) {
    const vm::table* tab =
        vm::table_for(std::string(isa) == "avx512" ? vm::isa::avx512 : vm::isa::avx2);
    if (!tab) return;
    const auto own = [&](auto zero, const auto& in) {
        using T = decltype(zero);
        std::vector<T> b(in.rbegin(), in.rend()), out(N);
        char* p[3] = {reinterpret_cast<char*>(out.data()),
                      reinterpret_cast<char*>(const_cast<T*>(in.data())),
                      reinterpret_cast<char*>(b.data())};
        const int64_t s[3] = {sizeof(T), sizeof(T), sizeof(T)};
        const auto loop = sizeof(T) == 4 ? tab->f32[static_cast<int>(vm::fn::pow)]
                                         : tab->f64[static_cast<int>(vm::fn::pow)];
        return best_ms([&] { loop(p, s, N); });
    };
    const double own32 = own(0.0f, a), own64 = own(0.0, ad);
    const auto row = [&](const char* type, double s, double m, double o, const vm::source& src) {
        std::printf("%-7s %-6s %-8s %8.3f ms %8.3f ms %6.2f   %-10s %8.3f ms (%.2fx SLEEF)\n", isa,
                    "pow", type, s, m, m / s, src.library, o, o / s);
    };
    row("float32", t.sleef32, t.mvec32, own32, tab->src32[static_cast<int>(vm::fn::pow)]);
    row("float64", t.sleef64, t.mvec64, own64, tab->src64[static_cast<int>(vm::fn::pow)]);
}

} // namespace

int main() {
    std::vector<float> a(N), o(N);
    std::vector<double> ad(N), od(N);
    const bool has512 = __builtin_cpu_supports("avx512f"),
               has256 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    std::printf("1M elements in the cache, best of 15; ratio = libmvec / SLEEF (below 1: libmvec "
                "faster); picked = this build's table\n");
    std::printf("%-7s %-6s %-8s %11s %11s %6s   %s\n", "set", "fn", "type", "SLEEF", "libmvec",
                "ratio", "picked");
#define ISTHMUS_RUN(FN, U)                                                                         \
    fill(#FN, a, ad);                                                                              \
    if (has512)                                                                                    \
        report("avx512", #FN, vm::fn::FN,                                                          \
               time_512_##FN(a.data(), o.data(), ad.data(), od.data()));                           \
    if (has256)                                                                                    \
        report("avx2", #FN, vm::fn::FN, time_256_##FN(a.data(), o.data(), ad.data(), od.data()));
    ISTHMUS_FUNCTIONS(ISTHMUS_RUN)
    fill("pow", a, ad);
    if (has512) report_pow("avx512", time_512_pow(a.data(), o.data(), ad.data(), od.data()), a, ad);
    if (has256) report_pow("avx2", time_256_pow(a.data(), o.data(), ad.data(), od.data()), a, ad);
    return 0;
}
