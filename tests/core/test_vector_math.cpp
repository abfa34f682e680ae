// Tests for the vector math loops (SLEEF, libmvec): ulp error against long double, special values.
#include "cpu/vector_math.hpp"
#include "isthmus/ops/elementwise.hpp"
#include "isthmus/tensor.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace isthmus;
namespace vm = isthmus::cpu::vmath;

namespace {

using ld = long double;

// One function under test: its long double reference and the input ranges sampled (uniform in
// value, or in log-magnitude when the range spans more than three decades above 0).
struct fn_case {
    vm::fn f;
    const char* name;
    ld (*ref)(ld);
    std::vector<std::pair<double, double>> ranges;
};

// Note [vector math bounds]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// Each loop carries the bound its library documents (vm::source: SLEEF's _u10 functions 1.0 ulp
// over their whole domain, _u15 1.5, _u35 3.5; libmvec 4; sqrt correctly rounded, 0.5; rsqrt, 1 /
// sqrt, two roundings of a relative 2^-p each, up to 2 ulp near the bottom of a binade). The test
// allows exactly that, measured against glibc's long double functions, which are ~2^11 times finer
// than double's.
const std::vector<fn_case>& unary_cases() {
    static const std::vector<fn_case> c = {
        {vm::fn::exp, "exp", [](ld x) { return expl(x); }, {{-100, 88}, {-1e-3, 1e-3}}},
        {vm::fn::exp2, "exp2", [](ld x) { return exp2l(x); }, {{-140, 127}, {-1e-3, 1e-3}}},
        {vm::fn::log, "log", [](ld x) { return logl(x); }, {{1e-30, 1e30}, {0.5, 2}}},
        {vm::fn::log2, "log2", [](ld x) { return log2l(x); }, {{1e-30, 1e30}, {0.5, 2}}},
        {vm::fn::log10, "log10", [](ld x) { return log10l(x); }, {{1e-30, 1e30}, {0.5, 2}}},
        {vm::fn::expm1, "expm1", [](ld x) { return expm1l(x); }, {{-30, 80}, {-1e-5, 1e-5}}},
        {vm::fn::log1p, "log1p", [](ld x) { return log1pl(x); }, {{-0.999, 1e20}, {-1e-5, 1e-5}}},
        {vm::fn::sqrt, "sqrt", [](ld x) { return sqrtl(x); }, {{0, 1e30}, {1e-30, 1}}},
        {vm::fn::rsqrt, "rsqrt", [](ld x) { return 1 / sqrtl(x); }, {{1e-30, 1e30}}},
        {vm::fn::cbrt, "cbrt", [](ld x) { return cbrtl(x); }, {{1e-30, 1e30}, {-10, 10}}},
        {vm::fn::sin, "sin", [](ld x) { return sinl(x); }, {{-10, 10}, {-1e4, 1e4}, {-1e-4, 1e-4}}},
        {vm::fn::cos, "cos", [](ld x) { return cosl(x); }, {{-10, 10}, {-1e4, 1e4}}},
        {vm::fn::tan, "tan", [](ld x) { return tanl(x); }, {{-10, 10}, {-1e4, 1e4}}},
        {vm::fn::asin, "asin", [](ld x) { return asinl(x); }, {{-1, 1}, {-1e-4, 1e-4}}},
        {vm::fn::acos, "acos", [](ld x) { return acosl(x); }, {{-1, 1}}},
        {vm::fn::atan, "atan", [](ld x) { return atanl(x); }, {{-10, 10}, {-1e10, 1e10}}},
        {vm::fn::sinh, "sinh", [](ld x) { return sinhl(x); }, {{-80, 80}, {-1e-3, 1e-3}}},
        {vm::fn::cosh, "cosh", [](ld x) { return coshl(x); }, {{-80, 80}}},
        {vm::fn::tanh, "tanh", [](ld x) { return tanhl(x); }, {{-20, 20}, {-1e-3, 1e-3}}},
        {vm::fn::asinh, "asinh", [](ld x) { return asinhl(x); }, {{1e-5, 1e30}, {-10, 10}}},
        {vm::fn::acosh, "acosh", [](ld x) { return acoshl(x); }, {{1, 1e30}, {1, 2}}},
        {vm::fn::atanh, "atanh", [](ld x) { return atanhl(x); }, {{-1, 1}, {-1e-4, 1e-4}}},
        {vm::fn::erf, "erf", [](ld x) { return erfl(x); }, {{-6, 6}, {-1e-4, 1e-4}}},
        {vm::fn::erfc, "erfc", [](ld x) { return erfcl(x); }, {{-6, 9}, {-1e-4, 1e-4}}},
    };
    return c;
}

// The source (library and documented bound) of `f` on T in table `t`.
template <class T>
vm::source source_of(const vm::table& t, vm::fn f) {
    return sizeof(T) == 4 ? t.src32[static_cast<int>(f)] : t.src64[static_cast<int>(f)];
}

// The spacing of T at |x| (the ulp the error is measured in); the smallest denormal at 0.
template <class T>
ld ulp_at(ld x) {
    const T t = static_cast<T>(std::fabs(x));
    if (std::isinf(t))
        return std::numeric_limits<T>::max() - std::nextafter(std::numeric_limits<T>::max(), T(0));
    return static_cast<ld>(std::nextafter(t, std::numeric_limits<T>::infinity())) - t;
}

template <class T>
std::vector<T> run_unary(cpu::loop_fn loop, const std::vector<T>& in) {
    std::vector<T> out(in.size());
    char* p[2] = {reinterpret_cast<char*>(out.data()),
                  const_cast<char*>(reinterpret_cast<const char*>(in.data()))};
    const int64_t s[2] = {sizeof(T), sizeof(T)};
    loop(p, s, static_cast<int64_t>(in.size()));
    return out;
}

template <class T>
std::vector<T> run_binary(cpu::loop_fn loop, const std::vector<T>& a, const std::vector<T>& b) {
    std::vector<T> out(a.size());
    char* p[3] = {reinterpret_cast<char*>(out.data()),
                  const_cast<char*>(reinterpret_cast<const char*>(a.data())),
                  const_cast<char*>(reinterpret_cast<const char*>(b.data()))};
    const int64_t s[3] = {sizeof(T), sizeof(T), sizeof(T)};
    loop(p, s, static_cast<int64_t>(a.size()));
    return out;
}

// Random inputs of T in [lo, hi]: uniform, or uniform in log-magnitude when the range spans
// more than three decades on one side of 0.
template <class T>
std::vector<T> sample(std::mt19937_64& rng, double lo, double hi, size_t n) {
    std::vector<T> v(n);
    const bool log_scale = lo > 0 && hi / lo > 1e3;
    std::uniform_real_distribution<double> u(log_scale ? std::log(lo) : lo,
                                             log_scale ? std::log(hi) : hi);
    for (auto& x : v) x = static_cast<T>(log_scale ? std::exp(u(rng)) : u(rng));
    return v;
}

// The ulp error of `got` for the exact value `ref`; 0 when both are the same inf or NaN.
template <class T>
double ulp_error(T got, ld ref) {
    if (std::isnan(ref)) return std::isnan(got) ? 0 : 1e9;
    const T r = static_cast<T>(ref); // the correctly rounded result
    if (std::isinf(r) || std::isinf(got)) {
        if (got == r) return 0;
        // an overflow boundary: the exact value within an ulp of max still counts as 1 ulp
        const ld e = std::fabs(
            static_cast<ld>(std::isinf(got) ? std::copysign(std::numeric_limits<T>::max(), got)
                                            : got) -
            ref);
        return static_cast<double>(e / ulp_at<T>(std::numeric_limits<T>::max())) +
               (std::isinf(got) ? 1 : 0);
    }
    return static_cast<double>(std::fabs(static_cast<ld>(got) - ref) / ulp_at<T>(ref));
}

template <class T>
void check_accuracy(const vm::table& t, const char* isa) {
    std::mt19937_64 rng(20261125);
    for (const fn_case& c : unary_cases()) {
        const cpu::loop_fn loop =
            sizeof(T) == 4 ? t.f32[static_cast<int>(c.f)] : t.f64[static_cast<int>(c.f)];
        REQUIRE(static_cast<bool>(loop));
        double worst = 0;
        T worst_at = 0;
        for (auto [lo, hi] : c.ranges) {
            auto in = sample<T>(rng, lo, hi, 20000);
            if (lo < 0 && hi > 0) { // the mirror of a log-scaled positive range
                auto neg = sample<T>(rng, 0, hi, 2000);
                in.insert(in.end(), neg.begin(), neg.end());
            }
            const auto out = run_unary<T>(loop, in);
            for (size_t i = 0; i < in.size(); ++i) {
                const double e = ulp_error<T>(out[i], c.ref(static_cast<ld>(in[i])));
                if (e > worst) {
                    worst = e;
                    worst_at = in[i];
                }
            }
        }
        const vm::source src = source_of<T>(t, c.f);
        INFO(std::string(isa), " ", std::string(c.name), (sizeof(T) == 4 ? " float32" : " float64"),
             " (", std::string(src.library), "): worst ", worst, " ulp at ", double(worst_at));
        CHECK(worst <= src.bound_ulp + 1e-9);
        if (std::getenv("ISTHMUS_VMATH_REPORT"))
            std::printf("%s %s %s %s bound %.1f worst %.2f\n", isa, c.name,
                        sizeof(T) == 4 ? "float32" : "float64", src.library, src.bound_ulp, worst);
    }
}

// Special values: NaN in, NaN out; infinities, signed zeros and denormals as C99's functions
// (the double-precision libm result rounded to T, which is exact for these).
template <class T>
void check_special(const vm::table& t, const char* isa) {
    constexpr T inf = std::numeric_limits<T>::infinity();
    const std::vector<T> in = {T(0),
                               -T(0),
                               inf,
                               -inf,
                               std::numeric_limits<T>::quiet_NaN(),
                               std::numeric_limits<T>::denorm_min(),
                               -std::numeric_limits<T>::denorm_min(),
                               std::numeric_limits<T>::min(),
                               std::numeric_limits<T>::max(),
                               -std::numeric_limits<T>::max(),
                               T(1),
                               T(-1)};
    for (const fn_case& c : unary_cases()) {
        const cpu::loop_fn loop =
            sizeof(T) == 4 ? t.f32[static_cast<int>(c.f)] : t.f64[static_cast<int>(c.f)];
        const auto out = run_unary<T>(loop, in);
        for (size_t i = 0; i < in.size(); ++i) {
            const ld ref = c.ref(static_cast<ld>(in[i]));
            INFO(std::string(isa), " ", std::string(c.name),
                 (sizeof(T) == 4 ? " float32" : " float64"), "(", double(in[i]),
                 ") = ", double(out[i]), ", expected ", double(ref));
            if (std::isnan(ref)) {
                CHECK(std::isnan(out[i]));
            } else if (std::isinf(ref) || ref == 0) {
                CHECK(out[i] == static_cast<T>(ref));
                CHECK(std::signbit(out[i]) == std::signbit(ref));
            } else {
                CHECK(ulp_error<T>(out[i], ref) <= source_of<T>(t, c.f).bound_ulp + 1e-9);
            }
        }
    }
}

// pow's C99 Annex F cases: each result as std::pow's (glibc's), NaN for NaN, signs of zeros.
template <class T>
void check_pow_special(cpu::loop_fn pow_loop, const std::vector<T>& pa, const std::vector<T>& pb) {
    const auto pr = run_binary<T>(pow_loop, pa, pb);
    for (size_t i = 0; i < pa.size(); ++i) {
        const T ref = std::pow(pa[i], pb[i]);
        INFO("pow(", pa[i], ", ", pb[i], ") = ", pr[i], ", expected ", ref);
        if (std::isnan(ref))
            CHECK(std::isnan(pr[i]));
        else
            CHECK((pr[i] == ref && std::signbit(pr[i]) == std::signbit(ref)));
    }
}

// Lanes the fast path does not take (every fifth base replaced by `odd(base, i)`) change
// nothing for the others, and get pow's result themselves (lane by lane: Note [vector math]).
template <class T, class Odd>
void check_pow_lanes(cpu::loop_fn pow_loop, Odd odd) {
    std::vector<T> a(64), b(64);
    for (size_t i = 0; i < a.size(); ++i) {
        a[i] = T(0.25) + T(0.37) * static_cast<T>(i);
        b[i] = T(-3.3) + T(0.21) * static_cast<T>(i);
    }
    const auto clean = run_binary<T>(pow_loop, a, b);
    auto a2 = a;
    for (size_t i = 0; i < a2.size(); i += 5) a2[i] = odd(a2[i], i);
    const auto mixed = run_binary<T>(pow_loop, a2, b);
    for (size_t i = 0; i < a.size(); ++i) {
        INFO("lane ", i);
        if (i % 5 == 0)
            CHECK(ulp_error<T>(mixed[i], powl(a2[i], b[i])) <= 1.0);
        else
            CHECK(std::memcmp(&mixed[i], &clean[i], sizeof(T)) == 0);
    }
}

// The sets this CPU runs (at least "none" always exists, with no table).
std::vector<std::pair<vm::isa, const vm::table*>> tables() {
    std::vector<std::pair<vm::isa, const vm::table*>> r;
    for (vm::isa s : {vm::isa::avx2, vm::isa::avx512})
        if (const vm::table* t = vm::table_for(s)) r.emplace_back(s, t);
    return r;
}

} // namespace

TEST_CASE("vector math: ulp error within the documented bound on float32 and float64") {
    const auto ts = tables();
    if (ts.empty()) MESSAGE("no vector math on this CPU or build: the libm loops run instead");
    for (const auto& entry : ts) {
        const auto s = entry.first;  // plain names: clang's OpenMP cannot capture
        const auto t = entry.second; // structured bindings (INFO, CAPTURE)
        check_accuracy<float>(*t, vm::name(s));
        check_accuracy<double>(*t, vm::name(s));
    }
}

TEST_CASE("vector math: special values (NaN, infinities, signed zeros, denormals)") {
    for (const auto& entry : tables()) {
        const auto s = entry.first;  // plain names: clang's OpenMP cannot capture
        const auto t = entry.second; // structured bindings (INFO, CAPTURE)
        check_special<float>(*t, vm::name(s));
        check_special<double>(*t, vm::name(s));
    }
}

TEST_CASE("vector math: atan2 and pow against long double, with C99's special cases") {
    std::mt19937_64 rng(7);
    for (const auto& entry : tables()) {
        const auto s = entry.first;  // plain names: clang's OpenMP cannot capture
        const auto t = entry.second; // structured bindings (INFO, CAPTURE)
        auto a = sample<double>(rng, -100, 100, 20000), b = sample<double>(rng, -100, 100, 20000);
        const auto at = run_binary<double>(t->f64[static_cast<int>(vm::fn::atan2)], a, b);
        double worst = 0;
        for (size_t i = 0; i < a.size(); ++i)
            worst = std::max(worst, ulp_error<double>(at[i], atan2l(a[i], b[i])));
        INFO(std::string(vm::name(s)), " atan2 float64 worst ", worst);
        CHECK(worst <= source_of<double>(*t, vm::fn::atan2).bound_ulp);
        // pow: positive bases over a range that neither overflows nor underflows
        auto x = sample<float>(rng, 1e-3, 1e3, 20000), y = sample<float>(rng, -10, 10, 20000);
        const auto pw = run_binary<float>(t->f32[static_cast<int>(vm::fn::pow)], x, y);
        worst = 0;
        for (size_t i = 0; i < x.size(); ++i)
            worst = std::max(worst, ulp_error<float>(pw[i], powl(x[i], y[i])));
        INFO(std::string(vm::name(s)), " pow float32 worst ", worst);
        CHECK(worst <= source_of<float>(*t, vm::fn::pow).bound_ulp);
        // C99 Annex F cases NumPy users meet
        const double inf = INFINITY, nan = NAN;
        const std::vector<double> pa = {1, nan, -8, 0, -0.0, -1, 2, 0.5, -inf, 3};
        const std::vector<double> pb = {nan, 0, 1.0 / 3, -1, -3, inf, -inf, inf, 3, 2};
        INFO(std::string(vm::name(s)));
        check_pow_special<double>(t->f64[static_cast<int>(vm::fn::pow)], pa, pb);
        const std::vector<double> ya = {0.0, -0.0, 0.0, -0.0, 1, -1, inf, -inf, nan};
        const std::vector<double> xa = {0.0, 0.0, -0.0, -0.0, inf, -inf, inf, -inf, 1};
        const auto ar = run_binary<double>(t->f64[static_cast<int>(vm::fn::atan2)], ya, xa);
        for (size_t i = 0; i < ya.size(); ++i) {
            const double ref = std::atan2(ya[i], xa[i]);
            INFO(std::string(vm::name(s)), " atan2(", ya[i], ", ", xa[i], ") = ", ar[i],
                 ", expected ", ref);
            if (std::isnan(ref))
                CHECK(std::isnan(ar[i]));
            else
                CHECK((ar[i] == ref && std::signbit(ar[i]) == std::signbit(ref)));
        }
    }
}

TEST_CASE("vector math: an element's result is the same for any layout, length and thread count") {
    for (const auto& entry : tables()) {
        const auto s = entry.first;  // plain names: clang's OpenMP cannot capture
        const auto t = entry.second; // structured bindings (INFO, CAPTURE)
        std::mt19937_64 rng(3);
        const auto base = sample<float>(rng, -5, 5, 1000);
        const cpu::loop_fn loop = t->f32[static_cast<int>(vm::fn::exp)];
        const auto whole = run_unary<float>(loop, base);
        // every length (tails of every size), and every start offset
        for (size_t n = 0; n <= 40; ++n)
            for (size_t at : {size_t{0}, size_t{3}, size_t{17}}) {
                const std::vector<float> part(base.begin() + at, base.begin() + at + n);
                const auto got = run_unary<float>(loop, part);
                CHECK(std::equal(
                    got.begin(), got.end(), whole.begin() + static_cast<long>(at),
                    [](float x, float y) { return std::memcmp(&x, &y, sizeof x) == 0; }));
            }
        // strided input and output
        std::vector<float> out(2 * base.size());
        char* p[2] = {reinterpret_cast<char*>(out.data()),
                      const_cast<char*>(reinterpret_cast<const char*>(base.data()))};
        const int64_t st[2] = {2 * sizeof(float), sizeof(float)};
        loop(p, st, static_cast<int64_t>(base.size()));
        for (size_t i = 0; i < base.size(); ++i) CHECK(out[2 * i] == whole[i]);
        MESSAGE(std::string(vm::name(s)), ": layouts agree");
    }
    // Through the op layer, on 1 and 2 threads.
    std::mt19937_64 rng(5);
    const auto v = sample<double>(rng, -30, 30, 300001);
    const tensor x = tensor::from_vector(v);
    threads_guard guard;
    std::vector<std::vector<double>> runs;
    for (int threads : {1, 2}) {
        omp_set_num_threads(threads);
        runs.push_back(unary(unary_op::tanh, x).to_vector<double>());
    }
    CHECK(std::memcmp(runs[0].data(), runs[1].data(), v.size() * sizeof(double)) == 0);
}

TEST_CASE("vector math: ISTHMUS_SIMD names the active set") {
    const vm::isa a = vm::active();
    CHECK(std::string(vm::name(a)).size() > 0);
    // the active set's table is the one the kernels use
    if (a != vm::isa::none) {
        CHECK(vm::table_for(a) != nullptr);
        CHECK(
            (vm::loop(vm::fn::exp, false) == vm::table_for(a)->f32[static_cast<int>(vm::fn::exp)]));
    } else {
        CHECK((vm::loop(vm::fn::exp, false) == nullptr));
    }
}

TEST_CASE("vector math: every function has a loop and a source with its library's bound") {
    // the cases above cover every unary function of the table
    std::vector<bool> covered(vm::fn_count, false);
    for (const fn_case& c : unary_cases()) covered[static_cast<int>(c.f)] = true;
    for (int f = 0; f < static_cast<int>(vm::fn::atan2); ++f) CHECK(covered[f]);
    const auto documented = [](const vm::source& s) {
        const std::string lib = s.library ? s.library : "";
        if (lib == "sleef_u10") return s.bound_ulp == 1.0;
        if (lib == "sleef_u15") return s.bound_ulp == 1.5;
        if (lib == "sleef_u35") return s.bound_ulp == 3.5;
        if (lib == "libmvec") return s.bound_ulp == 4.0;
        if (lib == "instruction") return s.bound_ulp == 0.5 || s.bound_ulp == 2.0;
        if (lib == "float64") return s.bound_ulp == 1.0; // Note [float32 pow through double]
        // See Note [float64 pow in double-double].
        if (lib == "double-double") return s.bound_ulp == 1.0;
        return false;
    };
    for (const auto& entry : tables()) {
        const auto s = entry.first; // plain names for INFO (see above)
        const auto t = entry.second;
        for (int f = 0; f < vm::fn_count; ++f) {
            INFO(vm::name(s), " function #", f);
            CHECK(static_cast<bool>(t->f32[f]));
            CHECK(static_cast<bool>(t->f64[f]));
            CHECK(documented(t->src32[f]));
            CHECK(documented(t->src64[f]));
        }
    }
}

TEST_CASE("vector math: float32 pow through double (Note [float32 pow through double])") {
    std::mt19937_64 rng(11);
    const float inf = INFINITY, nan = NAN;
    for (const auto& entry : tables()) {
        const auto s = entry.first;  // plain names: clang's OpenMP cannot capture
        const auto t = entry.second; // structured bindings (INFO, CAPTURE)
        const cpu::loop_fn pow32 = t->f32[static_cast<int>(vm::fn::pow)];
        INFO(vm::name(s));
        // correctly rounded in practice: bases over the whole float range, exponents that take
        // results through overflow, underflow and the denormals
        auto x = sample<float>(rng, 1e-38, 3e38, 40000), y = sample<float>(rng, -12, 12, 40000);
        const auto pw = run_binary<float>(pow32, x, y);
        double worst = 0;
        for (size_t i = 0; i < x.size(); ++i)
            worst = std::max(worst, ulp_error<float>(pw[i], powl(x[i], y[i])));
        CHECK(worst <= 0.5 + 1e-3);
        // exact results stay exact
        const std::vector<float> ea = {3, 2, 4, 10, 0.5f, 7, 1, 9, 1e-20f, 2};
        const std::vector<float> eb = {-1, 10, 0.5f, 3, -3, 2, 1e30f, 1.5f, -1, -149};
        const auto er = run_binary<float>(pow32, ea, eb);
        for (size_t i = 0; i < ea.size(); ++i) {
            INFO("pow(", ea[i], ", ", eb[i], ") = ", er[i]);
            CHECK(er[i] == static_cast<float>(powl(ea[i], eb[i])));
        }
        // C99 Annex F special cases, as glibc's powf
        const std::vector<float> pa = {1,    nan, -8, 0,    -0.0f, -1,    2,     0.5f,
                                       -inf, 3,   -2, -2,   -0.0f, 0,     inf,   -inf,
                                       nan,  1,   -1, 0.5f, 2,     -0.5f, 1e30f, 1e-30f};
        const std::vector<float> pb = {nan, 0,   1.0f / 3, -1,   -3,  inf,  -inf,  inf,
                                       3,   2,   3,        2.5f, 3,   -2,   -0.5f, -3,
                                       1,   inf, -inf,     -inf, 200, 1e9f, 2,     -2};
        check_pow_special<float>(pow32, pa, pb);
        // a negative base (NaN: SLEEF's lanes) beside ordinary ones
        check_pow_lanes<float>(pow32, [](float base, size_t) { return -base; });
    }
}

TEST_CASE("vector math: float64 pow in double-double (Note [float64 pow in double-double])") {
    std::mt19937_64 rng(13);
    const double inf = INFINITY, nan = NAN;
    for (const auto& entry : tables()) {
        const auto s = entry.first;  // plain names: clang's OpenMP cannot capture
        const auto t = entry.second; // structured bindings (INFO, CAPTURE)
        const cpu::loop_fn pow64 = t->f64[static_cast<int>(vm::fn::pow)];
        CHECK(std::string(t->src64[static_cast<int>(vm::fn::pow)].library) == "double-double");
        INFO(vm::name(s));
        // The worst error against powl over x and y, and the x, y where it is.
        const auto worst_of = [&](const std::vector<double>& x, const std::vector<double>& y) {
            const auto got = run_binary<double>(pow64, x, y);
            double worst = 0;
            size_t at = 0;
            for (size_t i = 0; i < x.size(); ++i) {
                const double e = ulp_error<double>(got[i], powl(x[i], y[i]));
                if (e > worst) worst = e, at = i;
            }
            INFO("worst ", worst, " ulp at pow(", x[at], ", ", y[at], ") = ", got[at]);
            return worst;
        };
        // bases over the whole normal range, exponents that keep the result normal: the
        // kernel's lanes, nearly correctly rounded (0.5 + ~0.04 ulp)
        auto x = sample<double>(rng, 1e-300, 1e300, 40000);
        std::vector<double> y(x.size());
        std::uniform_real_distribution<double> u(-700, 700), v(-60, 60);
        for (size_t i = 0; i < x.size(); ++i)
            y[i] = std::fabs(std::log(x[i])) > 1e-3 ? u(rng) / std::log(x[i]) : v(rng);
        CHECK(worst_of(x, y) <= 0.6);
        // bases within 3% of 1 and exponents in the tens of thousands (y log x up to 700):
        // where the double-double log earns its keep
        auto x1 = sample<double>(rng, 0.97, 1.03, 40000);
        std::vector<double> y1(x1.size());
        for (size_t i = 0; i < x1.size(); ++i) y1[i] = x1[i] == 1 ? 1e6 : u(rng) / std::log(x1[i]);
        CHECK(worst_of(x1, y1) <= 0.6);
        // ordinary data: x in (0.01, 100), y in (-50, 50)
        CHECK(worst_of(sample<double>(rng, 0.01, 100, 40000),
                       sample<double>(rng, -50, 50, 40000)) <= 0.6);
        // the lanes SLEEF answers: results near overflow, in the denormals, underflow to 0
        const std::vector<double> sx = {2, 2, 10, 0.5, 3, 1e-300, 1.0000001, 7};
        const std::vector<double> sy = {1023.9, -1074, 308.2, 1075, -700, 1.05, 1e10, 364.8};
        CHECK(worst_of(sx, sy) <= t->src64[static_cast<int>(vm::fn::pow)].bound_ulp);
        // results that are doubles come out exactly
        const std::vector<double> ea = {2, 10, 4, 9, 3, 10, 1.5, 7, 2, 2, 1e10, 0.5, 1, 5, 2};
        const std::vector<double> eb = {10,    2,    0.5, 1.5, -1,    -2, 2,  3,
                                        -1022, 1023, 0.5, -3,  1e300, 0,  0.5};
        const auto er = run_binary<double>(pow64, ea, eb);
        for (size_t i = 0; i < ea.size(); ++i) {
            INFO("pow(", ea[i], ", ", eb[i], ") = ", er[i]);
            CHECK(er[i] == std::pow(ea[i], eb[i]));
        }
        // C99 Annex F cases, as glibc's pow (the lanes SLEEF answers)
        const std::vector<double> pa = {1,   nan, -8,    0,        -0.0, -1,   2,   0.5, -inf,
                                        -2,  -2,  -0.0,  0,        inf,  inf,  nan, 1,   -1,
                                        0.5, 2,   1e300, 4.9e-324, -8,   -inf, 0};
        const std::vector<double> pb = {nan,  0,    1.0 / 3, -1,  -3,   inf, -inf, inf, 3,
                                        3,    2.5,  3,       -2,  -0.5, 2,   1,    inf, -inf,
                                        -inf, 2000, 2,       0.5, 3,    -3,  0};
        check_pow_special<double>(pow64, pa, pb);
        // negative and denormal bases (SLEEF's lanes) beside the kernel's
        check_pow_lanes<double>(pow64,
                                [](double base, size_t i) { return i % 2 ? -base : 1e-310; });
    }
}

namespace {

// loop(a, b) with b one scalar broadcast over the row (stride 0), as `x ** 2.0` runs.
template <class T>
std::vector<T> run_binary_scalar_b(cpu::loop_fn loop, const std::vector<T>& a, T b) {
    std::vector<T> out(a.size());
    char* p[3] = {reinterpret_cast<char*>(out.data()),
                  const_cast<char*>(reinterpret_cast<const char*>(a.data())),
                  reinterpret_cast<char*>(&b)};
    const int64_t s[3] = {sizeof(T), sizeof(T), 0};
    loop(p, s, static_cast<int64_t>(a.size()));
    return out;
}

bool same_bits(double a, double b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}
bool same_bits(float a, float b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}

// See Note [pow by small exponents]: a scalar exponent with a shortcut, an array of the same
// exponent and the same exponent among other lanes give the same bits; the results are
// correctly rounded (float64 x^3 within 0.5 ulp + 2^-9 of long double's), with C99's values
// for zeros, infinities, NaN and negative bases.
template <class T>
void check_pow_shortcuts(cpu::loop_fn pow_loop, std::mt19937_64& rng) {
    const T inf = std::numeric_limits<T>::infinity();
    auto x = sample<T>(rng, -50, 50, 3001);
    const auto wide = sample<T>(rng, T(1e-30), T(1e30), 3001);
    x.insert(x.end(), wide.begin(), wide.end());
    for (T v : {T(0), -T(0), inf, -inf, std::numeric_limits<T>::quiet_NaN(), T(1), T(-1), T(-8),
                std::numeric_limits<T>::denorm_min(), std::numeric_limits<T>::max(),
                -std::numeric_limits<T>::max(), std::numeric_limits<T>::min()})
        x.push_back(v);
    std::vector<T> exps = {2, 3, -1, T(0.5)};
    if (sizeof(T) == 4) exps.insert(exps.end(), {T(-2), T(-0.5)});
    for (T e : exps) {
        INFO("exponent ", e, (sizeof(T) == 4 ? " float32" : " float64"));
        const auto scalar = run_binary_scalar_b<T>(pow_loop, x, e);
        const auto array = run_binary<T>(pow_loop, x, std::vector<T>(x.size(), e));
        std::vector<T> mixed_b(x.size());
        for (size_t i = 0; i < x.size(); ++i) mixed_b[i] = i % 3 ? e : T(1.7);
        const auto mixed = run_binary<T>(pow_loop, x, mixed_b);
        for (size_t i = 0; i < x.size(); ++i) {
            INFO("pow(", x[i], ", ", e, ") = ", scalar[i]);
            CHECK(same_bits(scalar[i], array[i]));
            if (i % 3) CHECK(same_bits(scalar[i], mixed[i]));
            const T ref = std::pow(x[i], e); // glibc: correctly rounded for these
            if (std::isnan(ref)) {
                CHECK(std::isnan(scalar[i]));
            } else if (std::isinf(ref) || ref == 0) {
                CHECK((scalar[i] == ref && std::signbit(scalar[i]) == std::signbit(ref)));
            } else {
                const ld exact = powl(static_cast<ld>(x[i]), static_cast<ld>(e));
                const bool two_roundings = sizeof(T) == 4 && e == T(-0.5);
                CHECK(ulp_error<T>(scalar[i], exact) <= (two_roundings ? 0.5 + 1e-6 : 0.5 + 2e-3));
            }
        }
    }
}

} // namespace

TEST_CASE("vector math: pow by small exponents (Note [pow by small exponents])") {
    std::mt19937_64 rng(17);
    for (const auto& entry : tables()) {
        const auto s = entry.first;  // plain names: clang's OpenMP cannot capture
        const auto t = entry.second; // structured bindings (INFO, CAPTURE)
        INFO(vm::name(s));
        check_pow_shortcuts<float>(t->f32[static_cast<int>(vm::fn::pow)], rng);
        check_pow_shortcuts<double>(t->f64[static_cast<int>(vm::fn::pow)], rng);
    }
}
