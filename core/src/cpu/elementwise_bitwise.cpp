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

// Note [shift counts]: C++ leaves shifts by >= the bit width (or negative) undefined; NumPy
// defines them: a left shift gives 0, a right shift gives 0 or -1 (the sign). The count is
// compared as unsigned, so negative counts take the same branch, as in NumPy's npy_lshift.
struct shift_left_f {
    template <typename T>
    static constexpr bool supports = is_int_v<T>;
    template <typename T>
    static T apply(T a, T b) {
        if (static_cast<std::make_unsigned_t<T>>(b) >= sizeof(T) * 8) return 0;
        return static_cast<T>(static_cast<wrap_t<T>>(a) << b);
    }
};
struct shift_right_f {
    template <typename T>
    static constexpr bool supports = is_int_v<T>;
    template <typename T>
    static T apply(T a, T b) {
        if (static_cast<std::make_unsigned_t<T>>(b) >= sizeof(T) * 8) {
            if constexpr (std::is_signed_v<T>)
                return a < 0 ? T(-1) : T(0);
            else
                return 0;
        }
        return static_cast<T>(a >> b);
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
