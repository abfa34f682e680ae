// Complex transcendental element functions (exp, logs, roots, trigonometric, pow) as the CPU's.
#pragma once

#include "cuda/elementwise_ops.cuh"

#include <thrust/complex.h>

namespace isthmus::cudak {

// Note [complex math on the device]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The CPU's complex functions are std::complex's, which libstdc++ forwards to glibc (cexp, clog,
// csqrt, csin ... casin, catanh: C99 Annex G special values, accurate to a few ulp), except log10
// (log(z) / log(10)), and the CPU's own log2, log1p, expm1, rsqrt and pow
// (core/src/cpu/elementwise_math.cpp, elementwise_arith.cpp). On the device the glibc functions are
// thrust::complex's (FreeBSD msun's algorithms: the same Annex G special values and branch cuts, a
// few ulp), in float for complex64 as glibc's cexpf... are, and the CPU's own formulas are written
// out below with the same steps (even the ones that matter only for signed zeros, like log1p
// keeping the imaginary part's sign). tests/cuda/test_cuda_semantics_*.cu compares every function
// with the CPU's on the host, special values and branch cuts included.

namespace detail {
template <class R>
ISTHMUS_HD inline thrust::complex<R> tc(cplx<R> a) {
    return thrust::complex<R>(a.re, a.im);
}
template <class R>
ISTHMUS_HD inline cplx<R> from_tc(thrust::complex<R> z) {
    return {z.real(), z.imag()};
}
// Note [glibc special values]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// thrust's functions follow C99 Annex G, which leaves the sign of some infinite results unspecified
// and was revised in C11 for ctanh; where glibc (the CPU) chose otherwise, the functions below
// patch thrust's result for those non-finite inputs (found by comparing every pair of special parts
// in tests/cuda/test_cuda_semantics_elementwise.cu):
// - log(z) with an infinite part is +inf + i atan2(y, x), also when the other part is NaN
//   (thrust: NaN);
// - sin(x + iy) with y infinite and x infinite or NaN is NaN + i inf (thrust: -inf);
// - tan(x + iy) with x infinite or NaN and y = +-0 is NaN + i y (thrust: NaN + i NaN);
// - tanh(x + iy) with x = +-0 and y infinite or NaN is x + i NaN (C11; thrust: NaN + i NaN);
// - asin(z) with a NaN part and an infinite part is NaN + i copysign(inf, y) (thrust: the
//   other sign for -inf + i NaN);
// - asinh(NaN + iy) with y infinite is +inf + i NaN (thrust: -inf for y = -inf);
// - acosh(+-0 + i NaN) is NaN + i pi/2 (thrust: NaN + i NaN).
template <class R>
ISTHMUS_HD inline cplx<R> clog(cplx<R> a) {
    if (::isinf(a.re) || ::isinf(a.im)) return {R(INFINITY), ::atan2(a.im, a.re)};
    return from_tc(thrust::log(tc(a)));
}

// z / r for a real r: each part divided (std::complex<T> / T).
template <class R>
ISTHMUS_HD inline cplx<R> div_real(cplx<R> z, R r) {
    return {z.re / r, z.im / r};
}
} // namespace detail

template <uop OP, class R>
ISTHMUS_HD cplx<R> cmath(cplx<R> a) {
    using detail::from_tc;
    using detail::tc;
    static_assert(complex_math(OP), "cmath: not a complex math function");
    if constexpr (OP == uop::exp) {
        return from_tc(thrust::exp(tc(a)));
    } else if constexpr (OP == uop::log) {
        return detail::clog(a);
    } else if constexpr (OP == uop::log2) {
        return detail::div_real(detail::clog(a), R(0.693147180559945309417232121458));
    } else if constexpr (OP == uop::log10) {
        return detail::div_real(detail::clog(a), R(2.30258509299404568401799145468));
    } else if constexpr (OP == uop::expm1) {
        // without cancellation near 0: e^x cos y - 1 = expm1(x) cos y - 2 sin^2(y / 2)
        const R h = ::sin(a.im / 2);
        return {::expm1(a.re) * ::cos(a.im) - 2 * h * h, ::exp(a.re) * ::sin(a.im)};
    } else if constexpr (OP == uop::log1p) {
        return detail::clog(cplx<R>{R(1) + a.re, a.im});
    } else if constexpr (OP == uop::sqrt) {
        return from_tc(thrust::sqrt(tc(a)));
    } else if constexpr (OP == uop::rsqrt) {
        return cdiv(cplx<R>{R(1), R(0)}, from_tc(thrust::sqrt(tc(a))));
    } else if constexpr (OP == uop::sin) {
        if (::isinf(a.im) && !::isfinite(a.re)) return {a.re - a.re, R(INFINITY)};
        return from_tc(thrust::sin(tc(a)));
    } else if constexpr (OP == uop::cos) {
        return from_tc(thrust::cos(tc(a)));
    } else if constexpr (OP == uop::tan) {
        if (!::isfinite(a.re) && a.im == R(0)) return {R(NAN), a.im};
        return from_tc(thrust::tan(tc(a)));
    } else if constexpr (OP == uop::asin) {
        if ((a.re != a.re || a.im != a.im) && (::isinf(a.re) || ::isinf(a.im)))
            return {R(NAN), ::copysign(R(INFINITY), a.im)};
        return from_tc(thrust::asin(tc(a)));
    } else if constexpr (OP == uop::acos) {
        return from_tc(thrust::acos(tc(a)));
    } else if constexpr (OP == uop::atan) {
        return from_tc(thrust::atan(tc(a)));
    } else if constexpr (OP == uop::sinh) {
        return from_tc(thrust::sinh(tc(a)));
    } else if constexpr (OP == uop::cosh) {
        return from_tc(thrust::cosh(tc(a)));
    } else if constexpr (OP == uop::tanh) {
        if (a.re == R(0) && !::isfinite(a.im)) return {a.re, R(NAN)};
        return from_tc(thrust::tanh(tc(a)));
    } else if constexpr (OP == uop::exp2) { // e**(z ln 2), as the CPU (NumPy's nc_exp2)
        const R ln2 = R(0.693147180559945309417232121458);
        return from_tc(thrust::exp(tc(cplx<R>{a.re * ln2, a.im * ln2})));
    } else if constexpr (OP == uop::asinh) {
        if (a.re != a.re && ::isinf(a.im)) return {R(INFINITY), a.re};
        return from_tc(thrust::asinh(tc(a)));
    } else if constexpr (OP == uop::acosh) {
        if (a.re == R(0) && a.im != a.im) return {a.im, R(1.57079632679489661923132169164)};
        return from_tc(thrust::acosh(tc(a)));
    } else if constexpr (OP == uop::atanh) {
        return from_tc(thrust::atanh(tc(a)));
    } else {
        // See Note [no silent kernels] (elementwise_ops.cuh).
        static_assert(missing_element_function<OP>,
                      "cmath: add the complex element function of this math op");
    }
}

// As the CPU's complex_pow: small integral real exponents multiply by squaring with Annex G
// products (then 1 / r for negative ones); others are glibc's cpow, exp(b * log(a)) with an
// Annex G product.
template <class R>
ISTHMUS_HD cplx<R> cpow(cplx<R> a, cplx<R> b) {
    if (b.im == R(0) && b.re == ::trunc(b.re) && ::fabs(b.re) < R(100)) {
        const int n = static_cast<int>(b.re);
        if (n == 0) return {R(1), R(0)};
        cplx<R> base = a, r{R(1), R(0)};
        for (unsigned e = static_cast<unsigned>(n < 0 ? -n : n); e; e >>= 1) {
            if (e & 1u) r = cmul_c99(r, base);
            base = cmul_c99(base, base);
        }
        return n < 0 ? cdiv(cplx<R>{R(1), R(0)}, r) : r;
    }
    const cplx<R> l = detail::clog(a);
    return detail::from_tc(thrust::exp(detail::tc(cmul_c99(b, l))));
}

} // namespace isthmus::cudak
