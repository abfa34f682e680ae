// The elementwise ops on device compute types, with the CPU kernels' exact integer semantics.
#pragma once

#include "cuda/device_types.cuh"
#include "cuda/elementwise_common.cuh"
#include "kernels/element_functions.hpp"

#include <cmath>

namespace isthmus::cudak {

// The element functions shared with the CPU loops (Note [element functions once]).
using elem::float_floor_div;
using elem::float_mod;
using elem::int_floor_div;
using elem::int_mod;
using elem::int_pow;
using elem::is_nan;
using elem::wrap_neg;
using elem::wrap_t;

// ---- complex arithmetic ----

// Note [complex special values]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The CPU computes complex products and quotients with std::complex, which GCC lowers to libgcc's
// __mulsc3/__muldc3 and __divsc3/__divdc3: the textbook formulas, then, only when both parts came
// out NaN, C99 Annex G's recovery of the infinities and zeros hidden behind inf * 0 or inf / inf.
// cmul_c99 and cdiv do the same, so that (inf + inf i) * 1, 1 / (inf + 1i) or 1 / 0 give the CPU's
// values, not NaN + NaN i. cmul (plain formula) is what reductions and matrix products use, as the
// CPU's (NumPy's) products do.

template <class R>
ISTHMUS_HD inline cplx<R> cmul(cplx<R> a, cplx<R> b) {
    return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

// 1 or 0 with the sign of x (Annex G's "box" of an infinite or finite part).
template <class R>
ISTHMUS_HD inline R unit_if_inf(R x) {
    return ::copysign(::isinf(x) ? R(1) : R(0), x);
}
// 0 with the sign of x where x is NaN, else x.
template <class R>
ISTHMUS_HD inline R zero_if_nan(R x) {
    return x != x ? ::copysign(R(0), x) : x;
}

// A product nvcc may not fuse into an fma with the sum that follows (nvcc contracts by default,
// GCC on x86-64 without -mfma does not). Fused, a*c - b*d rounds once, so where the CPU's
// rounded products overflow to inf - inf = NaN the GPU got a finite part or another infinity,
// and the squares, products and integer powers of huge and infinite values differed (found on
// the first H200 run, tests/cuda/test_cuda_ops.cpp "complex math ... at special values").
template <class R>
ISTHMUS_HD inline R mul_rn(R a, R b) {
#ifdef __CUDA_ARCH__
    if constexpr (sizeof(R) == sizeof(float))
        return __fmul_rn(a, b);
    else
        return __dmul_rn(a, b);
#else
    return a * b;
#endif
}

template <class R>
ISTHMUS_HD inline cplx<R> cmul_c99(cplx<R> x, cplx<R> y) {
    R a = x.re, b = x.im, c = y.re, d = y.im;
    const R ac = mul_rn(a, c), bd = mul_rn(b, d), ad = mul_rn(a, d), bc = mul_rn(b, c);
    cplx<R> r{ac - bd, ad + bc};
    if (r.re != r.re && r.im != r.im) {
        bool again = false;
        if (::isinf(a) || ::isinf(b)) { // x infinite: box it, NaNs of y become zeros
            a = unit_if_inf(a);
            b = unit_if_inf(b);
            c = zero_if_nan(c);
            d = zero_if_nan(d);
            again = true;
        }
        if (::isinf(c) || ::isinf(d)) {
            c = unit_if_inf(c);
            d = unit_if_inf(d);
            a = zero_if_nan(a);
            b = zero_if_nan(b);
            again = true;
        }
        if (!again && (::isinf(ac) || ::isinf(bd) || ::isinf(ad) || ::isinf(bc))) {
            // finite factors whose partial products overflowed
            a = zero_if_nan(a);
            b = zero_if_nan(b);
            c = zero_if_nan(c);
            d = zero_if_nan(d);
            again = true;
        }
        if (again) {
            const R inf = R(INFINITY);
            r = {inf * (mul_rn(a, c) - mul_rn(b, d)), inf * (mul_rn(a, d) + mul_rn(b, c))};
        }
    }
    return r;
}

// Smith's algorithm (scaled by the larger part of the divisor, so |b|^2 never overflows), then
// the Annex G recovery of libgcc's __divdc3.
template <class R>
ISTHMUS_HD inline cplx<R> cdiv(cplx<R> x, cplx<R> y) {
    const R a = x.re, b = x.im, c = y.re, d = y.im;
    cplx<R> r;
    if (::fabs(c) < ::fabs(d)) {
        const R q = c / d, den = c * q + d;
        r = {(a * q + b) / den, (b * q - a) / den};
    } else {
        const R q = d / c, den = d * q + c;
        r = {(b * q + a) / den, (b - a * q) / den};
    }
    if (r.re != r.re && r.im != r.im) {
        const R inf = R(INFINITY);
        if (c == R(0) && d == R(0) && (a == a || b == b)) {
            r = {::copysign(inf, c) * a, ::copysign(inf, c) * b};
        } else if ((::isinf(a) || ::isinf(b)) && ::isfinite(c) && ::isfinite(d)) {
            const R ua = unit_if_inf(a), ub = unit_if_inf(b);
            r = {inf * (ua * c + ub * d), inf * (ub * c - ua * d)};
        } else if ((::isinf(c) || ::isinf(d)) && ::isfinite(a) && ::isfinite(b)) {
            const R uc = unit_if_inf(c), ud = unit_if_inf(d);
            r = {R(0) * (a * uc + b * ud), R(0) * (b * uc - a * ud)};
        }
    }
    return r;
}

/// False for every op: the condition of the static_assert that ends uapply/bapply/cmath (Note
/// [no silent kernels]), dependent so that only a missing branch that is used fires.
template <auto OP>
inline constexpr bool missing_element_function = false;

/// The complex transcendental functions and complex pow, as the CPU's std::complex ones.
/// Defined in elementwise_cmath.cuh, which only the files that instantiate complex math include
/// (elementwise_cmath.cu and the host test).
template <uop OP, class R>
ISTHMUS_HD cplx<R> cmath(cplx<R> a);
template <class R>
ISTHMUS_HD cplx<R> cpow(cplx<R> a, cplx<R> b);

/// op(a, b) on kdt K's compute type C: C, or unsigned char for binary_gives_bool(OP).
template <bop OP, kdt K>
ISTHMUS_HD inline auto bapply(compute_t<K> a, compute_t<K> b) {
    using C = compute_t<K>;
    using U = unsigned char;
    constexpr bool cx = is_cplx(K), in = is_int(K);
    if constexpr (OP == bop::add) {
        if constexpr (cx)
            return C{a.re + b.re, a.im + b.im};
        else if constexpr (in)
            return elem::wrap_add(a, b);
        else
            return static_cast<C>(a + b);
    } else if constexpr (OP == bop::sub) {
        if constexpr (cx)
            return C{a.re - b.re, a.im - b.im};
        else if constexpr (in)
            return elem::wrap_sub(a, b);
        else
            return static_cast<C>(a - b);
    } else if constexpr (OP == bop::mul) {
        if constexpr (cx)
            return cmul_c99(a, b);
        else if constexpr (in)
            return elem::wrap_mul(a, b);
        else
            return static_cast<C>(a * b);
    } else if constexpr (OP == bop::div) {
        if constexpr (cx)
            return cdiv(a, b);
        else
            return static_cast<C>(a / b);
    } else if constexpr (OP == bop::floor_div) {
        if constexpr (in)
            return int_floor_div(a, b);
        else
            return float_floor_div(a, b);
    } else if constexpr (OP == bop::mod) {
        if constexpr (in)
            return int_mod(a, b);
        else
            return float_mod(a, b);
    } else if constexpr (OP == bop::pow) {
        if constexpr (in)
            return int_pow(a, b);
        else if constexpr (cx)
            return cpow(a, b);
        else
            return static_cast<C>(::pow(a, b));
    } else if constexpr (OP == bop::maximum) {
        return elem::maximum(a, b);
    } else if constexpr (OP == bop::minimum) {
        return elem::minimum(a, b);
    } else if constexpr (OP == bop::atan2) {
        return static_cast<C>(::atan2(a, b));
    } else if constexpr (OP == bop::eq) {
        if constexpr (cx)
            return static_cast<U>(a.re == b.re && a.im == b.im);
        else
            return static_cast<U>(a == b);
    } else if constexpr (OP == bop::ne) {
        if constexpr (cx)
            return static_cast<U>(a.re != b.re || a.im != b.im);
        else
            return static_cast<U>(a != b);
    } else if constexpr (OP == bop::lt) {
        return static_cast<U>(a < b);
    } else if constexpr (OP == bop::le) {
        return static_cast<U>(a <= b);
    } else if constexpr (OP == bop::gt) {
        return static_cast<U>(a > b);
    } else if constexpr (OP == bop::ge) {
        return static_cast<U>(a >= b);
    } else if constexpr (OP == bop::logical_and) {
        return static_cast<U>(truthy(a) && truthy(b));
    } else if constexpr (OP == bop::logical_or) {
        return static_cast<U>(truthy(a) || truthy(b));
    } else if constexpr (OP == bop::logical_xor) {
        return static_cast<U>(truthy(a) != truthy(b));
    } else if constexpr (OP == bop::bit_and) {
        return static_cast<C>(a & b);
    } else if constexpr (OP == bop::bit_or) {
        return static_cast<C>(a | b);
    } else if constexpr (OP == bop::bit_xor) {
        return static_cast<C>(a ^ b);
    } else if constexpr (OP == bop::shift_left) {
        return elem::shift_left(a, b);
    } else if constexpr (OP == bop::shift_right) {
        return elem::shift_right(a, b);
    } else {
        // See Note [no silent kernels].
        static_assert(missing_element_function<OP>,
                      "bapply: add the element function of this binary op");
    }
}

/// op(a) on kdt K's compute type: the compute type of unary_result(OP, K) (unsigned char for
/// the tests, the real type for abs of a complex).
template <uop OP, kdt K>
ISTHMUS_HD inline auto uapply(compute_t<K> a) {
    using C = compute_t<K>;
    using U = unsigned char;
    constexpr bool cx = is_cplx(K), in = is_int(K);
    if constexpr (OP == uop::neg) {
        if constexpr (cx)
            return C{-a.re, -a.im};
        else if constexpr (in)
            return wrap_neg(a);
        else
            return static_cast<C>(-a);
    } else if constexpr (OP == uop::abs) {
        if constexpr (cx)
            return ::hypot(a.re, a.im);
        else if constexpr (is_signed(K))
            return a < 0 ? wrap_neg(a) : a; // abs(INT_MIN) == INT_MIN
        else if constexpr (in)
            return a;
        else
            return static_cast<C>(::fabs(a));
    } else if constexpr (OP == uop::sign) {
        if constexpr (cx) {
            const auto s = elem::complex_sign(a.re, a.im);
            return C{s.re, s.im};
        } else if constexpr (is_unsigned(K))
            return static_cast<C>(a > C(0));
        else if constexpr (in)
            return static_cast<C>((a > C(0)) - (a < C(0)));
        else
            return is_nan(a) ? a : (a > C(0) ? C(1) : (a < C(0) ? C(-1) : C(0)));
    } else if constexpr (OP == uop::square) {
        if constexpr (cx)
            return cmul_c99(a, a);
        else if constexpr (in)
            return static_cast<C>(wrap_t<C>(a) * wrap_t<C>(a));
        else
            return static_cast<C>(a * a);
    } else if constexpr (OP == uop::logical_not) {
        return static_cast<U>(!truthy(a));
    } else if constexpr (OP == uop::bit_not) {
        if constexpr (K == kdt::b8)
            return static_cast<U>(!a);
        else
            return static_cast<C>(~a);
    } else if constexpr (OP == uop::conj) {
        return C{a.re, -a.im};
    } else if constexpr (OP == uop::isnan) {
        if constexpr (cx)
            return static_cast<U>(is_nan(a.re) || is_nan(a.im));
        else
            return static_cast<U>(is_nan(a));
    } else if constexpr (OP == uop::isinf) {
        if constexpr (cx)
            return static_cast<U>(::isinf(a.re) || ::isinf(a.im));
        else
            return static_cast<U>(::isinf(a));
    } else if constexpr (OP == uop::signbit) { // the bit itself: -0.0 and -NaN too
        if constexpr (in)
            return static_cast<U>(a < C(0));
        else
            return static_cast<U>(::signbit(a));
    } else if constexpr (OP == uop::isfinite) {
        if constexpr (cx)
            return static_cast<U>(::isfinite(a.re) && ::isfinite(a.im));
        else
            return static_cast<U>(::isfinite(a));
    } else if constexpr (cx && complex_math(OP)) {
        return cmath<OP>(a);
    } else if constexpr (cx && OP == uop::round) { // each part, half to even
        return C{::rint(a.re), ::rint(a.im)};
    } else if constexpr (cx && OP == uop::reciprocal) {
        using R = decltype(a.re);
        return cdiv(C{R(1), R(0)}, a);
    } else if constexpr (OP == uop::exp) {
        return static_cast<C>(::exp(a));
    } else if constexpr (OP == uop::log) {
        return static_cast<C>(::log(a));
    } else if constexpr (OP == uop::log2) {
        return static_cast<C>(::log2(a));
    } else if constexpr (OP == uop::log10) {
        return static_cast<C>(::log10(a));
    } else if constexpr (OP == uop::expm1) {
        return static_cast<C>(::expm1(a));
    } else if constexpr (OP == uop::log1p) {
        return static_cast<C>(::log1p(a));
    } else if constexpr (OP == uop::sqrt) {
        return static_cast<C>(::sqrt(a));
    } else if constexpr (OP == uop::rsqrt) {
        return static_cast<C>(C(1) / ::sqrt(a));
    } else if constexpr (OP == uop::sin) {
        return static_cast<C>(::sin(a));
    } else if constexpr (OP == uop::cos) {
        return static_cast<C>(::cos(a));
    } else if constexpr (OP == uop::tan) {
        return static_cast<C>(::tan(a));
    } else if constexpr (OP == uop::asin) {
        return static_cast<C>(::asin(a));
    } else if constexpr (OP == uop::acos) {
        return static_cast<C>(::acos(a));
    } else if constexpr (OP == uop::atan) {
        return static_cast<C>(::atan(a));
    } else if constexpr (OP == uop::sinh) {
        return static_cast<C>(::sinh(a));
    } else if constexpr (OP == uop::cosh) {
        return static_cast<C>(::cosh(a));
    } else if constexpr (OP == uop::tanh) {
        return static_cast<C>(::tanh(a));
    } else if constexpr (OP == uop::exp2) {
        return static_cast<C>(::exp2(a));
    } else if constexpr (OP == uop::cbrt) {
        return static_cast<C>(::cbrt(a));
    } else if constexpr (OP == uop::asinh) {
        return static_cast<C>(::asinh(a));
    } else if constexpr (OP == uop::acosh) {
        return static_cast<C>(::acosh(a));
    } else if constexpr (OP == uop::atanh) {
        return static_cast<C>(::atanh(a));
    } else if constexpr (OP == uop::erf) {
        return static_cast<C>(::erf(a));
    } else if constexpr (OP == uop::erfc) {
        return static_cast<C>(::erfc(a));
    } else if constexpr (OP == uop::floor) {
        return static_cast<C>(::floor(a));
    } else if constexpr (OP == uop::ceil) {
        return static_cast<C>(::ceil(a));
    } else if constexpr (OP == uop::round) {
        return static_cast<C>(::rint(a)); // half to even, as NumPy
    } else if constexpr (OP == uop::reciprocal) {
        return static_cast<C>(C(1) / a);
    } else {
        // Note [no silent kernels]
        // ~~~~~~~~~~~~~~~~~~~~~~~~
        // A row of the op table with GPU support (unary_ok) but no element function here stops the
        // build instead of computing something else.
        static_assert(missing_element_function<OP>,
                      "uapply: add the element function of this unary op");
    }
}

/// Launch geometry shared by the elementwise kernels.
inline constexpr int ew_block = 256;

/// Binary launches of the comparison, logic and bit ops (elementwise_logic.cu).
void launch_binary_logic(cudaStream_t s, bop op, kdt t, const space& sp, const arg& out,
                         const arg& a, const arg& b);

// Note [elementwise kernel paths]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// One kernel per (op, type) with three paths chosen at launch (uniform branches): vectorised
// 16-byte loads when every tensor operand is contiguous and aligned, a flat loop when contiguous
// but unaligned, and a strided loop (offsets from the coalesced shape) otherwise. Scalars are
// kernel parameters, broadcast operands have stride 0. Elements are loaded in their stored type,
// computed in the compute type, stored back.
template <bop OP, kdt K>
__global__ void binary_kernel(space sp, arg out, arg a, arg b, bool vector_ok) {
    using S = storage_t<K>;
    using O = std::conditional_t<binary_gives_bool(OP), unsigned char, S>;
    auto f = [](S x, S y) -> O {
        if constexpr (binary_gives_bool(OP))
            return bapply<OP, K>(up<K>(x), up<K>(y));
        else
            return down<K>(bapply<OP, K>(up<K>(x), up<K>(y)));
    };
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const S* pa = static_cast<const S*>(a.data);
    const S* pb = static_cast<const S*>(b.data);
    O* po = static_cast<O*>(const_cast<void*>(out.data));
    const S sa = pa ? S() : scalar_of<S>(a), sb = pb ? S() : scalar_of<S>(b);
    if (sp.contiguous) {
        int64_t start = 0;
        if (vector_ok) {
            constexpr int V = 16 / sizeof(S);
            const int64_t nv = sp.numel / V;
            for (int64_t v = tid; v < nv; v += stride) {
                vec<S, V> x, y;
                if (pa)
                    x = reinterpret_cast<const vec<S, V>*>(pa)[v];
                else
                    for (int j = 0; j < V; ++j) x.v[j] = sa;
                if (pb)
                    y = reinterpret_cast<const vec<S, V>*>(pb)[v];
                else
                    for (int j = 0; j < V; ++j) y.v[j] = sb;
                vec<O, V> r;
                for (int j = 0; j < V; ++j) r.v[j] = f(x.v[j], y.v[j]);
                reinterpret_cast<vec<O, V>*>(po)[v] = r;
            }
            start = nv * V;
        }
        for (int64_t i = start + tid; i < sp.numel; i += stride)
            po[i] = f(pa ? pa[i] : sa, pb ? pb[i] : sb);
        return;
    }
    const int64_t* const strides[3] = {out.strides, a.strides, b.strides};
    for (int64_t i = tid; i < sp.numel; i += stride) {
        int64_t off[3];
        offsets<3>(sp, i, strides, off);
        po[off[0]] = f(pa ? pa[off[1]] : sa, pb ? pb[off[2]] : sb);
    }
}

template <bop OP, kdt K>
void run_binary(cudaStream_t s, const space& sp, const arg& out, const arg& a, const arg& b) {
    if constexpr (binary_ok(OP, K)) {
        using S = storage_t<K>;
        const bool vok = aligned16(out.data, a.data, b.data);
        const int64_t work = vok && sp.contiguous ? sp.numel / (16 / sizeof(S)) + 1 : sp.numel;
        binary_kernel<OP, K><<<grid_for(work, ew_block), ew_block, 0, s>>>(sp, out, a, b, vok);
    }
}

// The same three paths as binary_kernel (Note [elementwise kernel paths]); out has type
// unary_result(OP, K).
template <uop OP, kdt K>
__global__ void unary_kernel(space sp, arg out, arg a, bool vector_ok) {
    constexpr kdt RK = unary_result(OP, K);
    using S = storage_t<K>;
    using O = storage_t<RK>;
    auto f = [](S x) -> O {
        if constexpr (RK == K)
            return down<K>(uapply<OP, K>(up<K>(x)));
        else // bool tests, abs of complex: already the stored result type
            return static_cast<O>(uapply<OP, K>(up<K>(x)));
    };
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const S* pa = static_cast<const S*>(a.data);
    O* po = static_cast<O*>(const_cast<void*>(out.data));
    if (sp.contiguous) {
        int64_t start = 0;
        if (vector_ok) {
            constexpr int V = 16 / sizeof(S);
            const int64_t nv = sp.numel / V;
            for (int64_t v = tid; v < nv; v += stride) {
                const vec<S, V> x = reinterpret_cast<const vec<S, V>*>(pa)[v];
                vec<O, V> r;
                for (int j = 0; j < V; ++j) r.v[j] = f(x.v[j]);
                reinterpret_cast<vec<O, V>*>(po)[v] = r;
            }
            start = nv * V;
        }
        for (int64_t i = start + tid; i < sp.numel; i += stride) po[i] = f(pa[i]);
        return;
    }
    const int64_t* const strides[2] = {out.strides, a.strides};
    for (int64_t i = tid; i < sp.numel; i += stride) {
        int64_t off[2];
        offsets<2>(sp, i, strides, off);
        po[off[0]] = f(pa[off[1]]);
    }
}

template <uop OP, kdt K>
void run_unary(cudaStream_t s, const space& sp, const arg& out, const arg& a) {
    if constexpr (unary_ok(OP, K)) {
        using S = storage_t<K>;
        const bool vok = aligned16(out.data, a.data);
        const int64_t work = vok && sp.contiguous ? sp.numel / (16 / sizeof(S)) + 1 : sp.numel;
        unary_kernel<OP, K><<<grid_for(work, ew_block), ew_block, 0, s>>>(sp, out, a, vok);
    }
}

/// Unary launches of the complex transcendental functions (elementwise_cmath.cu).
void launch_unary_cmath(cudaStream_t s, uop op, kdt t, const space& sp, const arg& out,
                        const arg& a);
/// Binary launches of complex pow (elementwise_cmath.cu).
void launch_binary_cmath(cudaStream_t s, bop op, kdt t, const space& sp, const arg& out,
                         const arg& a, const arg& b);

} // namespace isthmus::cudak
