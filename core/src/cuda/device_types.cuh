// Device element types (half, bfloat16, complex), their compute types and the CPU's cast rules.
#pragma once

#include "cuda/kernels.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

// ISTHMUS_HD marks the element functions callable on the device and on the host: the kernels
// use them, and tests/cuda/test_cuda_semantics_*.cu checks them against the CPU kernels on a
// machine without a GPU.
#include "kernels/host_device.hpp"

namespace isthmus::cudak {

/// float16 as stored (its bits); arithmetic goes through float (see Note [kernel support table]).
struct f16_t {
    unsigned short bits;
};
/// bfloat16 as stored.
struct bf16_t {
    unsigned short bits;
};
/// A complex number as stored (two reals, like std::complex and the DLPack layout).
template <class R>
struct alignas(2 * sizeof(R)) cplx {
    R re, im;
};

template <class T>
inline constexpr bool is_half_v = std::is_same_v<T, f16_t> || std::is_same_v<T, bf16_t>;
template <class T>
inline constexpr bool is_cplx_v = std::is_same_v<T, cplx<float>> || std::is_same_v<T, cplx<double>>;
template <class T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, unsigned char>;

/// The C++ type stored for each kdt (bool is its byte; uint8 is `uint8_t`, which is also
/// unsigned char, so every integer kernel tells them apart by the kdt, never by the type).
template <kdt K>
struct storage;
template <>
struct storage<kdt::b8> {
    using type = unsigned char;
};
template <>
struct storage<kdt::i8> {
    using type = int8_t;
};
template <>
struct storage<kdt::i16> {
    using type = int16_t;
};
template <>
struct storage<kdt::i32> {
    using type = int32_t;
};
template <>
struct storage<kdt::i64> {
    using type = int64_t;
};
template <>
struct storage<kdt::u8> {
    using type = uint8_t;
};
template <>
struct storage<kdt::u16> {
    using type = uint16_t;
};
template <>
struct storage<kdt::u32> {
    using type = uint32_t;
};
template <>
struct storage<kdt::u64> {
    using type = uint64_t;
};
template <>
struct storage<kdt::f16> {
    using type = f16_t;
};
template <>
struct storage<kdt::bf16> {
    using type = bf16_t;
};
template <>
struct storage<kdt::f32> {
    using type = float;
};
template <>
struct storage<kdt::f64> {
    using type = double;
};
template <>
struct storage<kdt::c64> {
    using type = cplx<float>;
};
template <>
struct storage<kdt::c128> {
    using type = cplx<double>;
};
template <kdt K>
using storage_t = typename storage<K>::type;

/// The type a kernel computes in for kdt K: float for the half types, else the stored type.
template <kdt K>
using compute_t = std::conditional_t<K == kdt::f16 || K == kdt::bf16, float, storage_t<K>>;

// ---- half conversions (round to nearest even, as the CPU's float16_t/bfloat16_t) ----

ISTHMUS_HD inline float to_float(f16_t h) {
    __half_raw r;
    r.x = h.bits;
    return __half2float(__half(r));
}
ISTHMUS_HD inline float to_float(bf16_t h) {
    __nv_bfloat16_raw r;
    r.x = h.bits;
    return __bfloat162float(__nv_bfloat16(r));
}
template <class H>
ISTHMUS_HD inline H half_from_float(float x) {
    if constexpr (std::is_same_v<H, f16_t>)
        return H{static_cast<__half_raw>(__float2half_rn(x)).x};
    else
        return H{static_cast<__nv_bfloat16_raw>(__float2bfloat16_rn(x)).x};
}
// Note [single rounding to half types] (core/src/cpu/convert.hpp): a double rounds once,
// directly, as the CPU's round-to-odd path does.
template <class H>
ISTHMUS_HD inline H half_from_double(double x) {
    if constexpr (std::is_same_v<H, f16_t>)
        return H{static_cast<__half_raw>(__double2half(x)).x};
    else
        return H{static_cast<__nv_bfloat16_raw>(__double2bfloat16(x)).x};
}

/// Loads a stored element as its compute type.
template <kdt K>
ISTHMUS_HD inline compute_t<K> up(storage_t<K> x) {
    if constexpr (K == kdt::f16 || K == kdt::bf16)
        return to_float(x);
    else
        return x;
}
/// Stores a compute-type value as kdt K (half types round once).
template <kdt K>
ISTHMUS_HD inline storage_t<K> down(compute_t<K> x) {
    if constexpr (K == kdt::f16 || K == kdt::bf16)
        return half_from_float<storage_t<K>>(x);
    else
        return x;
}

/// `x != 0` for any stored or compute type.
template <class T>
ISTHMUS_HD inline bool truthy(T x) {
    if constexpr (is_cplx_v<T>)
        return x.re != 0 || x.im != 0;
    else if constexpr (is_half_v<T>)
        return to_float(x) != 0.0f;
    else
        return x != T(0);
}

/// Converts one element from kdt I to kdt O with NumPy's unsafe cast, exactly as the CPU's
/// cpu::convert: anything -> bool is `!= 0`; complex -> real keeps the real part; float -> int
/// goes through int64/uint64 with NaN -> 0 and out-of-range -> the CPU's fixed values (never
/// CUDA's saturating conversion); half types go through float; doubles and wide integers round
/// once to a half type.
template <kdt O, kdt I>
ISTHMUS_HD inline storage_t<O> convert(storage_t<I> x) {
    using To = storage_t<O>;
    using From = storage_t<I>;
    if constexpr (O == I) {
        return x;
    } else if constexpr (O == kdt::b8) {
        return static_cast<unsigned char>(truthy(x));
    } else if constexpr (I == kdt::b8) {
        // bool as 0/1 into anything
        if constexpr (is_cplx(O))
            return To{static_cast<decltype(To{}.re)>(x), 0};
        else if constexpr (O == kdt::f16 || O == kdt::bf16)
            return half_from_float<To>(static_cast<float>(x));
        else
            return static_cast<To>(x);
    } else if constexpr (is_cplx(I)) {
        if constexpr (is_cplx(O)) {
            using R = decltype(To{}.re);
            return To{static_cast<R>(x.re), static_cast<R>(x.im)};
        } else {
            constexpr kdt real = I == kdt::c64 ? kdt::f32 : kdt::f64;
            return convert<O, real>(x.re);
        }
    } else if constexpr (I == kdt::f16 || I == kdt::bf16) {
        return convert<O, kdt::f32>(to_float(x));
    } else if constexpr (is_cplx(O)) {
        using R = decltype(To{}.re);
        return To{static_cast<R>(x), R(0)};
    } else if constexpr (O == kdt::f16 || O == kdt::bf16) {
        if constexpr (I == kdt::f64 || (is_int(I) && sizeof(From) > 2))
            return half_from_double<To>(static_cast<double>(x));
        else
            return half_from_float<To>(static_cast<float>(x));
    } else if constexpr (is_float(I) && is_int(O)) {
        const double d = static_cast<double>(x); // exact; compares as the CPU does
        if (!(d == d)) return To(0);             // NaN
        if constexpr (is_signed(O)) {
            if (d >= 9.2233720368547758e18 || d < -9.2233720368547758e18)
                return static_cast<To>(INT64_MIN);
            return static_cast<To>(static_cast<int64_t>(x));
        } else {
            if (d >= 1.8446744073709552e19 || d <= -9.2233720368547758e18) return To(0);
            if (d < 0) return static_cast<To>(static_cast<int64_t>(x));
            return static_cast<To>(static_cast<uint64_t>(x));
        }
    } else {
        return static_cast<To>(x);
    }
}

} // namespace isthmus::cudak

/// Runs CALL with `constexpr kdt K` set to the runtime kdt `t` (every kdt).
#define ISTHMUS_KDT_DISPATCH(t, CALL)                                                              \
    switch (t) {                                                                                   \
    case ::isthmus::cudak::kdt::b8: {                                                              \
        constexpr auto K = ::isthmus::cudak::kdt::b8;                                              \
        CALL;                                                                                      \
    } break;                                                                                       \
    case ::isthmus::cudak::kdt::i8: {                                                              \
        constexpr auto K = ::isthmus::cudak::kdt::i8;                                              \
        CALL;                                                                                      \
    } break;                                                                                       \
    case ::isthmus::cudak::kdt::i16: {                                                             \
        constexpr auto K = ::isthmus::cudak::kdt::i16;                                             \
        CALL;                                                                                      \
    } break;                                                                                       \
    case ::isthmus::cudak::kdt::i32: {                                                             \
        constexpr auto K = ::isthmus::cudak::kdt::i32;                                             \
        CALL;                                                                                      \
    } break;                                                                                       \
    case ::isthmus::cudak::kdt::i64: {                                                             \
        constexpr auto K = ::isthmus::cudak::kdt::i64;                                             \
        CALL;                                                                                      \
    } break;                                                                                       \
    case ::isthmus::cudak::kdt::u8: {                                                              \
        constexpr auto K = ::isthmus::cudak::kdt::u8;                                              \
        CALL;                                                                                      \
    } break;                                                                                       \
    case ::isthmus::cudak::kdt::u16: {                                                             \
        constexpr auto K = ::isthmus::cudak::kdt::u16;                                             \
        CALL;                                                                                      \
    } break;                                                                                       \
    case ::isthmus::cudak::kdt::u32: {                                                             \
        constexpr auto K = ::isthmus::cudak::kdt::u32;                                             \
        CALL;                                                                                      \
    } break;                                                                                       \
    case ::isthmus::cudak::kdt::u64: {                                                             \
        constexpr auto K = ::isthmus::cudak::kdt::u64;                                             \
        CALL;                                                                                      \
    } break;                                                                                       \
    case ::isthmus::cudak::kdt::f16: {                                                             \
        constexpr auto K = ::isthmus::cudak::kdt::f16;                                             \
        CALL;                                                                                      \
    } break;                                                                                       \
    case ::isthmus::cudak::kdt::bf16: {                                                            \
        constexpr auto K = ::isthmus::cudak::kdt::bf16;                                            \
        CALL;                                                                                      \
    } break;                                                                                       \
    case ::isthmus::cudak::kdt::f32: {                                                             \
        constexpr auto K = ::isthmus::cudak::kdt::f32;                                             \
        CALL;                                                                                      \
    } break;                                                                                       \
    case ::isthmus::cudak::kdt::f64: {                                                             \
        constexpr auto K = ::isthmus::cudak::kdt::f64;                                             \
        CALL;                                                                                      \
    } break;                                                                                       \
    case ::isthmus::cudak::kdt::c64: {                                                             \
        constexpr auto K = ::isthmus::cudak::kdt::c64;                                             \
        CALL;                                                                                      \
    } break;                                                                                       \
    case ::isthmus::cudak::kdt::c128: {                                                            \
        constexpr auto K = ::isthmus::cudak::kdt::c128;                                            \
        CALL;                                                                                      \
    } break;                                                                                       \
    }
