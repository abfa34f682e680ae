// The CPU elementwise executor (per-block conversion) and the CPU entry points of the op layer.
#include "cpu/elementwise_exec.hpp"
#include "cpu/convert.hpp"

#include <algorithm>
#include <atomic>

namespace isthmus::cpu {

namespace {

constexpr int64_t block = 256;  // elements per conversion block
constexpr size_t max_item = 16; // the largest itemsize (complex128)

kernel binary_kernel(binary_op op, dtype k) {
    if (is_divmod_family(op)) return divmod_kernel(op, k);
    if (is_compare_family(op)) return compare_kernel(op, k);
    if (is_bitwise_family(op)) return bitwise_kernel(op, k);
    return arith_kernel(op, k);
}

template <typename T>
void negative_loop(const strided_plan<1>& plan, char* data, std::atomic<bool>& found) {
    run_plan<1>(plan, {data}, [&](char** p, const int64_t* s, int64_t n) {
        if (found.load(std::memory_order_relaxed)) return;
        bool neg = false;
        if (s[0] == static_cast<int64_t>(sizeof(T))) {
            const T* a = reinterpret_cast<const T*>(p[0]);
            for (int64_t i = 0; i < n; ++i) neg |= a[i] < 0;
        } else {
            const char* a = p[0];
            for (int64_t i = 0; i < n; ++i, a += s[0]) neg |= *reinterpret_cast<const T*>(a) < 0;
        }
        if (neg) found.store(true, std::memory_order_relaxed);
    });
}

} // namespace

template <int N>
void run_kernel(const shape_t& shape, const std::array<operand, N>& ops,
                const std::array<dtype, N>& kdt, loop_fn fn, int64_t grain) {
    std::array<const shape_t*, N> strides;
    std::array<int64_t, N> isz;
    std::array<char*, N> base;
    bool direct = true;
    for (size_t i = 0; i < N; ++i) {
        strides[i] = ops[i].strides;
        isz[i] = static_cast<int64_t>(itemsize(ops[i].dt));
        base[i] = ops[i].data;
        direct = direct && ops[i].dt == kdt[i];
    }
    const strided_plan<N> plan = make_plan<N>(shape, strides, isz);
    if (direct) {
        run_plan<N>(plan, base, fn, grain);
        return;
    }
    // See Note [elementwise conversion].
    std::array<convert_fn, N> conv{};
    std::array<int64_t, N> ksz;
    for (size_t i = 0; i < N; ++i) {
        ksz[i] = static_cast<int64_t>(itemsize(kdt[i]));
        if (ops[i].dt != kdt[i])
            conv[i] = i == 0 ? converter(kdt[0], ops[0].dt) : converter(ops[i].dt, kdt[i]);
    }
    run_plan<N>(
        plan, base,
        [&](char** p, const int64_t* s, int64_t n) {
            alignas(64) unsigned char buf[N][block * max_item];
            char* q[N];
            int64_t qs[N];
            for (size_t i = 1; i < N; ++i)
                if (conv[i] && s[i] == 0) conv[i](p[i], 0, reinterpret_cast<char*>(buf[i]), 0, 1);
            for (int64_t k = 0; k < n; k += block) {
                const int64_t m = std::min(block, n - k);
                for (size_t i = 0; i < N; ++i) {
                    char* at = p[i] + k * s[i];
                    char* b = reinterpret_cast<char*>(buf[i]);
                    if (!conv[i]) {
                        q[i] = at;
                        qs[i] = s[i];
                    } else if (i > 0 && s[i] == 0) {
                        q[i] = b;
                        qs[i] = 0;
                    } else {
                        if (i > 0) conv[i](at, s[i], b, ksz[i], m);
                        q[i] = b;
                        qs[i] = ksz[i];
                    }
                }
                fn(q, qs, m);
                if (conv[0])
                    conv[0](reinterpret_cast<char*>(buf[0]), ksz[0], p[0] + k * s[0], s[0], m);
            }
        },
        grain);
}

template void run_kernel<2>(const shape_t&, const std::array<operand, 2>&,
                            const std::array<dtype, 2>&, loop_fn, int64_t);
template void run_kernel<3>(const shape_t&, const std::array<operand, 3>&,
                            const std::array<dtype, 3>&, loop_fn, int64_t);
template void run_kernel<4>(const shape_t&, const std::array<operand, 4>&,
                            const std::array<dtype, 4>&, loop_fn, int64_t);

void binary(binary_op op, dtype compute, const shape_t& shape, const operand& out, const operand& a,
            const operand& b) {
    const dtype k = kernel_dtype(compute);
    const kernel kl = binary_kernel(op, k);
    ISTHMUS_ASSERT(kl.fn != nullptr, "no CPU kernel for ", name(op), " on ", k);
    run_kernel<3>(shape, {out, a, b}, {kl.out, k, k}, kl.fn, kl.grain);
}

void unary(unary_op op, dtype compute, const shape_t& shape, const operand& out, const operand& a) {
    const dtype k = kernel_dtype(compute);
    const kernel kl = is_math_family(op) ? math_kernel(op, k) : basic_kernel(op, k);
    ISTHMUS_ASSERT(kl.fn != nullptr, "no CPU kernel for ", name(op), " on ", k);
    run_kernel<2>(shape, {out, a}, {kl.out, k}, kl.fn, kl.grain);
}

bool any_negative(const shape_t& shape, const operand& a) {
    const auto plan = make_plan<1>(shape, {a.strides}, {static_cast<int64_t>(itemsize(a.dt))});
    std::atomic<bool> found{false};
    switch (a.dt) {
    case dtype::int8:
        negative_loop<int8_t>(plan, a.data, found);
        break;
    case dtype::int16:
        negative_loop<int16_t>(plan, a.data, found);
        break;
    case dtype::int32:
        negative_loop<int32_t>(plan, a.data, found);
        break;
    case dtype::int64:
        negative_loop<int64_t>(plan, a.data, found);
        break;
    default:
        break;
    }
    return found.load();
}

namespace {
// Converts through the scalar's own kind so that every value rounds once (cpu::convert).
template <typename T>
T scalar_as(const scalar& s) {
    const dtype k = s.type();
    if (is_bool(k)) return convert<T>(s.to<bool>());
    if (is_signed_int(k)) return convert<T>(s.to<int64_t>());
    if (is_unsigned_int(k)) return convert<T>(s.to<uint64_t>());
    if (is_complex(k)) return convert<T>(s.to<complex128_t>());
    return convert<T>(s.to<double>());
}
} // namespace

void store_scalar(const scalar& s, dtype dt, void* buf) {
    ISTHMUS_DISPATCH(dt, T, { *static_cast<T*>(buf) = scalar_as<T>(s); });
}

} // namespace isthmus::cpu
