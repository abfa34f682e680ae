// Device helpers shared by the elementwise kernels: strided offsets, vector loads, type switches.
#pragma once

#include "cuda/device_types.cuh"
#include "cuda/kernels.hpp"

#include <cstdint>
#include <type_traits>

namespace isthmus::cudak {

/// A vector of V elements loaded or stored in one instruction (V * sizeof(T) <= 16 bytes).
template <class T, int V>
struct alignas(sizeof(T) * V) vec {
    T v[V];
};

/// The offsets of element `i` of the space in up to four operands.
// Note [32-bit index split]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// The strided paths split each element index into coordinates with a division per dimension; a
// 64-bit division is a long software sequence on the GPU, a 32-bit one a few instructions, so
// spaces under 2^31 elements (the branch is uniform across the launch) divide in 32 bits. Broadcast
// operands (stride 0) make this the path of `a + b[None, :]`.
template <int N>
ISTHMUS_HD inline void offsets(const space& sp, int64_t i, const int64_t* const (&strides)[N],
                               int64_t (&off)[N]) {
    for (int k = 0; k < N; ++k) off[k] = 0;
    if (sp.numel <= INT32_MAX) {
        auto j = static_cast<uint32_t>(i);
        for (int d = sp.rank - 1; d >= 0; --d) {
            const auto n = static_cast<uint32_t>(sp.shape[d]);
            const uint32_t q = j % n;
            j /= n;
            for (int k = 0; k < N; ++k) off[k] += static_cast<int64_t>(q) * strides[k][d];
        }
        return;
    }
    for (int d = sp.rank - 1; d >= 0; --d) {
        const int64_t n = sp.shape[d];
        const int64_t q = i % n;
        i /= n;
        for (int k = 0; k < N; ++k) off[k] += q * strides[k][d];
    }
}

template <class T>
__device__ inline T scalar_of(const arg& a) {
    return *reinterpret_cast<const T*>(a.value);
}

/// Grid size for `n` work items of `block` threads (grid-stride loops cover the rest).
inline unsigned grid_for(int64_t n, int block) {
    int64_t g = (n + block - 1) / block;
    if (g < 1) g = 1;
    if (g > 65536) g = 65536;
    return static_cast<unsigned>(g);
}

/// True when every non-null pointer is 16-byte aligned (vector loads are then safe).
inline bool aligned16(const void* a, const void* b = nullptr, const void* c = nullptr) {
    auto ok = [](const void* p) { return !p || reinterpret_cast<uintptr_t>(p) % 16 == 0; };
    return ok(a) && ok(b) && ok(c);
}

} // namespace isthmus::cudak

/// Calls F<T>() with T the C++ type of the kdt `t` (every kernel element type).
#define ISTHMUS_KDT_SWITCH_ALL(t, CALL)                                                            \
    switch (t) {                                                                                   \
    case ::isthmus::cudak::kdt::b8: {                                                              \
        using T = unsigned char;                                                                   \
        CALL;                                                                                      \
    } break;                                                                                       \
    case ::isthmus::cudak::kdt::i8: {                                                              \
        using T = int8_t;                                                                          \
        CALL;                                                                                      \
    } break;                                                                                       \
    case ::isthmus::cudak::kdt::i16: {                                                             \
        using T = int16_t;                                                                         \
        CALL;                                                                                      \
    } break;                                                                                       \
    case ::isthmus::cudak::kdt::i32: {                                                             \
        using T = int32_t;                                                                         \
        CALL;                                                                                      \
    } break;                                                                                       \
    case ::isthmus::cudak::kdt::i64: {                                                             \
        using T = int64_t;                                                                         \
        CALL;                                                                                      \
    } break;                                                                                       \
    case ::isthmus::cudak::kdt::u8: {                                                              \
        using T = uint8_t;                                                                         \
        CALL;                                                                                      \
    } break;                                                                                       \
    case ::isthmus::cudak::kdt::f32: {                                                             \
        using T = float;                                                                           \
        CALL;                                                                                      \
    } break;                                                                                       \
    case ::isthmus::cudak::kdt::f64: {                                                             \
        using T = double;                                                                          \
        CALL;                                                                                      \
    } break;                                                                                       \
    }
