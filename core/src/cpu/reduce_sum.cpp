// CPU sum, product and mean: accumulator and result types, and the ops the engine runs.
#include "cpu/reduce_engine.hpp"

#include <type_traits>

namespace isthmus::cpu {

namespace {

// Note [float32 summation]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// float16, bfloat16 and float32 data (and complex64) accumulate in double precision: the lane
// kernel (Note [lane reduction]) keeps 16 double accumulators, and per-thread partials combine in
// double. Rounding to float happens once, at the end. float32 sums and means first add groups of
// four elements in float, (x0 + x1) + (x2 + x3), and convert that partial to double
// (Note [four-element steps]): the conversion, not the addition, is what limits a sum of data in
// the cache, and it happens a quarter as often. The partials carry three float roundings (together
// at most 1.2e-7 of the sum of the four magnitudes), so the error of a float32 sum of 100M elements
// stays at a few float32 roundings (~1e-7 relative for same-signed data), independent of the
// length; NumPy's pairwise summation gets O(log n) float roundings. Column sums do the same with
// four rows.

// Integers accumulate in uint64 so that overflow wraps as NumPy's int64 does, without the
// undefined behaviour of signed overflow; the result is cast back to int64.
template <typename T>
using sum_acc_t = std::conditional_t<is_complex_v<T>, complex128_t,
                                     std::conditional_t<std::is_integral_v<T>, uint64_t, double>>;
template <typename T>
using sum_out_t =
    std::conditional_t<std::is_same_v<T, bool> || (std::is_integral_v<T> && std::is_signed_v<T>),
                       int64_t, std::conditional_t<std::is_integral_v<T>, uint64_t, T>>;
template <typename T>
using mean_acc_t = std::conditional_t<is_complex_v<T>, complex128_t, double>;
template <typename T>
using mean_out_t = std::conditional_t<std::is_integral_v<T>, double, T>;

// Complex product without the C99 Annex G special cases (NumPy's formula).
template <typename A>
A multiply(A a, A b) {
    if constexpr (is_complex_v<A>)
        return A(a.real() * b.real() - a.imag() * b.imag(),
                 a.real() * b.imag() + a.imag() * b.real());
    else
        return a * b;
}

template <typename T, typename A, typename O, bool Prod>
struct sum_op {
    using in_t = T;
    using acc_t = A;
    using out_t = O;
    double divisor = 1.0;

    A identity() const { return Prod ? A(1) : A(0); }
    A combine(A a, A b) const {
        if constexpr (Prod)
            return multiply(a, b);
        else
            return a + b;
    }
    A step(A a, T x) const { return combine(a, convert<A>(x)); }
    // float32 sums: Note [float32 summation].
    A step4(A a, T x0, T x1, T x2, T x3) const
        requires(std::is_same_v<T, float>&& std::is_same_v<A, double> && !Prod) {
        return a + static_cast<double>((x0 + x1) + (x2 + x3));
    }
    O finalize(A a) const {
        if constexpr (std::is_floating_point_v<A> || is_complex_v<A>)
            if (divisor != 1.0) return convert<O>(a / divisor);
        return convert<O>(a);
    }
};

template <typename T>
void reduce_sums_as(bool prod, bool mean, const reduce_geometry& g, const void* in, void* out,
                    double divisor) {
    if (mean)
        run_reduction(sum_op<T, mean_acc_t<T>, mean_out_t<T>, false>{divisor}, g, in, out);
    else if (prod)
        run_reduction(sum_op<T, sum_acc_t<T>, sum_out_t<T>, true>{}, g, in, out);
    else
        run_reduction(sum_op<T, sum_acc_t<T>, sum_out_t<T>, false>{}, g, in, out);
}

} // namespace

void reduce_sums(bool prod, bool mean, dtype dt, const reduce_geometry& g, const void* in,
                 void* out, double divisor) {
    ISTHMUS_DISPATCH(dt, T, { reduce_sums_as<T>(prod, mean, g, in, out, divisor); });
}

} // namespace isthmus::cpu
