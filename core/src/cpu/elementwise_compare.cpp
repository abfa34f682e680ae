// CPU kernels: comparisons and logical and/or/xor (bool results).
#include "cpu/elementwise_loops.hpp"

namespace isthmus::cpu {

namespace {

template <typename T>
inline constexpr bool ordered_v = !is_complex_v<T>;
template <typename T>
inline constexpr bool bool_v = std::is_same_v<T, bool>;

struct eq_f {
    template <typename T>
    static constexpr bool supports = true;
    template <typename T>
    static bool apply(T a, T b) {
        return a == b;
    }
};
struct ne_f {
    template <typename T>
    static constexpr bool supports = true;
    template <typename T>
    static bool apply(T a, T b) {
        return a != b;
    }
};
struct lt_f {
    template <typename T>
    static constexpr bool supports = ordered_v<T>;
    template <typename T>
    static bool apply(T a, T b) {
        return a < b;
    }
};
struct le_f {
    template <typename T>
    static constexpr bool supports = ordered_v<T>;
    template <typename T>
    static bool apply(T a, T b) {
        return a <= b;
    }
};
struct gt_f {
    template <typename T>
    static constexpr bool supports = ordered_v<T>;
    template <typename T>
    static bool apply(T a, T b) {
        return a > b;
    }
};
struct ge_f {
    template <typename T>
    static constexpr bool supports = ordered_v<T>;
    template <typename T>
    static bool apply(T a, T b) {
        return a >= b;
    }
};

// Logical ops run on bool only: the executor converts other dtypes to bool (x != 0) per block.
struct logical_and_f {
    template <typename T>
    static constexpr bool supports = bool_v<T>;
    static bool apply(bool a, bool b) { return a && b; }
};
struct logical_or_f {
    template <typename T>
    static constexpr bool supports = bool_v<T>;
    static bool apply(bool a, bool b) { return a || b; }
};
struct logical_xor_f {
    template <typename T>
    static constexpr bool supports = bool_v<T>;
    static bool apply(bool a, bool b) { return a != b; }
};

} // namespace

kernel compare_kernel(binary_op op, dtype k) {
    switch (op) {
    case binary_op::eq:
        return binary_kernel_for<eq_f>(k);
    case binary_op::ne:
        return binary_kernel_for<ne_f>(k);
    case binary_op::lt:
        return binary_kernel_for<lt_f>(k);
    case binary_op::le:
        return binary_kernel_for<le_f>(k);
    case binary_op::gt:
        return binary_kernel_for<gt_f>(k);
    case binary_op::ge:
        return binary_kernel_for<ge_f>(k);
    case binary_op::logical_and:
        return binary_kernel_for<logical_and_f>(k);
    case binary_op::logical_or:
        return binary_kernel_for<logical_or_f>(k);
    case binary_op::logical_xor:
        return binary_kernel_for<logical_xor_f>(k);
    default:
        return {};
    }
}

} // namespace isthmus::cpu
