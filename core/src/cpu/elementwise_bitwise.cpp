// CPU kernels: bitwise and/or/xor and shifts on bool and integers.
#include "cpu/elementwise_loops.hpp"

namespace isthmus::cpu {

namespace {

// The element functors, by op (Note [element functors by op]).
template <binary_op OP>
struct fn;

template <typename T>
inline constexpr bool bits_v = std::is_integral_v<T>;

template <>
struct fn<binary_op::bit_and> {
    template <typename T>
    static constexpr bool supports = bits_v<T>;
    template <typename T>
    static T apply(T a, T b) {
        return static_cast<T>(a & b);
    }
};
template <>
struct fn<binary_op::bit_or> {
    template <typename T>
    static constexpr bool supports = bits_v<T>;
    template <typename T>
    static T apply(T a, T b) {
        return static_cast<T>(a | b);
    }
};
template <>
struct fn<binary_op::bit_xor> {
    template <typename T>
    static constexpr bool supports = bits_v<T>;
    template <typename T>
    static T apply(T a, T b) {
        return static_cast<T>(a ^ b);
    }
};

// Note [shift counts] in kernels/element_functions.hpp.
template <>
struct fn<binary_op::shift_left> {
    template <typename T>
    static constexpr bool supports = is_int_v<T>;
    template <typename T>
    static T apply(T a, T b) {
        return elem::shift_left(a, b);
    }
};
template <>
struct fn<binary_op::shift_right> {
    template <typename T>
    static constexpr bool supports = is_int_v<T>;
    template <typename T>
    static T apply(T a, T b) {
        return elem::shift_right(a, b);
    }
};

} // namespace

kernel bitwise_kernel(binary_op op, dtype k) {
    return binary_kernel_by_op<fn, is_bitwise_family>(op, k);
}

} // namespace isthmus::cpu
