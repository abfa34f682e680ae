// Strided copy with dtype conversion on the CPU, dispatched over every dtype pair.
#include "cpu/copy.hpp"
#include "cpu/convert.hpp"
#include "cpu/strided_loop.hpp"
#if ISTHMUS_HAVE_F16C
#include "cpu/simd/convert_f16c.hpp"
#endif

#include <cstring>

namespace isthmus::cpu {

namespace {
template <typename To, typename From>
void copy_loop(char** p, const int64_t* s, int64_t n) {
    char* d = p[0];
    const char* a = p[1];
#if ISTHMUS_HAVE_F16C
    // Note [F16C conversions] (simd/convert_f16c.cpp): the same bits, 8 at a time
    if constexpr (std::is_same_v<To, float16_t> && std::is_same_v<From, float>) {
        if (f16c_usable()) return f16c_float_to_half(a, s[1], d, s[0], n);
    } else if constexpr (std::is_same_v<To, float> && std::is_same_v<From, float16_t>) {
        if (f16c_usable()) return f16c_half_to_float(a, s[1], d, s[0], n);
    }
#endif
    if (s[0] == static_cast<int64_t>(sizeof(To)) && s[1] == static_cast<int64_t>(sizeof(From))) {
        auto* dt = reinterpret_cast<To*>(d);
        auto* st = reinterpret_cast<const From*>(a);
        if constexpr (std::is_same_v<To, From>) {
            std::memcpy(dt, st, static_cast<size_t>(n) * sizeof(To));
        } else {
            for (int64_t i = 0; i < n; ++i) dt[i] = convert<To>(st[i]);
        }
        return;
    }
    for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<To*>(d + i * s[0]) =
            convert<To>(*reinterpret_cast<const From*>(a + i * s[1]));
}
} // namespace

void copy_cast(const tensor& dst, void* dst_data, const tensor& src, const void* src_data) {
    std::array<char*, 2> base{static_cast<char*>(dst_data),
                              const_cast<char*>(static_cast<const char*>(src_data))};
    ISTHMUS_DISPATCH(dst.dtype(), To, {
        ISTHMUS_DISPATCH(src.dtype(), From, {
            for_each<2>(dst.shape(), {&dst, &src}, base, copy_loop<To, From>);
        });
    });
}

} // namespace isthmus::cpu
