// The reduction kernels' accumulators and combine steps (host and device: tested on the host).
#pragma once

#include "cuda/device_types.cuh"
#include "cuda/elementwise_ops.cuh"

#include <limits>

namespace isthmus::cudak {

// Note [gpu reductions]
// ~~~~~~~~~~~~~~~~~~~~~
// The op layer hands over a contiguous (rows, cols) input. Each row is split into `chunks` pieces,
// one block each, reduced with a grid-stride loop and a block tree; with more than one chunk the
// partial results (in the accumulator type, 16 bytes at most) go to scratch memory and a second
// kernel combines them per row. The accumulators are the CPU's (Note [float32 summation]): sums,
// means and products of floating data (half types too) in double, of complex data in complex128, of
// integers in uint64 (wrapping as NumPy's int64), means of integers in double; complex products
// with the plain formula (NumPy's, as the CPU's reduction); min/max in the compute type with NaN
// propagating (complex: a NaN in either part wins, else lexicographic order); any/all as bytes.
// argmin/argmax carry (value, index, is-NaN) and take one block per row (no chunks).
constexpr kdt acc_kdt(rop op, kdt in) {
    switch (op) {
    case rop::sum:
    case rop::prod:
        return is_float(in) ? kdt::f64 : (is_cplx(in) ? kdt::c128 : kdt::u64);
    case rop::mean:
        return is_cplx(in) ? kdt::c128 : kdt::f64;
    case rop::any:
    case rop::all:
        return kdt::b8;
    default: // min, max, argmin, argmax: the compute type
        return in == kdt::f16 || in == kdt::bf16 ? kdt::f32 : in;
    }
}

template <class A>
ISTHMUS_HD inline bool nan_of(A x) {
    if constexpr (is_cplx_v<A>)
        return x.re != x.re || x.im != x.im;
    else
        return x != x;
}

/// x < y (real parts first, then imaginary parts for complex values).
template <class A>
ISTHMUS_HD inline bool less(A x, A y) {
    if constexpr (is_cplx_v<A>)
        return x.re < y.re || (x.re == y.re && x.im < y.im);
    else
        return x < y;
}

template <class A>
ISTHMUS_HD inline bool same(A x, A y) {
    if constexpr (is_cplx_v<A>)
        return x.re == y.re && x.im == y.im;
    else
        return x == y;
}

/// The accumulator of reduction OP over input kdt I: its identity, how an element enters it,
/// how two combine (associative: the kernels combine in any tree order) and the final value.
template <rop OP, kdt I>
struct combine {
    static constexpr kdt AK = acc_kdt(OP, I);
    using A = storage_t<AK>;
    ISTHMUS_HD A identity() const {
        if constexpr (is_cplx(AK)) {
            using R = decltype(A{}.re);
            if constexpr (OP == rop::min)
                return A{R(INFINITY), R(INFINITY)};
            else if constexpr (OP == rop::max)
                return A{R(-INFINITY), R(-INFINITY)};
            else
                return A{OP == rop::prod ? R(1) : R(0), R(0)};
        } else if constexpr (OP == rop::min) {
            if constexpr (is_float(AK))
                return A(INFINITY);
            else
                return std::numeric_limits<A>::max();
        } else if constexpr (OP == rop::max) {
            if constexpr (is_float(AK))
                return A(-INFINITY);
            else
                return std::numeric_limits<A>::lowest();
        } else if constexpr (OP == rop::prod || OP == rop::all) {
            return A(1);
        } else {
            return A(0);
        }
    }
    /// An input element as an accumulator.
    ISTHMUS_HD A load(storage_t<I> x) const {
        if constexpr (OP == rop::any || OP == rop::all)
            return static_cast<A>(truthy(x));
        else if constexpr (OP == rop::min || OP == rop::max)
            return up<I>(x);
        else
            return convert<AK, I>(x);
    }
    ISTHMUS_HD A operator()(A x, A y) const {
        if constexpr (OP == rop::min)
            return nan_of(x) ? x : (nan_of(y) ? y : (less(y, x) ? y : x));
        else if constexpr (OP == rop::max)
            return nan_of(x) ? x : (nan_of(y) ? y : (less(x, y) ? y : x));
        else if constexpr (OP == rop::prod && is_cplx(AK))
            return cmul(x, y);
        else if constexpr (OP == rop::prod)
            return static_cast<A>(x * y);
        else if constexpr (OP == rop::any)
            return static_cast<A>(x | y);
        else if constexpr (OP == rop::all)
            return static_cast<A>(x & y);
        else if constexpr (is_cplx(AK))
            return A{x.re + y.re, x.im + y.im};
        else
            return static_cast<A>(x + y);
    }
    /// The row's result in the output type O (kdt): the mean divides by the count; every
    /// result converts with the CPU's casts.
    template <kdt O>
    ISTHMUS_HD storage_t<O> result(A v, int64_t cols) const {
        if constexpr (OP == rop::mean && is_cplx(AK))
            return convert<O, AK>(A{v.re / double(cols), v.im / double(cols)});
        else if constexpr (OP == rop::mean)
            return convert<O, AK>(v / double(cols));
        else
            return convert<O, AK>(v);
    }
};

template <class C>
struct arg_acc {
    C v;
    int64_t i; // -1: nothing seen yet
    bool nan;
};

/// The better of two argmin/argmax candidates: a NaN wins (the first NaN), else the extreme
/// value (complex: lexicographic), ties to the lower index, as the CPU's arg_reduce and NumPy.
template <bool MAX, class C>
struct arg_combine {
    ISTHMUS_HD arg_acc<C> operator()(arg_acc<C> x, arg_acc<C> y) const {
        if (x.i < 0) return y;
        if (y.i < 0) return x;
        if (x.nan || y.nan) {
            if (x.nan && y.nan) return x.i <= y.i ? x : y;
            return x.nan ? x : y;
        }
        const bool better = MAX ? less(x.v, y.v) : less(y.v, x.v);
        if (better || (same(y.v, x.v) && y.i < x.i)) return y;
        return x;
    }
};

} // namespace isthmus::cudak
