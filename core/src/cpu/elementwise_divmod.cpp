// CPU kernels: floor division and Python-style modulo (the element functions:
// kernels/element_functions.hpp).
#include "cpu/elementwise_loops.hpp"

#include <cmath>

namespace isthmus::cpu {

namespace {

struct floor_div_f {
    template <typename T>
    static constexpr bool supports = is_int_v<T> || is_real_v<T>;
    template <typename T>
    static T apply(T a, T b) {
        if constexpr (is_int_v<T>)
            return elem::int_floor_div(a, b);
        else
            return elem::float_floor_div(a, b);
    }
};

struct mod_f {
    template <typename T>
    static constexpr bool supports = is_int_v<T> || is_real_v<T>;
    template <typename T>
    static T apply(T a, T b) {
        if constexpr (is_int_v<T>)
            return elem::int_mod(a, b);
        else
            return elem::float_mod(a, b);
    }
};

} // namespace

kernel divmod_kernel(binary_op op, dtype k) {
    switch (op) {
    case binary_op::floor_div:
        return binary_kernel_for<floor_div_f>(k, expensive_grain);
    case binary_op::mod:
        return binary_kernel_for<mod_f>(k, expensive_grain);
    default:
        return {};
    }
}

} // namespace isthmus::cpu
