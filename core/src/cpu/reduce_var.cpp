// CPU var/std: result dtypes, the one-pass blocked variance reduction, and the older helpers
// (squared deviations from a given mean, the final sqrt).

// Note [no contraction in var]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// GCC contracts a * b + c into an FMA where the target has one (an AVX-512 or FMA clone would, the
// baseline and AVX2 ones do not), which would make the clones' results differ
// (Note [reduction clones]). Set before any include so every function of this file has it.
#pragma GCC optimize("fp-contract=off")

#include "cpu/convert.hpp"
#include "cpu/reduce.hpp"
#include "cpu/reduce_engine.hpp"
#include "cpu/strided_loop.hpp"
#include "ops/reduce_types.hpp"

#include <cmath>
#include <cstring>
#include <type_traits>

namespace isthmus::cpu {

namespace {

// |x - m|^2 for one element, in the mean's precision, rounded to W.
template <typename W, typename M, typename T>
W squared(T x, M m) {
    if constexpr (is_complex_v<M>) {
        const M d = convert<M>(x) - m;
        return static_cast<W>(d.real() * d.real() + d.imag() * d.imag());
    } else {
        using R = std::conditional_t<is_half_v<M>, float, M>;
        const R d = convert<R>(x) - static_cast<R>(m);
        return static_cast<W>(d * d);
    }
}

template <typename T>
void squared_deviation_as(const tensor& dev, void* dev_data, const tensor& x, const void* x_data,
                          const tensor& m, const void* m_data) {
    // M: the mean's C++ type (float64 for integers), W: the work type of the squares.
    using M = std::conditional_t<std::is_integral_v<T>, double, T>;
    using W = std::conditional_t<std::is_same_v<M, double> || std::is_same_v<M, complex128_t>,
                                 double, float>;
    ISTHMUS_ASSERT(dev.dtype() == dtype_of_v<W> && m.dtype() == dtype_of_v<M>);
    std::array<char*, 3> base{static_cast<char*>(dev_data),
                              const_cast<char*>(static_cast<const char*>(x_data)),
                              const_cast<char*>(static_cast<const char*>(m_data))};
    for_each<3>(x.shape(), {&dev, &x, &m}, base, [](char** p, const int64_t* s, int64_t n) {
        auto* d = reinterpret_cast<W*>(p[0]);
        if (s[0] == sizeof(W) && s[1] == sizeof(T)) {
            const auto* a = reinterpret_cast<const T*>(p[1]);
            if (s[2] == 0) {
                const M mv = *reinterpret_cast<const M*>(p[2]);
                for (int64_t i = 0; i < n; ++i) d[i] = squared<W>(a[i], mv);
                return;
            }
            if (s[2] == sizeof(M)) {
                const auto* mv = reinterpret_cast<const M*>(p[2]);
                for (int64_t i = 0; i < n; ++i) d[i] = squared<W>(a[i], mv[i]);
                return;
            }
        }
        for (int64_t i = 0; i < n; ++i)
            *reinterpret_cast<W*>(p[0] + i * s[0]) =
                squared<W>(*reinterpret_cast<const T*>(p[1] + i * s[1]),
                           *reinterpret_cast<const M*>(p[2] + i * s[2]));
    });
}

// Note [blocked variance]
// ~~~~~~~~~~~~~~~~~~~~~~~
// var/std read their input once. A run of contiguous elements is cut into blocks of `var_block`
// elements (a fixed blocking, independent of the thread count); each block, small enough to stay in
// L1, gets an exact two-pass treatment in double precision (its mean from lane sums, then the lane
// sums of squared deviations from that mean), and the blocks' (count, mean, M2) merge with Chan et
// al.'s update
//   n = na + nb, d = mb - ma, mean = ma + d nb / n, M2 = M2a + M2b + d^2 na nb / n.
// Pieces of the input merge the same way (Note [parallel pieces]), so the result is
// bit-identical on any number of threads. Single elements (strided fallbacks) take Welford's
// update. Compared with NumPy's three passes (mean, deviations to a temporary, their sum) in
// the input precision this is one read of the input and no temporary, and as accurate as the
// two-pass float64 formula. Column reductions (a kept dimension innermost) do the same per
// block of rows, with per-column sums (var_op::accumulate_rows).
inline constexpr int64_t var_block = 1024;

// Count, mean and sum of squared deviations of a set of values; M is double or complex128_t.
template <typename M>
struct moments {
    double n;
    M mean;
    double m2;
};

template <typename M>
ISTHMUS_REDUCE_INLINE double sq_norm(M d) {
    if constexpr (is_complex_v<M>)
        return d.real() * d.real() + d.imag() * d.imag();
    else
        return d * d;
}

template <typename M>
ISTHMUS_REDUCE_INLINE moments<M> merge(const moments<M>& a, const moments<M>& b) {
    if (b.n == 0) return a;
    if (a.n == 0) return b;
    const double n = a.n + b.n;
    const M d = b.mean - a.mean;
    return {n, a.mean + d * (b.n / n), a.m2 + b.m2 + sq_norm(d) * (a.n / n * b.n)};
}

// The real scalars of x (complex: real and imaginary parts interleaved) as double.
template <typename T>
struct part_of {
    using type = T;
};
template <typename R>
struct part_of<std::complex<R>> {
    using type = R;
};
template <typename T>
using part_t = typename part_of<T>::type;
template <typename T>
inline constexpr int parts = is_complex_v<T> ? 2 : 1;

// Moments of the n elements of one block (n <= var_block), two passes in double over lanes
// (Note [lane reduction]); complex elements are `parts` interleaved reals, their lanes of
// even and odd index hold real and imaginary parts.
template <typename T, typename M>
ISTHMUS_REDUCE_INLINE moments<M> block_moments(const T* x, int64_t n) {
    using P = part_t<T>;
    constexpr int W = lane_count<double>;
    constexpr int C = parts<T>;
    const P* v = reinterpret_cast<const P*>(x);
    const int64_t len = n * C;
    double s[W] = {};
    int64_t i = 0;
    for (; i + W <= len; i += W)
        for (int j = 0; j < W; ++j) s[j] += convert<double>(v[i + j]);
    double tot[C] = {};
    for (int j = 0; j < W; ++j) tot[j % C] += s[j];
    for (; i < len; ++i) tot[i % C] += convert<double>(v[i]);
    double mean[W];
    for (int j = 0; j < W; ++j) mean[j] = tot[j % C] / static_cast<double>(n);
    double q[W] = {};
    i = 0;
    for (; i + W <= len; i += W)
        for (int j = 0; j < W; ++j) {
            const double d = convert<double>(v[i + j]) - mean[j];
            q[j] += d * d;
        }
    double m2 = 0;
    for (int j = 0; j < W; ++j) m2 += q[j];
    for (; i < len; ++i) {
        const double d = convert<double>(v[i]) - mean[i % C];
        m2 += d * d;
    }
    if constexpr (C == 2)
        return {static_cast<double>(n), M(mean[0], mean[1]), m2};
    else
        return {static_cast<double>(n), mean[0], m2};
}

template <typename T, typename M>
ISTHMUS_REDUCE_INLINE moments<M> var_blocks(const T* x, int64_t n) {
    moments<M> acc{0, M(0), 0};
    for (int64_t b = 0; b < n; b += var_block)
        acc = merge(acc, block_moments<T, M>(x + b, std::min(var_block, n - b)));
    return acc;
}

template <typename T, typename M>
ISTHMUS_REDUCE_CLONES moments<M> var_blocks_simd(const T* x, int64_t n) {
    return var_blocks<T, M>(x, n);
}

// Column form: s[k] += part k of a row of w elements (`cs` bytes apart) for `rows` rows `rs`
// bytes apart, then q[k] += (part - mean[k])^2 over the same rows. k runs over w * parts.
template <typename T>
ISTHMUS_REDUCE_INLINE void column_sums(double* __restrict s, const char* p, int64_t rs, int64_t cs,
                                       int64_t w, int64_t rows) {
    using P = part_t<T>;
    constexpr int C = parts<T>;
    const int64_t len = w * C;
    for (int64_t r = 0; r < rows; ++r) {
        const char* row = p + r * rs;
        if (cs == static_cast<int64_t>(sizeof(T))) {
            const P* __restrict v = reinterpret_cast<const P*>(row);
            for (int64_t k = 0; k < len; ++k) s[k] += convert<double>(v[k]);
        } else {
            for (int64_t k = 0; k < len; ++k)
                s[k] += convert<double>(
                    *reinterpret_cast<const P*>(row + (k / C) * cs + (k % C) * sizeof(P)));
        }
    }
}

template <typename T>
ISTHMUS_REDUCE_INLINE void column_squares(double* __restrict q, const double* __restrict mean,
                                          const char* p, int64_t rs, int64_t cs, int64_t w,
                                          int64_t rows) {
    using P = part_t<T>;
    constexpr int C = parts<T>;
    const int64_t len = w * C;
    for (int64_t r = 0; r < rows; ++r) {
        const char* row = p + r * rs;
        if (cs == static_cast<int64_t>(sizeof(T))) {
            const P* __restrict v = reinterpret_cast<const P*>(row);
            for (int64_t k = 0; k < len; ++k) {
                const double d = convert<double>(v[k]) - mean[k];
                q[k] += d * d;
            }
        } else {
            for (int64_t k = 0; k < len; ++k) {
                const double d = convert<double>(*reinterpret_cast<const P*>(row + (k / C) * cs +
                                                                             (k % C) * sizeof(P))) -
                                 mean[k];
                q[k] += d * d;
            }
        }
    }
}

template <typename T>
ISTHMUS_REDUCE_CLONES void column_sums_simd(double* __restrict s, const char* p, int64_t rs,
                                            int64_t cs, int64_t w, int64_t rows) {
    column_sums<T>(s, p, rs, cs, w, rows);
}

template <typename T>
ISTHMUS_REDUCE_CLONES void column_squares_simd(double* __restrict q, const double* __restrict mean,
                                               const char* p, int64_t rs, int64_t cs, int64_t w,
                                               int64_t rows) {
    column_squares<T>(q, mean, p, rs, cs, w, rows);
}

// The dtype var/std of T gives.
template <typename T>
using var_out_t = std::conditional_t<is_complex_v<T>, part_t<T>,
                                     std::conditional_t<std::is_integral_v<T>, double, T>>;

template <typename T>
struct var_op {
    using M = std::conditional_t<is_complex_v<T>, complex128_t, double>;
    using in_t = T;
    using acc_t = moments<M>;
    using out_t = var_out_t<T>;
    static constexpr bool gather_strided = true; // Note [gathered runs]
    double divisor = 1.0;
    bool root = false;

    acc_t identity() const { return {0, M(0), 0}; }
    acc_t combine(const acc_t& a, const acc_t& b) const { return merge(a, b); }
    acc_t step(acc_t a, T x) const { // Welford's update
        const M v = convert<M>(x);
        a.n += 1;
        const M d = v - a.mean;
        a.mean += d / a.n;
        const M e = v - a.mean;
        if constexpr (is_complex_v<M>)
            a.m2 += d.real() * e.real() + d.imag() * e.imag();
        else
            a.m2 += d * e;
        return a;
    }
    out_t finalize(const acc_t& a) const {
        double v = a.m2 / divisor;
        if (root) v = std::sqrt(v);
        return convert<out_t>(v);
    }
    acc_t run(const T* x, int64_t n) const {
        return n >= clone_min_run ? var_blocks_simd<T, M>(x, n) : var_blocks<T, M>(x, n);
    }
    // Rows of w kept elements (Note [blocked variance]): blocks of rows, two passes each.
    void accumulate_rows(acc_t* buf, const char* p, int64_t rs, int64_t cs, int64_t w,
                         int64_t rows) const {
        constexpr int C = parts<T>;
        constexpr int64_t RB = 32;
        const int64_t len = w * C;
        // w <= column_tile<acc_t> (the column kernel's tile), so the sums fit on the stack.
        constexpr int64_t max_len = column_tile<acc_t> * C;
        ISTHMUS_ASSERT(len <= max_len);
        double tmp[3 * max_len];
        double* s = tmp;
        double* mean = s + len;
        double* q = mean + len;
        const bool simd = len >= clone_min_run;
        for (int64_t r0 = 0; r0 < rows; r0 += RB) {
            const int64_t nb = std::min(RB, rows - r0);
            const char* blk = p + r0 * rs;
            std::fill(s, s + len, 0.0);
            std::fill(q, q + len, 0.0);
            if (simd)
                column_sums_simd<T>(s, blk, rs, cs, w, nb);
            else
                column_sums<T>(s, blk, rs, cs, w, nb);
            for (int64_t k = 0; k < len; ++k) mean[k] = s[k] / static_cast<double>(nb);
            if (simd)
                column_squares_simd<T>(q, mean, blk, rs, cs, w, nb);
            else
                column_squares<T>(q, mean, blk, rs, cs, w, nb);
            for (int64_t j = 0; j < w; ++j) {
                acc_t b;
                b.n = static_cast<double>(nb);
                if constexpr (C == 2) {
                    b.mean = M(mean[2 * j], mean[2 * j + 1]);
                    b.m2 = q[2 * j] + q[2 * j + 1];
                } else {
                    b.mean = mean[j];
                    b.m2 = q[j];
                }
                buf[j] = merge(buf[j], b);
            }
        }
    }
};

template <typename F>
void sqrt_as(const tensor& out, void* data) {
    auto* p = static_cast<F*>(data);
    const int64_t n = out.numel();
    for (int64_t i = 0; i < n; ++i) p[i] = std::sqrt(p[i]);
}

} // namespace

void squared_deviation(const tensor& dev, void* dev_data, const tensor& x, const void* x_data,
                       const tensor& m, const void* m_data) {
    ISTHMUS_ASSERT(x.dtype() != dtype::float16 && x.dtype() != dtype::bfloat16,
                   "squared_deviation: half inputs are widened to float32 first");
    ISTHMUS_DISPATCH(x.dtype(), T,
                     { squared_deviation_as<T>(dev, dev_data, x, x_data, m, m_data); });
}

void variance(const tensor& out, void* out_data, const tensor& x, const void* x_data,
              const std::vector<bool>& reduced, double divisor, bool root) {
    ISTHMUS_ASSERT(out.dtype() == ops::var_result_dtype(x.dtype()), "variance: output dtype ",
                   out.dtype(), " for ", x.dtype(), " input");
    ISTHMUS_ASSERT(reduced.size() == x.shape().size());
    const reduce_geometry g = make_reduce_geometry(x, out, reduced);
    ISTHMUS_DISPATCH(x.dtype(), T, {
        run_reduction(var_op<T>{divisor, root}, g, x_data, out_data);
    });
}

void sqrt_inplace(const tensor& out, void* out_data) {
    ISTHMUS_ASSERT(out.is_contiguous());
    if (out.dtype() == dtype::float64)
        sqrt_as<double>(out, out_data);
    else if (out.dtype() == dtype::float32)
        sqrt_as<float>(out, out_data);
    else
        ISTHMUS_ASSERT(false, "sqrt_inplace: dtype ", out.dtype());
}

} // namespace isthmus::cpu
