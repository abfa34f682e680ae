// CPU kernels: where (a byte-size select) and clamp (a fused maximum/minimum).
#include "cpu/elementwise_loops.hpp"

namespace isthmus::cpu {

namespace {

// Note [where by size]
// ~~~~~~~~~~~~~~~~~~~~
// where() moves elements without looking at them, so its loop only depends on the item size: five
// instantiations serve all fifteen dtypes.
struct bytes16 {
    uint64_t lo, hi;
};

template <typename U>
void where_loop(char** p, const int64_t* s, int64_t n) {
    constexpr auto su = static_cast<int64_t>(sizeof(U));
    if (s[0] == su && s[1] == 1 && s[2] == su && s[3] == su) {
        U* o = reinterpret_cast<U*>(p[0]);
        const auto* c = reinterpret_cast<const uint8_t*>(p[1]);
        const U* a = reinterpret_cast<const U*>(p[2]);
        const U* b = reinterpret_cast<const U*>(p[3]);
        if constexpr (std::is_integral_v<U>) {
            // A branch-free blend (all-ones mask where c is set) that GCC vectorises.
            for (int64_t i = 0; i < n; ++i) {
                const U m = static_cast<U>(U(0) - static_cast<U>(c[i] != 0));
                o[i] = static_cast<U>((a[i] & m) | (b[i] & static_cast<U>(~m)));
            }
        } else {
            for (int64_t i = 0; i < n; ++i) o[i] = c[i] ? a[i] : b[i];
        }
        return;
    }
    char* o = p[0];
    const char* c = p[1];
    const char* a = p[2];
    const char* b = p[3];
    for (int64_t i = 0; i < n; ++i, o += s[0], c += s[1], a += s[2], b += s[3])
        *reinterpret_cast<U*>(o) = *reinterpret_cast<const uint8_t*>(c)
                                       ? *reinterpret_cast<const U*>(a)
                                       : *reinterpret_cast<const U*>(b);
}

template <typename T>
T clamp_one(T x, T lo, T hi) {
    return elem::clamp(x, lo, hi);
}

template <typename T>
ISTHMUS_SIMD_CLONES void clamp_loop(char** p, const int64_t* s, int64_t n) {
    constexpr auto st = static_cast<int64_t>(sizeof(T));
    T* o = reinterpret_cast<T*>(p[0]);
    const T* x = reinterpret_cast<const T*>(p[1]);
    const T* lo = reinterpret_cast<const T*>(p[2]);
    const T* hi = reinterpret_cast<const T*>(p[3]);
    if (s[0] == st && s[1] == st && s[2] == 0 && s[3] == 0) {
        const T l = *lo, h = *hi;
        for (int64_t i = 0; i < n; ++i) o[i] = clamp_one(x[i], l, h);
        return;
    }
    if (s[0] == st && s[1] == st && s[2] == st && s[3] == st) {
        for (int64_t i = 0; i < n; ++i) o[i] = clamp_one(x[i], lo[i], hi[i]);
        return;
    }
    char* op = p[0];
    const char* xp = p[1];
    const char* lp = p[2];
    const char* hp = p[3];
    for (int64_t i = 0; i < n; ++i, op += s[0], xp += s[1], lp += s[2], hp += s[3])
        *reinterpret_cast<T*>(op) =
            clamp_one(*reinterpret_cast<const T*>(xp), *reinterpret_cast<const T*>(lp),
                      *reinterpret_cast<const T*>(hp));
}

loop_fn where_loop_for(size_t size) {
    switch (size) {
    case 1:
        return &where_loop<uint8_t>;
    case 2:
        return &where_loop<uint16_t>;
    case 4:
        return &where_loop<uint32_t>;
    case 8:
        return &where_loop<uint64_t>;
    default:
        return &where_loop<bytes16>;
    }
}

} // namespace

void where(const shape_t& shape, const operand& out, const operand& cond, const operand& a,
           const operand& b) {
    run_kernel<4>(shape, {out, cond, a, b}, {out.dt, dtype::bool_, out.dt, out.dt},
                  where_loop_for(itemsize(out.dt)), parallel_grain);
}

void clamp(dtype compute, const shape_t& shape, const operand& out, const operand& x,
           const operand& lo, const operand& hi) {
    const dtype k = kernel_dtype(compute);
    const kernel kl = for_kernel_dtype(k, []<typename T>() -> kernel {
        if constexpr (is_complex_v<T>)
            return {};
        else
            return {&clamp_loop<T>, dtype_of_v<T>, parallel_grain};
    });
    ISTHMUS_ASSERT(kl.fn != nullptr, "no CPU clamp kernel for ", k);
    run_kernel<4>(shape, {out, x, lo, hi}, {k, k, k, k}, kl.fn, kl.grain);
}

} // namespace isthmus::cpu
