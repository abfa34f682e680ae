// CPU kernels: floor division and Python-style modulo (the element functions:
// kernels/element_functions.hpp).
#include "cpu/elementwise_loops.hpp"

#include <cmath>

namespace isthmus::cpu {

namespace {

// The element functors, by op (Note [element functors by op]).
template <binary_op OP>
struct fn;

template <>
struct fn<binary_op::floor_div> {
    static constexpr int64_t grain = expensive_grain;
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

template <>
struct fn<binary_op::mod> {
    static constexpr int64_t grain = expensive_grain;
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
    return binary_kernel_by_op<fn, is_divmod_family>(op, k);
}

} // namespace isthmus::cpu
