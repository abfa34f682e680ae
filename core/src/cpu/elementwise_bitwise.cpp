// CPU kernels: bitwise and/or/xor and shifts on bool and integers.
#include "cpu/elementwise_loops.hpp"

namespace isthmus::cpu {

namespace {

template <typename T>
inline constexpr bool bits_v = std::is_integral_v<T>;

struct bit_and_f {
    template <typename T>
    static constexpr bool supports = bits_v<T>;
    template <typename T>
    static T apply(T a, T b) {
        return static_cast<T>(a & b);
    }
};
struct bit_or_f {
    template <typename T>
    static constexpr bool supports = bits_v<T>;
    template <typename T>
    static T apply(T a, T b) {
        return static_cast<T>(a | b);
    }
};
struct bit_xor_f {
    template <typename T>
    static constexpr bool supports = bits_v<T>;
    template <typename T>
    static T apply(T a, T b) {
        return static_cast<T>(a ^ b);
    }
};

// Note [shift counts] in kernels/element_functions.hpp.
struct shift_left_f {
    template <typename T>
    static constexpr bool supports = is_int_v<T>;
    template <typename T>
    static T apply(T a, T b) {
        return elem::shift_left(a, b);
    }
};
struct shift_right_f {
    template <typename T>
    static constexpr bool supports = is_int_v<T>;
    template <typename T>
    static T apply(T a, T b) {
        return elem::shift_right(a, b);
    }
};

} // namespace

kernel bitwise_kernel(binary_op op, dtype k) {
    switch (op) {
    case binary_op::bit_and:
        return binary_kernel_for<bit_and_f>(k);
    case binary_op::bit_or:
        return binary_kernel_for<bit_or_f>(k);
    case binary_op::bit_xor:
        return binary_kernel_for<bit_xor_f>(k);
    case binary_op::shift_left:
        return binary_kernel_for<shift_left_f>(k);
    case binary_op::shift_right:
        return binary_kernel_for<shift_right_f>(k);
    default:
        return {};
    }
}

} // namespace isthmus::cpu
