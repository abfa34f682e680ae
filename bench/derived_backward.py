"""Derived backward passes beside hand-written ones, in CPU time of the calling thread, as ratios.

Usage (after a build):  PYTHONPATH=build/python python3 bench/derived_backward.py
Rows: the PyQuasar manual's mapping layer (a clamped 256-entry table lookup) on 1x1000 and
64x1000 float32 inputs: the forward, the hand-written backward (a scatter-add), and the backward
derived from the forward (mapping_forward_vjp, Note [derived backward]); a 3x3 clamped
stencil written as a generic function, forward and derived backward beside a hand-written one;
the same stencil as a generic kernel (Note [derived kernels]), its derived kernel beside a
hand-written backward kernel (atomic adds into the clamped sources), and its forward beside the
same body registered with concrete types (derivation must not slow the forward); the forward
mode of the functions and of the kernel (f_jvp, k_jvp: Note [derived forward mode]) beside their
derived backward. Functions: CPU time of the calling thread; kernels: wall time (they run on every
thread). Best of 7 runs; not a test.
"""
import os
import tempfile
import time

import numpy as np

import isthmus as q
from small_ops_cpu import best_us  # the same clock and method as the small-op table

SRC = r"""
#include <cmath>
namespace ip = isthmus::plugin;

template <typename T>
using table = ip::view<const T, 1, ip::access::clamped>;

template <typename T>
static ip::tensor<T, 2> lookup(table<T> a, ip::view<const T, 2> x) {
    ip::tensor<T, 2> y({x.size(0), x.size(1)});
    for (int64_t m = 0; m < x.size(0); ++m)
        for (int64_t n = 0; n < x.size(1); ++n)
            y(m, n) = a(static_cast<int64_t>(std::floor(ip::value_of(x(m, n)))));
    return y;
}

template <typename T>
static ip::tensor<T, 1> lookup_by_hand(table<T> a, ip::view<const T, 2> x,
                                       ip::view<const T, 2> dy) {
    const int64_t k = a.size(0);
    ip::tensor<T, 1> da({k});
    for (int64_t i = 0; i < k; ++i) da(i) = 0;
    for (int64_t m = 0; m < x.size(0); ++m)
        for (int64_t n = 0; n < x.size(1); ++n) {
            int64_t i = static_cast<int64_t>(std::floor(x(m, n)));
            i = i < 0 ? 0 : (i >= k ? k - 1 : i);
            da(i) += dy(m, n);
        }
    return da;
}

// A 3x3 weighted blur with clamped borders.
template <typename T>
static ip::tensor<T, 2> blur(ip::view<const T, 2, ip::access::clamped> x) {
    ip::tensor<T, 2> y({x.size(0), x.size(1)});
    for (int64_t i = 0; i < x.size(0); ++i)
        for (int64_t j = 0; j < x.size(1); ++j) {
            T s = 0;
            for (int di = -1; di <= 1; ++di)
                for (int dj = -1; dj <= 1; ++dj) s += T(3 * di + dj + 5) * x(i + di, j + dj);
            y(i, j) = s;
        }
    return y;
}

// Its backward by hand: each output's gradient times each weight, into the clamped source.
template <typename T>
static ip::tensor<T, 2> blur_by_hand(ip::view<const T, 2> x, ip::view<const T, 2> dy) {
    const int64_t h = x.size(0), w = x.size(1);
    ip::tensor<T, 2> dx({h, w});
    for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < w; ++j) dx(i, j) = 0;
    for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < w; ++j)
            for (int di = -1; di <= 1; ++di)
                for (int dj = -1; dj <= 1; ++dj) {
                    const int64_t a = std::min(std::max<int64_t>(i + di, 0), h - 1);
                    const int64_t b = std::min(std::max<int64_t>(j + dj, 0), w - 1);
                    dx(a, b) += T(3 * di + dj + 5) * dy(i, j);
                }
    return dx;
}

// The same blur as a kernel (one position per output), its derived and hand-written backward.
template <typename T>
struct blur_kernel {
    void operator()(ip::view<const T, 2, ip::access::clamped> x, ip::view<T, 2> y,
                    ip::ivec2 p) const {
        T s = 0;
        for (int di = -1; di <= 1; ++di)
            for (int dj = -1; dj <= 1; ++dj) s += T(3 * di + dj + 5) * x(p[0] + di, p[1] + dj);
        y(p[0], p[1]) = s;
    }
};

ISTHMUS_PLUGIN(bench_derived, m) {
    m.kernel("bd_blur_kernel",
             ip::generic<float>([]<typename T>() { return blur_kernel<T>{}; }, ip::with_jvp),
             {"x", "y"})
        .stencil({"x"}, 1)
        .at_position({"y"});
    m.kernel("bd_blur_kernel_concrete", blur_kernel<float>{}, {"x", "y"})
        .stencil({"x"}, 1)
        .at_position({"y"});
    m.kernel("bd_blur_kernel_by_hand",
             [](ip::view<const float, 2> dy, ip::view<float, 2> dx, ip::ivec2 p) {
                 const int64_t h = dx.size(0), w = dx.size(1);
                 for (int di = -1; di <= 1; ++di)
                     for (int dj = -1; dj <= 1; ++dj) {
                         const int64_t a = std::min(std::max<int64_t>(p[0] + di, 0), h - 1);
                         const int64_t b = std::min(std::max<int64_t>(p[1] + dj, 0), w - 1);
                         std::atomic_ref<float>(dx(a, b))
                             .fetch_add(float(3 * di + dj + 5) * dy(p[0], p[1]),
                                        std::memory_order_relaxed);
                     }
             },
             {"dy", "dx"})
        .at_position({"dy"});
    m.def("bd_lookup", ip::generic<float>(ISTHMUS_GENERIC(lookup), ip::with_jvp), {"a", "x"});
    m.def("bd_lookup_by_hand", &lookup_by_hand<float>, {"a", "x", "dy"});
    m.def("bd_blur", ip::generic<float>(ISTHMUS_GENERIC(blur), ip::with_jvp), {"x"});
    m.def("bd_blur_by_hand", &blur_by_hand<float>, {"x", "dy"});
}
"""


def best_wall_us(f, inner, reps=7):
    """Best per-call wall time of f over `reps` runs of `inner` calls (kernels use every
    thread), in microseconds."""
    f()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(inner):
            f()
        best = min(best, (time.perf_counter() - t0) / inner)
    return best * 1e6


def main():
    os.environ.setdefault("ISTHMUS_CACHE_DIR", tempfile.mkdtemp(prefix="isthmus-bench-"))
    q.init("cpu")
    q.compile_string("bench_derived", SRC)
    rng = np.random.default_rng(0)
    print(f"{'case':44s} {'forward':>10s} {'by hand':>10s} {'derived':>10s} {'derived/hand':>13s}")
    a = rng.standard_normal(256).astype(np.float32)
    for rows in (1, 64):
        x = np.floor(rng.uniform(-20, 280, (rows, 1000))).astype(np.float32)
        dy = rng.standard_normal((rows, 1000)).astype(np.float32)
        np.testing.assert_allclose(np.asarray(q.bd_lookup_vjp(a, x, dy)[0]),
                                   np.asarray(q.bd_lookup_by_hand(a, x, dy)), rtol=1e-5,
                                   atol=1e-5)
        inner = 2000 if rows == 1 else 50
        fwd = best_us(lambda: q.bd_lookup(a, x), inner=inner)
        hand = best_us(lambda: q.bd_lookup_by_hand(a, x, dy), inner=inner)
        derived = best_us(lambda: q.bd_lookup_vjp(a, x, dy), inner=inner)
        print(f"{f'mapping layer, {rows}x1000 float32 (us)':44s} {fwd:10.1f} {hand:10.1f} "
              f"{derived:10.1f} {derived / hand:12.2f}x")
        da = rng.standard_normal(256).astype(np.float32)
        idx = np.clip(x.astype(np.int64), 0, 255)
        np.testing.assert_array_equal(np.asarray(q.bd_lookup_jvp(a, x, da, x)[1]), da[idx])
        jvp = best_us(lambda: q.bd_lookup_jvp(a, x, da, x), inner=inner)
        print(f"{'  its forward mode (f_jvp)':44s} {jvp:10.1f}{'':>22s}"
              f" jvp/derived backward {jvp / derived:.2f}x")
    for n in (64, 256):
        x = rng.standard_normal((n, n)).astype(np.float32)
        dy = rng.standard_normal((n, n)).astype(np.float32)
        np.testing.assert_allclose(np.asarray(q.bd_blur_vjp(x, dy)[0]),
                                   np.asarray(q.bd_blur_by_hand(x, dy)), rtol=1e-4, atol=1e-3)
        inner = 200 if n == 64 else 10
        fwd = best_us(lambda: q.bd_blur(x), inner=inner)
        hand = best_us(lambda: q.bd_blur_by_hand(x, dy), inner=inner)
        derived = best_us(lambda: q.bd_blur_vjp(x, dy), inner=inner)
        print(f"{f'3x3 clamped blur, {n}x{n} float32 (us)':44s} {fwd:10.1f} {hand:10.1f} "
              f"{derived:10.1f} {derived / hand:12.2f}x")
        dx = rng.standard_normal((n, n)).astype(np.float32)
        np.testing.assert_allclose(np.asarray(q.bd_blur_jvp(x, dx)[1]), np.asarray(q.bd_blur(dx)),
                                   rtol=1e-4, atol=1e-3)  # the blur is linear: J dx = blur(dx)
        jvp = best_us(lambda: q.bd_blur_jvp(x, dx), inner=inner)
        print(f"{'  its forward mode (f_jvp)':44s} {jvp:10.1f}{'':>22s}"
              f" jvp/derived backward {jvp / derived:.2f}x")

    for n in (256, 1024):
        x = rng.standard_normal((n, n)).astype(np.float32)
        y = np.zeros_like(x)
        dy = rng.standard_normal((n, n)).astype(np.float32)
        gx, gh = np.zeros_like(x), np.zeros_like(x)
        q.parallel_do(x.shape, x, y, dy, gx, q.bd_blur_kernel_vjp)
        q.parallel_do(x.shape, dy, gh, q.bd_blur_kernel_by_hand)
        np.testing.assert_allclose(gx, gh, rtol=1e-4, atol=1e-3)
        inner = 20 if n == 256 else 2
        fwd = best_wall_us(lambda: q.parallel_do(x.shape, x, y, q.bd_blur_kernel), inner)
        hand = best_wall_us(lambda: q.parallel_do(x.shape, dy, gh, q.bd_blur_kernel_by_hand),
                            inner)
        derived = best_wall_us(
            lambda: q.parallel_do(x.shape, x, y, dy, gx, q.bd_blur_kernel_vjp), inner)
        print(f"{f'3x3 clamped blur kernel, {n}x{n} float32 (us)':44s} {fwd:10.1f} {hand:10.1f} "
              f"{derived:10.1f} {derived / hand:12.2f}x")
        # the kernel is linear: its forward mode along dx is the kernel applied to dx
        dx, ty, bx = rng.standard_normal((n, n)).astype(np.float32), np.zeros_like(x), \
            np.zeros_like(x)
        q.parallel_do(x.shape, x, y, dx, ty, q.bd_blur_kernel_jvp)
        q.parallel_do(x.shape, dx, bx, q.bd_blur_kernel)
        np.testing.assert_allclose(ty, bx, rtol=1e-4, atol=1e-3)
        jvp = best_wall_us(lambda: q.parallel_do(x.shape, x, y, dx, ty, q.bd_blur_kernel_jvp),
                           inner)
        print(f"{'  its forward mode (k_jvp)':44s} {jvp:10.1f}{'':>22s}"
              f" jvp/derived backward {jvp / derived:.2f}x")
        concrete = best_wall_us(lambda: q.parallel_do(x.shape, x, y, q.bd_blur_kernel_concrete),
                                inner)
        print(f"{'  its forward registered with concrete types':44s} {concrete:10.1f}"
              f"{'':>34s} generic/concrete forward {fwd / concrete:.2f}x")


if __name__ == "__main__":
    main()
