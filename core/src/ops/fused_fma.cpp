// fma(a, b, c): broadcasting, promotion and a single-pass CPU kernel for a * b + c.
#include "cpu/convert.hpp"
#include "cpu/strided_loop.hpp"
#include "isthmus/ops/fused.hpp"
#include "ops/device_ops.hpp"
#include "ops/dispatch.hpp"

#include <cmath>

namespace isthmus {

namespace {
// Note [fma contraction]: x * y + z rather than std::fma: without FMA in the target ISA,
// std::fma is an exact but slow libm call; the compiler contracts x * y + z where FMA exists.
template <typename T>
T mul_add(T x, T y, T z) {
    if constexpr (cpu::is_half_v<T>)
        return T(static_cast<float>(x) * static_cast<float>(y) + static_cast<float>(z));
    else if constexpr (std::is_same_v<T, bool>)
        return (x && y) || z;
    else
        return static_cast<T>(x * y + z);
}

template <typename T>
void fma_loop(char** p, const int64_t* s, int64_t n) {
    constexpr auto sz = static_cast<int64_t>(sizeof(T));
    if (s[0] == sz && s[1] == sz && s[2] == sz && s[3] == sz) {
        T* o = reinterpret_cast<T*>(p[0]);
        const T* x = reinterpret_cast<const T*>(p[1]);
        const T* y = reinterpret_cast<const T*>(p[2]);
        const T* z = reinterpret_cast<const T*>(p[3]);
        for (int64_t i = 0; i < n; ++i) o[i] = mul_add(x[i], y[i], z[i]);
        return;
    }
    for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<T*>(p[0] + i * s[0]) =
            mul_add(*reinterpret_cast<const T*>(p[1] + i * s[1]),
                    *reinterpret_cast<const T*>(p[2] + i * s[2]),
                    *reinterpret_cast<const T*>(p[3] + i * s[3]));
}
} // namespace

tensor fma(const tensor& a, const tensor& b, const tensor& c) {
    ISTHMUS_CHECK(a.defined() && b.defined() && c.defined(), value_error,
                  "fma: undefined tensor argument");
    const shape_t shape = broadcast_shapes(broadcast_shapes(a.shape(), b.shape()), c.shape());
    const dtype dt = promote_types(promote_types(a.dtype(), b.dtype()), c.dtype());
    const resource_id where = ops::pick_resource({&a, &b, &c});
    if (numel_of(shape) > 0)
        if (tensor out; ops::device_ternary(where, backend::ternary_op::fma, dt, shape, {&a}, {&b},
                                            {&c}, out, false, {&a, &b, &c}))
            return out;
    tensor out = tensor::empty(shape, dt, MEMRESOURCE_CPU);
    if (out.numel() == 0) return out;
    const tensor x = a.to(dt, false).expand(shape), y = b.to(dt, false).expand(shape),
                 z = c.to(dt, false).expand(shape);
    auto ax = ops::read_host(x), ay = ops::read_host(y), az = ops::read_host(z);
    auto ao = ops::write_host(out);
    std::array<char*, 4> base{ao.as<char>(), ax.as<char>(), ay.as<char>(), az.as<char>()};
    ISTHMUS_DISPATCH(dt, T, { cpu::for_each<4>(shape, {&out, &x, &y, &z}, base, fma_loop<T>); });
    return out;
}

} // namespace isthmus
