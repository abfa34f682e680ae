// The 15x15 dtype conversion loops: the elementwise executor's blocks and every cast (copy_cast).
#include "cpu/convert.hpp"
#include "cpu/elementwise_exec.hpp"
#if ISTHMUS_HAVE_F16C
#include "cpu/simd/convert_f16c.hpp"

#include <cpuid.h>
#include <cstdlib>
#endif

#include <cstring>
#include <type_traits>

namespace isthmus::cpu {

namespace {

template <typename To, typename From>
void convert_loop(const char* src, int64_t ss, char* dst, int64_t ds, int64_t n) {
    if (ss == static_cast<int64_t>(sizeof(From)) && ds == static_cast<int64_t>(sizeof(To))) {
        if constexpr (std::is_same_v<To, From>) {
            std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(To));
        } else {
            const From* a = reinterpret_cast<const From*>(src);
            To* o = reinterpret_cast<To*>(dst);
            for (int64_t i = 0; i < n; ++i) o[i] = convert<To>(a[i]);
        }
        return;
    }
    for (int64_t i = 0; i < n; ++i, src += ss, dst += ds)
        *reinterpret_cast<To*>(dst) = convert<To>(*reinterpret_cast<const From*>(src));
}

} // namespace

#if ISTHMUS_HAVE_F16C
bool f16c_usable() noexcept {
    // See Note [F16C conversions]: every CPU with AVX2 has F16C; ISTHMUS_SIMD=none turns it off too
    static const bool usable = [] {
        const char* simd = std::getenv("ISTHMUS_SIMD");
        if (simd != nullptr && std::strcmp(simd, "none") == 0) return false;
        // AVX2 as the compiler's runtime sees it (the OS saves the AVX registers), and F16C's
        // CPUID bit (clang has no __builtin_cpu_supports("f16c"))
        unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
        return __builtin_cpu_supports("avx2") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) &&
               (ecx & bit_F16C) != 0;
    }();
    return usable;
}
#endif

convert_fn converter(dtype from, dtype to) {
#if ISTHMUS_HAVE_F16C
    if (from == dtype::float32 && to == dtype::float16 && f16c_usable()) return &f16c_float_to_half;
    if (from == dtype::float16 && to == dtype::float32 && f16c_usable()) return &f16c_half_to_float;
#endif
    ISTHMUS_DISPATCH(to, To,
                     { ISTHMUS_DISPATCH(from, From, { return &convert_loop<To, From>; }); });
    ISTHMUS_ASSERT(false, "no conversion from ", from, " to ", to);
}

} // namespace isthmus::cpu
