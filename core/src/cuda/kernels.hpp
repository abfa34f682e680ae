// The CUDA kernels' launch functions, in plain types (the .cu files include no runtime header).
#pragma once

#include "isthmus/ops/op_enums.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace isthmus::cudak {

/// Element types the kernels know (the backend maps isthmus dtypes onto these one to one).
enum class kdt : int { b8, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32, f64, c64, c128 };

constexpr bool is_signed(kdt t) {
    return t == kdt::i8 || t == kdt::i16 || t == kdt::i32 || t == kdt::i64;
}
constexpr bool is_unsigned(kdt t) {
    return t == kdt::u8 || t == kdt::u16 || t == kdt::u32 || t == kdt::u64;
}
/// Signed or unsigned integers (not bool).
constexpr bool is_int(kdt t) {
    return is_signed(t) || is_unsigned(t);
}
/// float16, bfloat16, float32, float64.
constexpr bool is_float(kdt t) {
    return t == kdt::f16 || t == kdt::bf16 || t == kdt::f32 || t == kdt::f64;
}
constexpr bool is_cplx(kdt t) {
    return t == kdt::c64 || t == kdt::c128;
}

/// Binary ops with GPU kernels: the op table's binary_op itself (Note [one op table]).
using bop = isthmus::binary_op;
/// Unary ops with GPU kernels: the op table's unary_op (real and imag have none).
using uop = isthmus::unary_op;

/// Note [kernel support table]
/// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
/// binary_ok/unary_ok are the one list of (op, compute type) pairs with kernels, by the op table's
/// rule column (which also decides what the op layer sends here). The backend's supports_* answer
/// from them and the .cu files instantiate exactly these pairs (`if constexpr`), so the two can
/// never disagree. Half types compute in float (loaded, computed in float32, rounded once on store,
/// as the CPU path).
constexpr bool binary_ok(bop op, kdt t) {
    switch (rule(op)) {
    case binary_rule::arith: // bool operands never get here (logical ops or int8 instead)
        return t != kdt::b8;
    case binary_rule::true_div:
        return is_float(t) || is_cplx(t);
    case binary_rule::divmod:
    case binary_rule::extremum:
        return is_int(t) || is_float(t);
    case binary_rule::math:
        return is_float(t);
    case binary_rule::equality:
    case binary_rule::logical:
        return true;
    case binary_rule::order:
        return !is_cplx(t);
    case binary_rule::bitwise:
        return t == kdt::b8 || is_int(t);
    case binary_rule::shift:
        return is_int(t);
    }
    return false;
}

/// True for the binary ops whose result is bool (b8) rather than the compute type.
constexpr bool binary_gives_bool(bop op) {
    return gives_bool(rule(op));
}

/// The binary ops elementwise_logic.cu compiles (bool results, bitwise ops and shifts);
/// elementwise_arith.cu compiles the others.
constexpr bool logic_family(bop op) {
    return binary_gives_bool(op) || rule(op) == binary_rule::bitwise ||
           rule(op) == binary_rule::shift;
}

constexpr bool unary_ok(uop op, kdt t) {
    switch (rule(op)) {
    case unary_rule::negate:
    case unary_rule::same:
    case unary_rule::magnitude:
        return t != kdt::b8;
    case unary_rule::logical:
        return true;
    case unary_rule::bitwise:
        return t == kdt::b8 || is_int(t);
    case unary_rule::complex_only:
        return is_cplx(t);
    case unary_rule::keep_int_real:
    case unary_rule::math_real:
        return is_float(t);
    case unary_rule::sign_bit:
        return is_float(t) || is_int(t);
    case unary_rule::math: // complex ones as std::complex's
    case unary_rule::keep_int:
    case unary_rule::test_false:
    case unary_rule::test_true:
    case unary_rule::inverse:
        return is_float(t) || is_cplx(t);
    case unary_rule::real_part:
    case unary_rule::imag_part:
        return false; // views or copies, never a kernel
    }
    return false;
}

/// The transcendental unary ops (rule math): their complex kernels live in
/// elementwise_cmath.cu (with complex pow), so that the other elementwise files never compile
/// the complex functions.
constexpr bool complex_math(uop op) {
    return rule(op) == unary_rule::math;
}

/// The result type of unary op `op` on compute type `t`: bool for the tests, the real type for
/// abs of a complex, else `t`.
constexpr kdt unary_result(uop op, kdt t) {
    if (gives_bool(rule(op))) return kdt::b8;
    if (rule(op) == unary_rule::magnitude && t == kdt::c64) return kdt::f32;
    if (rule(op) == unary_rule::magnitude && t == kdt::c128) return kdt::f64;
    return t;
}

/// Ternary ops with GPU kernels (same order as backend::ternary_op).
enum class top : int { where, clamp, fma };

/// where(cond, a, b) and fma(a, b, c): any type (cond is b8); clamp(x, lo, hi): integers and
/// floats.
constexpr bool ternary_ok(top op, kdt t) {
    return op != top::clamp || is_int(t) || is_float(t);
}

/// Reductions with GPU kernels (same order as backend::reduce_kind).
enum class rop : int { sum, mean, min, max, prod, any, all, argmin, argmax };

/// True when the reduction kernels take (op, input type, output type): any/all give bool,
/// argmin/argmax int64 indices, the others any real output type the op layer asks for (the
/// CPU's result dtypes: sums of integers in int64/uint64, means in float64, ...); complex
/// inputs give their own type (sums, means and products accumulated in complex128, min/max
/// and argmin/argmax ordered lexicographically, as the CPU).
constexpr bool reduce_ok(rop op, kdt in, kdt out) {
    if (op == rop::any || op == rop::all) return out == kdt::b8;
    if (op == rop::argmin || op == rop::argmax) return out == kdt::i64;
    if (is_cplx(in) || is_cplx(out)) return out == in;
    return true;
}

inline constexpr int max_dims = 32;

/// One strided operand of an elementwise launch: element 0's address (nullptr: a scalar held
/// in `value`) and strides in elements over the launch's (coalesced) shape.
struct arg {
    const void* data = nullptr;
    int64_t strides[max_dims] = {};
    alignas(16) unsigned char value[16] = {};
};

/// The iteration space of an elementwise launch, dims coalesced where every operand allows.
struct space {
    int rank = 0;
    int64_t shape[max_dims] = {};
    int64_t numel = 0;
    bool contiguous = false; ///< every tensor operand is dense and row-major over the space
};

/// out = op(a, b); a and b of type `t`; out of type `t`, or b8 (binary_gives_bool). Only pairs
/// with binary_ok(op, t) launch anything.
void launch_binary(cudaStream_t s, bop op, kdt t, const space& sp, const arg& out, const arg& a,
                   const arg& b);
/// out = op(a); a of type `t`; out of type unary_result(op, t). Only unary_ok pairs launch.
void launch_unary(cudaStream_t s, uop op, kdt t, const space& sp, const arg& out, const arg& a);
/// where: out = a ? b : c with a of type b8; clamp: out = minimum(maximum(a, b), c) (NaN
/// propagates); fma: out = a * b + c (integers wrap, bool: (a and b) or c); b, c and out of
/// type `t` (and a too for clamp and fma).
void launch_ternary(cudaStream_t s, top op, kdt t, const space& sp, const arg& out, const arg& a,
                    const arg& b, const arg& c);
/// out = in converted with the CPU's cast rules (in may be a scalar: a fill).
void launch_copy(cudaStream_t s, kdt out_t, kdt in_t, const space& sp, const arg& out,
                 const arg& in);
/// Row reductions of a contiguous (rows, cols) input into `rows` outputs; `scratch` holds
/// rows * reduce_chunks(op, rows, cols) accumulators of reduce_acc_bytes each when that is
/// above 1.
/// argmin/argmax write the first index of the extreme in each row (a NaN wins).
int64_t reduce_chunks(rop op, int64_t rows, int64_t cols);
/// The size of one partial accumulator in launch_reduce's scratch (a complex128 at most).
inline constexpr int64_t reduce_acc_bytes = 16;
void launch_reduce(cudaStream_t s, rop op, kdt in_t, kdt out_t, int64_t rows, int64_t cols,
                   const void* in, void* out, void* scratch);
/// Fills `n` contiguous elements of real floating type `t` (f16, bf16, f32, f64) from Philox
/// blocks first_block... under `seed`, exactly as the CPU's random_real: uniform in [a, b), or
/// normal(mean a, std b) when `normal`.
void launch_random_real(cudaStream_t s, kdt t, bool normal, void* data, int64_t n, uint64_t seed,
                        uint64_t first_block, double a, double b);
/// Fills `n` elements of the real type `t` with integers lo + [0, range), as the CPU's
/// random_int.
void launch_random_int(cudaStream_t s, kdt t, void* data, int64_t n, uint64_t seed,
                       uint64_t first_block, int64_t lo, uint64_t range);
/// Cumulative sums/products run on the op layer's work types (int64, uint64, float32, float64,
/// complex64, complex128).
constexpr bool cumulative_ok(kdt t) {
    return t == kdt::i64 || t == kdt::u64 || t == kdt::f32 || t == kdt::f64 || is_cplx(t);
}
/// The bytes of one cumulative accumulator for work type `t` (complex128 for complex types).
constexpr int64_t cumulative_acc_bytes(kdt t) {
    return is_cplx(t) ? 16 : 8;
}
/// The chunks each line of a (pre, len, post) cumulative op is cut into; launch_cumulative's
/// `scratch` holds pre * post * chunks accumulators of cumulative_acc_bytes when that is above 1.
int64_t cumulative_chunks(int64_t pre, int64_t len, int64_t post);
/// out = the inclusive running sum (or product) along the middle axis of a contiguous
/// (pre, len, post) `in` of type `t` (float32 accumulates in double, integers wrap in uint64).
void launch_cumulative(cudaStream_t s, bool prod, kdt t, int64_t pre, int64_t len, int64_t post,
                       const void* in, void* out, void* scratch);
/// Sorts and searchsorted have kernels for every real type and bool (Note [gpu sort] in
/// sort.cu); complex ones run on the CPU.
constexpr bool sort_ok(kdt t) {
    return !is_cplx(t);
}
/// The device scratch launch_sort needs for `rows` rows of `len` elements of type t (asks CUB,
/// which reads the current device's properties).
size_t sort_scratch_bytes(cudaStream_t s, kdt t, int64_t rows, int64_t len);
/// Sorts each row of the contiguous (rows, len) `in` into `values` and/or the rows' int64
/// positions into `indices` (either may be null), ascending or descending, stable, in Note
/// [sort order] (core/src/cpu/sort.cpp). Returns the first CUDA error.
cudaError_t launch_sort(cudaStream_t s, kdt t, int64_t rows, int64_t len, const void* in,
                        void* values, int64_t* indices, bool descending, void* scratch,
                        size_t scratch_bytes);
/// out[i] = the insertion point of values[i] (m of them) in the ascending `sorted` (n > 0
/// elements) in Note [sort order]: before equal elements, or after them when `right`.
void launch_searchsorted(cudaStream_t s, kdt t, const void* sorted, int64_t n, const void* values,
                         int64_t m, int64_t* out, bool right);
/// The element layout of an advanced-index gather or scatter beyond its rows: the "rest" shape
/// with the byte strides of the row-indexed side (`a`: the source of a gather, the target of a
/// scatter) and of the dense side (`b`: the output of a gather, the values of a scatter).
struct rest_layout {
    int rank = 0;
    int64_t shape[max_dims] = {};
    int64_t a[max_dims] = {};
    int64_t b[max_dims] = {};
    int64_t numel = 1;
};
/// Gather (scatter == false): b_base + r * b_row + b(rest) = a_base + row_off[r] + a(rest) for
/// r < rows; scatter: the other direction. Elements of `itemsize` bytes (1, 2, 4, 8 or 16);
/// row_off is a device array of byte offsets.
void launch_index(cudaStream_t s, bool scatter, size_t itemsize, int64_t rows,
                  const int64_t* row_off, void* a_base, void* b_base, int64_t b_row,
                  const rest_layout& rest);
/// True when launch_gemm has a kernel for `t`: every type (floats and complex use it only in
/// builds without cuBLAS; integers and bool always).
constexpr bool gemm_ok(kdt t) {
    return t == kdt::b8 || is_int(t) || is_float(t) || is_cplx(t);
}
/// True for the types cuBLAS multiplies when the build has it (f16, bf16, f32, f64, c64, c128).
constexpr bool gemm_blas(kdt t) {
    return is_float(t) || is_cplx(t);
}
/// C = A @ B for `batch` contiguous row-major matrices; half types accumulate in float and
/// round once on store; integers wrap in their width and bool is or-of-ands (Note [integer
/// gemm] in gemm.cuh).
void launch_gemm(cudaStream_t s, kdt t, int64_t batch, int64_t m, int64_t n, int64_t k,
                 const void* a, const void* b, void* c);

} // namespace isthmus::cudak
