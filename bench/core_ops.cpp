// Benchmark of the core CPU ops beside plain single-threaded C++ loops (not a test; prints ratios).
//
// Usage: build/bench/bench_core_ops [--quick]
// Prints GB/s for add and fused multiply-add at 50M float32, sum at 50M float32, GFLOP/s for a
// 2048x2048 float32 matmul, and ns per op at 1k elements (median wall time, and the best thread
// CPU time, which a loaded machine does not inflate). NumPy/PyTorch figures for the same
// machine come from bench/python_ops.py once the Python module exists.
#include <isthmus/isthmus.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

namespace q = isthmus;

namespace {

using clock_type = std::chrono::steady_clock;

/// Median wall time in seconds of `reps` runs of `f` after one warm-up run.
double median_seconds(int reps, const std::function<void()>& f) {
    f();
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
        auto a = clock_type::now();
        f();
        t.push_back(std::chrono::duration<double>(clock_type::now() - a).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

/// The best of `reps` runs of `f` in the calling thread's CPU time, in seconds: on a loaded
/// machine (other builds sharing the cores) wall time counts the time the thread waits for a
/// core, CPU time does not.
double best_cpu_seconds(int reps, const std::function<void()>& f) {
    auto now = [] {
        timespec t{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
    };
    f();
    double best = 1e30;
    for (int i = 0; i < reps; ++i) {
        const double a = now();
        f();
        best = std::min(best, now() - a);
    }
    return best;
}

/// Keeps a value alive so the optimiser cannot drop the loop that made it.
template <typename T>
void keep(const T& v) {
    asm volatile("" : : "g"(&v) : "memory");
}

float* data(const q::tensor& t) {
    return static_cast<float*>(t.lock(q::LOCK_READ, q::MEMRESOURCE_CPU));
}
void done(const q::tensor& t) {
    t.unlock(q::LOCK_READ, q::MEMRESOURCE_CPU);
}

void row(const char* what, const char* unit, double ours, double plain) {
    std::printf("%-34s %10.2f %-7s %10.2f %-7s %6.2fx\n", what, ours, unit, plain, unit,
                ours / plain);
}

} // namespace

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    const int64_t n = quick ? 5'000'000 : 50'000'000;
    const int64_t mm = quick ? 512 : 2048;
    const int reps = quick ? 3 : 7;

    q::manual_seed(1);
    q::tensor a = q::rand({n}, q::dtype::float32);
    q::tensor b = q::rand({n}, q::dtype::float32);
    q::tensor c = q::rand({n}, q::dtype::float32);
    const double mb = static_cast<double>(n) * 4;

    std::printf("isthmus %s core ops bench (%lld float32 elements, %d reps, median)\n",
                q::version(), static_cast<long long>(n), reps);
    std::printf("%-34s %18s %18s %7s\n", "op", "isthmus", "plain loop (1 thr)", "ratio");

    // add: reads 2 arrays, writes 1.
    double t_add = median_seconds(reps, [&] { keep(q::add(a, b)); });
    std::vector<float> out(static_cast<size_t>(n));
    double t_add_plain = median_seconds(reps, [&] {
        float *pa = data(a), *pb = data(b);
        for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = pa[i] + pb[i];
        done(a);
        done(b);
        keep(out);
    });
    row("add (a + b) GB/s", "GB/s", 3 * mb / t_add / 1e9, 3 * mb / t_add_plain / 1e9);

    // in-place add: the kernel alone, no fresh output pages to fault in.
    q::tensor acc = q::copy(a);
    double t_iadd = median_seconds(reps, [&] { acc += b; });
    double t_iadd_plain = median_seconds(reps, [&] {
        float* pb = data(b);
        for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] += pb[i];
        done(b);
        keep(out);
    });
    row("add in place (a += b) GB/s", "GB/s", 3 * mb / t_iadd / 1e9, 3 * mb / t_iadd_plain / 1e9);

    // fused multiply-add: reads 3 arrays, writes 1.
    double t_fma = median_seconds(reps, [&] { keep(q::fma(a, b, c)); });
    double t_fma_plain = median_seconds(reps, [&] {
        float *pa = data(a), *pb = data(b), *pc = data(c);
        for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = pa[i] * pb[i] + pc[i];
        done(a);
        done(b);
        done(c);
        keep(out);
    });
    row("fma (a * b + c) GB/s", "GB/s", 4 * mb / t_fma / 1e9, 4 * mb / t_fma_plain / 1e9);

    // sum: reads 1 array.
    double t_sum = median_seconds(reps, [&] { keep(q::sum(a)); });
    double t_sum_plain = median_seconds(reps, [&] {
        float* pa = data(a);
        double s = 0;
        for (int64_t i = 0; i < n; ++i) s += pa[i];
        done(a);
        keep(s);
    });
    row("sum GB/s", "GB/s", mb / t_sum / 1e9, mb / t_sum_plain / 1e9);

    // matmul.
    q::tensor x = q::rand({mm, mm}, q::dtype::float32);
    q::tensor y = q::rand({mm, mm}, q::dtype::float32);
    const double flops = 2.0 * static_cast<double>(mm) * mm * mm;
    double t_mm = median_seconds(reps, [&] { keep(q::matmul(x, y)); });
    std::vector<float> z(static_cast<size_t>(mm * mm));
    double t_mm_plain = median_seconds(1, [&] {
        float *px = data(x), *py = data(y);
        std::fill(z.begin(), z.end(), 0.0f);
        for (int64_t i = 0; i < mm; ++i)
            for (int64_t k = 0; k < mm; ++k) {
                float v = px[i * mm + k];
                float* zr = &z[static_cast<size_t>(i * mm)];
                const float* yr = py + k * mm;
                for (int64_t j = 0; j < mm; ++j) zr[j] += v * yr[j];
            }
        done(x);
        done(y);
        keep(z);
    });
    char label[64];
    std::snprintf(label, sizeof label, "matmul %lldx%lld GFLOP/s", static_cast<long long>(mm),
                  static_cast<long long>(mm));
    row(label, "GFLOP/s", flops / t_mm / 1e9, flops / t_mm_plain / 1e9);

    // Small ops: latency at 1k elements (no threading, one output allocation).
    q::tensor s1 = q::rand({1000}, q::dtype::float32), s2 = q::rand({1000}, q::dtype::float32);
    const int small_reps = 20000;
    double t_small = median_seconds(5, [&] {
        for (int i = 0; i < small_reps; ++i) keep(q::add(s1, s2));
    });
    std::vector<float> so(1000);
    auto small_plain = [&] {
        for (int i = 0; i < small_reps; ++i) {
            float *p1 = data(s1), *p2 = data(s2);
            for (int j = 0; j < 1000; ++j) so[static_cast<size_t>(j)] = p1[j] + p2[j];
            done(s1);
            done(s2);
            keep(so);
        }
    };
    double t_small_plain = median_seconds(5, small_plain);
    std::printf("%-34s %10.0f %-7s %10.0f %-7s %6.2fx (lower is better)\n", "add 1k elements ns/op",
                t_small / small_reps * 1e9, "ns", t_small_plain / small_reps * 1e9, "ns",
                t_small / t_small_plain);
    // The same in thread CPU time, best of 7 (the figure to compare on a loaded machine).
    const double c_small = best_cpu_seconds(7,
                                            [&] {
                                                for (int i = 0; i < small_reps; ++i)
                                                    keep(q::add(s1, s2));
                                            }) /
                           small_reps;
    const double c_small_plain = best_cpu_seconds(7, small_plain) / small_reps;
    std::printf("%-34s %10.0f %-7s %10.0f %-7s %6.2fx (lower is better)\n",
                "add 1k elements CPU ns/op", c_small * 1e9, "ns", c_small_plain * 1e9, "ns",
                c_small / c_small_plain);
    return 0;
}
