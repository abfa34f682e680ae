// CPU kernels: comparisons and logical and/or/xor (bool results).
#include "cpu/elementwise_loops.hpp"

namespace isthmus::cpu {

namespace {

// The element functors, by op (Note [element functors by op]).
template <binary_op OP>
struct fn;

template <typename T>
inline constexpr bool ordered_v = !is_complex_v<T>;
template <typename T>
inline constexpr bool bool_v = std::is_same_v<T, bool>;

template <>
struct fn<binary_op::eq> {
    template <typename T>
    static constexpr bool supports = true;
    template <typename T>
    static bool apply(T a, T b) {
        return a == b;
    }
};
template <>
struct fn<binary_op::ne> {
    template <typename T>
    static constexpr bool supports = true;
    template <typename T>
    static bool apply(T a, T b) {
        return a != b;
    }
};
template <>
struct fn<binary_op::lt> {
    template <typename T>
    static constexpr bool supports = ordered_v<T>;
    template <typename T>
    static bool apply(T a, T b) {
        return a < b;
    }
};
template <>
struct fn<binary_op::le> {
    template <typename T>
    static constexpr bool supports = ordered_v<T>;
    template <typename T>
    static bool apply(T a, T b) {
        return a <= b;
    }
};
template <>
struct fn<binary_op::gt> {
    template <typename T>
    static constexpr bool supports = ordered_v<T>;
    template <typename T>
    static bool apply(T a, T b) {
        return a > b;
    }
};
template <>
struct fn<binary_op::ge> {
    template <typename T>
    static constexpr bool supports = ordered_v<T>;
    template <typename T>
    static bool apply(T a, T b) {
        return a >= b;
    }
};

// Logical ops run on bool only: the executor converts other dtypes to bool (x != 0) per block.
template <>
struct fn<binary_op::logical_and> {
    template <typename T>
    static constexpr bool supports = bool_v<T>;
    static bool apply(bool a, bool b) { return a && b; }
};
template <>
struct fn<binary_op::logical_or> {
    template <typename T>
    static constexpr bool supports = bool_v<T>;
    static bool apply(bool a, bool b) { return a || b; }
};
template <>
struct fn<binary_op::logical_xor> {
    template <typename T>
    static constexpr bool supports = bool_v<T>;
    static bool apply(bool a, bool b) { return a != b; }
};

} // namespace

kernel compare_kernel(binary_op op, dtype k) {
    return binary_kernel_by_op<fn, is_compare_family>(op, k);
}

} // namespace isthmus::cpu
