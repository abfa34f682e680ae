// Internal: the CPU elementwise executor: strided plans, per-block dtype conversion, kernels.
#pragma once

#include "cpu/elementwise.hpp"
#include "cpu/strided_loop.hpp"

#include <array>

namespace isthmus::cpu {

/// A kernel for one (op, dtype): its loop, the dtype its loop writes, and the element count
/// below which it runs on one thread (cheap loops need more elements to pay for threads).
struct kernel {
    loop_fn fn = nullptr;
    dtype out = dtype::bool_;
    int64_t grain = parallel_grain;
};

/// Grain for loops that cost tens of cycles per element (transcendentals, integer division).
inline constexpr int64_t expensive_grain = 4096;

/// The dtype a CPU kernel computes in for a logical compute dtype.
///
/// Note [half compute]
/// ~~~~~~~~~~~~~~~~~~~
/// float16 and bfloat16 have no CPU arithmetic; their kernels are the float32 ones, fed by
/// per-block conversion. This halves the kernel instantiations and gives NumPy's results (compute
/// in float, round once on store).
inline dtype kernel_dtype(dtype compute) {
    return compute == dtype::float16 || compute == dtype::bfloat16 ? dtype::float32 : compute;
}

/// Runs `fn` over `shape` for N operands (operand 0 the output). Operand i is converted to
/// `kdt[i]` (inputs) or from `kdt[0]` (output) when its dtype differs.
///
/// Note [elementwise conversion]
/// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
/// An op never materialises converted copies of its inputs. When every operand already has the
/// kernel's dtype the loop runs directly on the strided rows (the common, fast case). Otherwise
/// each row is cut into blocks of `block` elements; an input block is converted into a small stack
/// buffer (one element when the input is broadcast with stride 0, keeping the kernel's scalar fast
/// path), the loop runs on the buffers, and the output block is converted back. Only 15x15
/// conversion loops and one loop per (op, kernel dtype) are compiled, instead of one per (op,
/// dtype, dtype) triple.
template <int N>
void run_kernel(const shape_t& shape, const std::array<operand, N>& ops,
                const std::array<dtype, N>& kdt, loop_fn fn, int64_t grain);

extern template void run_kernel<2>(const shape_t&, const std::array<operand, 2>&,
                                   const std::array<dtype, 2>&, loop_fn, int64_t);
extern template void run_kernel<3>(const shape_t&, const std::array<operand, 3>&,
                                   const std::array<dtype, 3>&, loop_fn, int64_t);
extern template void run_kernel<4>(const shape_t&, const std::array<operand, 4>&,
                                   const std::array<dtype, 4>&, loop_fn, int64_t);

/// Converts n elements from `src` (byte stride ss) to `dst` (byte stride ds).
using convert_fn = void (*)(const char* src, int64_t ss, char* dst, int64_t ds, int64_t n);
/// The conversion loop between two dtypes (NumPy's unsafe cast, as cpu::convert).
convert_fn converter(dtype from, dtype to);

// Kernel families, one translation unit each. They return an empty kernel (fn == nullptr) for
// dtypes the op layer's type rules never send them.
kernel arith_kernel(binary_op op, dtype k);   ///< is_arith_family
kernel divmod_kernel(binary_op op, dtype k);  ///< rule divmod
kernel compare_kernel(binary_op op, dtype k); ///< rules equality, order, logical
kernel bitwise_kernel(binary_op op, dtype k); ///< rules bitwise, shift
kernel math_kernel(unary_op op, dtype k);     ///< rule math
kernel basic_kernel(unary_op op, dtype k);    ///< the other unary ops

/// The families by the op table's rule column (Note [element functors by op]).
constexpr bool is_math_family(unary_op op) {
    return rule(op) == unary_rule::math || rule(op) == unary_rule::math_real;
}
constexpr bool is_basic_family(unary_op op) {
    return !is_math_family(op) && rule(op) != unary_rule::real_part &&
           rule(op) != unary_rule::imag_part;
}
constexpr bool is_divmod_family(binary_op op) {
    return rule(op) == binary_rule::divmod;
}
constexpr bool is_compare_family(binary_op op) {
    return rule(op) == binary_rule::equality || rule(op) == binary_rule::order ||
           rule(op) == binary_rule::logical;
}
constexpr bool is_bitwise_family(binary_op op) {
    return rule(op) == binary_rule::bitwise || rule(op) == binary_rule::shift;
}
constexpr bool is_arith_family(binary_op op) {
    return !is_divmod_family(op) && !is_compare_family(op) && !is_bitwise_family(op);
}

} // namespace isthmus::cpu
