// CPU helpers of var/std: result dtypes, squared deviations from the mean, the final sqrt.
#include "cpu/convert.hpp"
#include "cpu/reduce.hpp"
#include "cpu/strided_loop.hpp"

#include <cmath>
#include <type_traits>

namespace isthmus::cpu {

dtype var_result_dtype(dtype dt) {
    if (is_complex(dt)) return real_dtype(dt);
    return is_inexact(dt) ? dt : dtype::float64;
}

dtype var_work_dtype(dtype dt) {
    const dtype r = var_result_dtype(dt);
    return r == dtype::float64 ? dtype::float64 : dtype::float32;
}

namespace {

// |x - m|^2 for one element, in the mean's precision, rounded to W.
template <typename W, typename M, typename T>
W squared(T x, M m) {
    if constexpr (is_complex_v<M>) {
        const M d = convert<M>(x) - m;
        return static_cast<W>(d.real() * d.real() + d.imag() * d.imag());
    } else {
        using R = std::conditional_t<is_half_v<M>, float, M>;
        const R d = convert<R>(x) - static_cast<R>(m);
        return static_cast<W>(d * d);
    }
}

template <typename T>
void squared_deviation_as(const tensor& dev, void* dev_data, const tensor& x, const void* x_data,
                          const tensor& m, const void* m_data) {
    // M: the mean's C++ type (float64 for integers), W: the work type of the squares.
    using M = std::conditional_t<std::is_integral_v<T>, double, T>;
    using W = std::conditional_t<std::is_same_v<M, double> || std::is_same_v<M, complex128_t>,
                                 double, float>;
    ISTHMUS_ASSERT(dev.dtype() == dtype_of_v<W> && m.dtype() == dtype_of_v<M>);
    std::array<char*, 3> base{static_cast<char*>(dev_data),
                              const_cast<char*>(static_cast<const char*>(x_data)),
                              const_cast<char*>(static_cast<const char*>(m_data))};
    for_each<3>(x.shape(), {&dev, &x, &m}, base, [](char** p, const int64_t* s, int64_t n) {
        auto* d = reinterpret_cast<W*>(p[0]);
        if (s[0] == sizeof(W) && s[1] == sizeof(T)) {
            const auto* a = reinterpret_cast<const T*>(p[1]);
            if (s[2] == 0) {
                const M mv = *reinterpret_cast<const M*>(p[2]);
                for (int64_t i = 0; i < n; ++i) d[i] = squared<W>(a[i], mv);
                return;
            }
            if (s[2] == sizeof(M)) {
                const auto* mv = reinterpret_cast<const M*>(p[2]);
                for (int64_t i = 0; i < n; ++i) d[i] = squared<W>(a[i], mv[i]);
                return;
            }
        }
        for (int64_t i = 0; i < n; ++i)
            *reinterpret_cast<W*>(p[0] + i * s[0]) =
                squared<W>(*reinterpret_cast<const T*>(p[1] + i * s[1]),
                           *reinterpret_cast<const M*>(p[2] + i * s[2]));
    });
}

template <typename F>
void sqrt_as(const tensor& out, void* data) {
    auto* p = static_cast<F*>(data);
    const int64_t n = out.numel();
    for (int64_t i = 0; i < n; ++i) p[i] = std::sqrt(p[i]);
}

} // namespace

void squared_deviation(const tensor& dev, void* dev_data, const tensor& x, const void* x_data,
                       const tensor& m, const void* m_data) {
    ISTHMUS_ASSERT(x.dtype() != dtype::float16 && x.dtype() != dtype::bfloat16,
                   "squared_deviation: half inputs are widened to float32 first");
    ISTHMUS_DISPATCH(x.dtype(), T,
                     { squared_deviation_as<T>(dev, dev_data, x, x_data, m, m_data); });
}

void sqrt_inplace(const tensor& out, void* out_data) {
    ISTHMUS_ASSERT(out.is_contiguous());
    if (out.dtype() == dtype::float64)
        sqrt_as<double>(out, out_data);
    else if (out.dtype() == dtype::float32)
        sqrt_as<float>(out, out_data);
    else
        ISTHMUS_ASSERT(false, "sqrt_inplace: dtype ", out.dtype());
}

} // namespace isthmus::cpu
