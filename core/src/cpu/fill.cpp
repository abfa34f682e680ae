// CPU fill kernels: constant fills by item size (memset for uniform bytes), linear sequences.
#include "cpu/fill.hpp"
#include "cpu/strided_loop.hpp"
#include "isthmus/openmp_region.hpp"

#include <cmath>
#include <cstring>

namespace isthmus::cpu {

namespace {

struct bytes16 {
    uint64_t lo, hi;
};

// Note [fill by item size]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// A fill only stores a bit pattern, so the kernel is instantiated per item size (1, 2, 4, 8, 16
// bytes), not per dtype. Contiguous runs are plain indexed loops the compiler vectorises; when all
// bytes of the pattern are equal (zeros above all) the run is a memset, which glibc performs with
// non-temporal / `rep stos` stores at full write bandwidth.
template <typename U>
void fill_pattern(const tensor& dst, void* dst_data, const unsigned char* pattern, bool bytewise) {
    U v;
    std::memcpy(&v, pattern, sizeof(U));
    const unsigned char byte = pattern[0];
    std::array<char*, 1> base{static_cast<char*>(dst_data)};
    for_each<1>(dst.shape(), {&dst}, base, [&](char** p, const int64_t* s, int64_t n) {
        // Locals that stay in registers: stores may alias anything reached through a pointer.
        const U val = v;
        char* const d = p[0];
        const int64_t sd = s[0];
        if (sd == static_cast<int64_t>(sizeof(U))) {
            if (bytewise) {
                std::memset(d, byte, static_cast<size_t>(n) * sizeof(U));
                return;
            }
            U* du = reinterpret_cast<U*>(d);
            for (int64_t i = 0; i < n; ++i) du[i] = val;
            return;
        }
        for (int64_t i = 0; i < n; ++i) std::memcpy(d + i * sd, &val, sizeof(U));
    });
}

// element(i) for i in [0, n): on the calling thread below the parallel grain, else over threads.
template <typename F>
void for_range(int64_t n, F&& element) {
    if (n < parallel_grain || omp_in_parallel()) {
        for (int64_t i = 0; i < n; ++i) element(i);
        return;
    }
    openmp_region([&] {
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; ++i) element(i);
    });
}

template <typename T>
void linear(T* out, int64_t n, double start, double step, bool floor_ints) {
    auto element = [&](int64_t i) {
        double v = start + static_cast<double>(i) * step;
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
            if (floor_ints) v = std::floor(v);
        out[i] = convert<T>(v);
    };
    for_range(n, element);
}

template <typename T>
void linear_int(T* out, int64_t n, int64_t start, int64_t step) {
    for_range(n, [&](int64_t i) { out[i] = convert<T>(start + i * step); });
}

} // namespace

void fill(const tensor& dst, void* dst_data, const scalar& value) {
    if (dst.numel() == 0) return;
    unsigned char pattern[16];
    ISTHMUS_DISPATCH(dst.dtype(), T, {
        T v = scalar_as<T>(value);
        std::memcpy(pattern, &v, sizeof(T));
    });
    const size_t isz = dst.itemsize();
    bool bytewise = true;
    for (size_t i = 1; i < isz; ++i) bytewise = bytewise && pattern[i] == pattern[0];
    switch (isz) {
    case 1:
        fill_pattern<uint8_t>(dst, dst_data, pattern, bytewise);
        break;
    case 2:
        fill_pattern<uint16_t>(dst, dst_data, pattern, bytewise);
        break;
    case 4:
        fill_pattern<uint32_t>(dst, dst_data, pattern, bytewise);
        break;
    case 8:
        fill_pattern<uint64_t>(dst, dst_data, pattern, bytewise);
        break;
    case 16:
        fill_pattern<bytes16>(dst, dst_data, pattern, bytewise);
        break;
    default:
        ISTHMUS_ASSERT(false, "fill: unexpected item size ", isz);
    }
}

void fill_linear(dtype dt, void* data, int64_t n, double start, double step, bool floor_ints) {
    ISTHMUS_DISPATCH(dt, T, { linear(static_cast<T*>(data), n, start, step, floor_ints); });
}

void fill_linear_int(dtype dt, void* data, int64_t n, int64_t start, int64_t step) {
    ISTHMUS_DISPATCH(dt, T, { linear_int(static_cast<T*>(data), n, start, step); });
}

} // namespace isthmus::cpu
