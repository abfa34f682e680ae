// The elementwise op enums and their rules, expanded from the op table (nvcc includes it too).
#pragma once

#include "isthmus/ops/op_table.hpp"

namespace isthmus {

// clang-format off
#define ISTHMUS_OP_ENUMERATOR(name, ...) name,
/// Unary elementwise operations: the rows of ISTHMUS_UNARY_OPS, then ISTHMUS_UNARY_PART_OPS
/// (op_table.hpp documents each; so does the ops table in docs/ops.md). "Math" ops on bool and
/// integers compute in promote_types(dtype, float16), as NumPy does: int8/uint8/bool ->
/// float16, int16/uint16 -> float32, wider integers -> float64. float16/bfloat16 compute in
/// float32 and round back.
enum class unary_op : uint8_t {
    ISTHMUS_UNARY_OPS(ISTHMUS_OP_ENUMERATOR)
    ISTHMUS_UNARY_PART_OPS(ISTHMUS_OP_ENUMERATOR)
};
/// Binary elementwise operations: the rows of ISTHMUS_BINARY_OPS (op_table.hpp).
enum class binary_op : uint8_t { ISTHMUS_BINARY_OPS(ISTHMUS_OP_ENUMERATOR) };
#undef ISTHMUS_OP_ENUMERATOR

#define ISTHMUS_OP_COUNT(...) +1
/// The number of unary ops (the enum's values are 0 .. unary_op_count - 1).
inline constexpr int unary_op_count =
    0 ISTHMUS_UNARY_OPS(ISTHMUS_OP_COUNT) ISTHMUS_UNARY_PART_OPS(ISTHMUS_OP_COUNT);
/// The number of binary ops.
inline constexpr int binary_op_count = 0 ISTHMUS_BINARY_OPS(ISTHMUS_OP_COUNT);
#undef ISTHMUS_OP_COUNT

/// The op's dtype rule (its row's `rule` column).
constexpr unary_rule rule(unary_op op) noexcept {
    switch (op) {
#define ISTHMUS_OP_RULE(name, r, ...) case unary_op::name: return unary_rule::r;
    ISTHMUS_UNARY_OPS(ISTHMUS_OP_RULE) ISTHMUS_UNARY_PART_OPS(ISTHMUS_OP_RULE)
#undef ISTHMUS_OP_RULE
    }
    return unary_rule::same;
}
/// The op's dtype rule (its row's `rule` column).
constexpr binary_rule rule(binary_op op) noexcept {
    switch (op) {
#define ISTHMUS_OP_RULE(name, r, ...) case binary_op::name: return binary_rule::r;
    ISTHMUS_BINARY_OPS(ISTHMUS_OP_RULE)
#undef ISTHMUS_OP_RULE
    }
    return binary_rule::arith;
}
/// What the op does with bool operands (its row's `on_bool` column).
constexpr binary_bool on_bool(binary_op op) noexcept {
    switch (op) {
#define ISTHMUS_OP_BOOL(name, r, b, ...) case binary_op::name: return binary_bool::b;
    ISTHMUS_BINARY_OPS(ISTHMUS_OP_BOOL)
#undef ISTHMUS_OP_BOOL
    }
    return binary_bool::keep;
}
// clang-format on

/// True for the rules whose result is bool whatever the input.
constexpr bool gives_bool(unary_rule r) noexcept {
    return r == unary_rule::test_false || r == unary_rule::test_true || r == unary_rule::sign_bit ||
           r == unary_rule::logical;
}
/// True for the rules whose result is bool whatever the operands.
constexpr bool gives_bool(binary_rule r) noexcept {
    return r == binary_rule::equality || r == binary_rule::order || r == binary_rule::logical;
}

} // namespace isthmus
