// CPU random kernels: batched Philox4x32-10 blocks mapped to uniform, normal, integer values.
#include "cpu/random.hpp"
#include "cpu/convert.hpp"
#include "cpu/strided_loop.hpp"
#include "isthmus/openmp_region.hpp"

#include <cmath>
#include <numbers>

namespace isthmus::cpu {

namespace {

// Blocks computed per batch (256 words): small enough for the L1 cache, wide enough that the
// lane loops below vectorise.
constexpr int batch_blocks = 64;

// Philox blocks [ctr0, ctr0 + batch_blocks) into words[4 * i + lane]. The rounds run over
// struct-of-arrays lanes so the compiler vectorises the 32x32->64 multiplies.
void philox_batch(uint64_t seed, uint64_t ctr0, uint32_t* words) {
    alignas(64) uint32_t c0[batch_blocks], c1[batch_blocks], c2[batch_blocks], c3[batch_blocks];
    for (int i = 0; i < batch_blocks; ++i) {
        const uint64_t c = ctr0 + static_cast<uint64_t>(i);
        c0[i] = static_cast<uint32_t>(c);
        c1[i] = static_cast<uint32_t>(c >> 32);
        c2[i] = 0;
        c3[i] = 0;
    }
    uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
    for (int r = 0; r < 10; ++r) {
        for (int i = 0; i < batch_blocks; ++i) {
            const uint64_t p0 = static_cast<uint64_t>(philox_m0) * c0[i];
            const uint64_t p1 = static_cast<uint64_t>(philox_m1) * c2[i];
            const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1[i] ^ k0;
            const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3[i] ^ k1;
            c1[i] = static_cast<uint32_t>(p1);
            c3[i] = static_cast<uint32_t>(p0);
            c0[i] = n0;
            c2[i] = n2;
        }
        k0 += philox_w0;
        k1 += philox_w1;
    }
    for (int i = 0; i < batch_blocks; ++i) {
        words[4 * i] = c0[i];
        words[4 * i + 1] = c1[i];
        words[4 * i + 2] = c2[i];
        words[4 * i + 3] = c3[i];
    }
}

// Mantissa bits a uniform draw in [0, 1) uses, so that it is exact (never rounds up to 1) in T.
template <typename T>
constexpr int uniform_bits() {
    if constexpr (std::is_same_v<T, float16_t>)
        return 11;
    else if constexpr (std::is_same_v<T, bfloat16_t>)
        return 8;
    else
        return 24;
}

inline uint64_t word64(const uint32_t* w) {
    return static_cast<uint64_t>(w[0]) | (static_cast<uint64_t>(w[1]) << 32);
}

// Runs `map(words, e0, e1)` for each batch of elements, in parallel; batch k covers elements
// [k * per_batch, (k + 1) * per_batch) and Philox blocks first_block + k * batch_blocks...
template <typename Map>
void for_batches(int64_t n, int words_per_element, uint64_t seed, uint64_t first_block, Map map) {
    const int64_t per_batch = 4 * batch_blocks / words_per_element;
    const int64_t batches = (n + per_batch - 1) / per_batch;
    auto batch = [&](int64_t k) {
        alignas(64) uint32_t words[4 * batch_blocks];
        philox_batch(seed, first_block + static_cast<uint64_t>(k) * batch_blocks, words);
        map(words, k * per_batch, std::min(n, (k + 1) * per_batch));
    };
    if (n < parallel_grain || omp_in_parallel()) {
        for (int64_t k = 0; k < batches; ++k) batch(k);
        return;
    }
    openmp_region([&] {
#pragma omp parallel for schedule(static)
        for (int64_t k = 0; k < batches; ++k) batch(k);
    });
}

// Float-family dtypes (float32, float16, bfloat16): one word per element, float arithmetic.
template <typename T>
void real32(T* out, bool normal, int64_t n, uint64_t seed, uint64_t first_block, double a,
            double b) {
    const float fa = static_cast<float>(a), fb = static_cast<float>(b);
    if (!normal) {
        constexpr int bits = uniform_bits<T>();
        const float scale = std::ldexp(1.0f, -bits);
        const float width = static_cast<float>(b - a);
        const float hi = static_cast<float>(T(fb)), lo_t = static_cast<float>(T(fa));
        for_batches(n, 1, seed, first_block, [&](const uint32_t* w, int64_t e0, int64_t e1) {
            for (int64_t e = e0; e < e1; ++e) {
                const float u = static_cast<float>(w[e - e0] >> (32 - bits)) * scale;
                T y = T(fa + width * u);
                // Note [half-open uniforms]
                // ~~~~~~~~~~~~~~~~~~~~~~~~~
                // Rounding a + (b - a) u can reach b; such values become a, as PyTorch does, so
                // results stay in [a, b).
                if (!(static_cast<float>(y) < hi)) y = T(lo_t);
                out[e] = y;
            }
        });
        return;
    }
    constexpr float two_pi = 2.0f * std::numbers::pi_v<float>;
    const float scale = std::ldexp(1.0f, -24);
    for_batches(n, 1, seed, first_block, [&](const uint32_t* w, int64_t e0, int64_t e1) {
        // Box-Muller on word pairs: elements 2p and 2p+1 share words 2p and 2p+1.
        for (int64_t e = e0; e < e1; e += 2) {
            const uint32_t* pw = w + (e - e0);
            const float u1 = static_cast<float>((pw[0] >> 8) + 1) * scale; // (0, 1]
            const float u2 = static_cast<float>(pw[1] >> 8) * scale;       // [0, 1)
            const float r = std::sqrt(-2.0f * std::log(u1));
            const float th = two_pi * u2;
            out[e] = T(fa + fb * (r * std::cos(th)));
            if (e + 1 < e1) out[e + 1] = T(fa + fb * (r * std::sin(th)));
        }
    });
}

// float64: two words (53 bits) per element, double arithmetic.
void real64(double* out, bool normal, int64_t n, uint64_t seed, uint64_t first_block, double a,
            double b) {
    const double scale = std::ldexp(1.0, -53);
    if (!normal) {
        const double width = b - a;
        for_batches(n, 2, seed, first_block, [&](const uint32_t* w, int64_t e0, int64_t e1) {
            for (int64_t e = e0; e < e1; ++e) {
                const double u = static_cast<double>(word64(w + 2 * (e - e0)) >> 11) * scale;
                const double y = a + width * u;
                out[e] = y < b ? y : a; // Note [half-open uniforms]
            }
        });
        return;
    }
    constexpr double two_pi = 2.0 * std::numbers::pi;
    for_batches(n, 2, seed, first_block, [&](const uint32_t* w, int64_t e0, int64_t e1) {
        for (int64_t e = e0; e < e1; e += 2) {
            const uint32_t* pw = w + 2 * (e - e0);
            const double u1 = static_cast<double>((word64(pw) >> 11) + 1) * scale;
            const double u2 = static_cast<double>(word64(pw + 2) >> 11) * scale;
            const double r = std::sqrt(-2.0 * std::log(u1));
            const double th = two_pi * u2;
            out[e] = a + b * (r * std::cos(th));
            if (e + 1 < e1) out[e + 1] = a + b * (r * std::sin(th));
        }
    });
}

__extension__ typedef unsigned __int128 uint128_t;

template <typename T>
void ints(T* out, int64_t n, uint64_t seed, uint64_t first_block, int64_t lo, uint64_t range) {
    for_batches(n, 2, seed, first_block, [&](const uint32_t* w, int64_t e0, int64_t e1) {
        for (int64_t e = e0; e < e1; ++e) {
            // Multiply-shift maps 64 random bits onto [0, range) (bias below range / 2^64).
            const auto x = static_cast<uint128_t>(word64(w + 2 * (e - e0)));
            const auto r = static_cast<uint64_t>((x * range) >> 64);
            out[e] = convert<T>(static_cast<int64_t>(static_cast<uint64_t>(lo) + r));
        }
    });
}

template <typename T>
void ints_of(void* data, int64_t n, uint64_t seed, uint64_t first_block, int64_t lo,
             uint64_t range) {
    if constexpr (is_complex_v<T>)
        ISTHMUS_ASSERT(false, "random_int: complex dtype");
    else
        ints(static_cast<T*>(data), n, seed, first_block, lo, range);
}

} // namespace

void random_real(dtype dt, bool normal, void* data, int64_t n, uint64_t seed, uint64_t first_block,
                 double a, double b) {
    switch (dt) {
    case dtype::float16:
        real32(static_cast<float16_t*>(data), normal, n, seed, first_block, a, b);
        break;
    case dtype::bfloat16:
        real32(static_cast<bfloat16_t*>(data), normal, n, seed, first_block, a, b);
        break;
    case dtype::float32:
        real32(static_cast<float*>(data), normal, n, seed, first_block, a, b);
        break;
    case dtype::float64:
        real64(static_cast<double*>(data), normal, n, seed, first_block, a, b);
        break;
    default:
        ISTHMUS_ASSERT(false, "random_real: not a real floating dtype: ", dt);
    }
}

void random_int(dtype dt, void* data, int64_t n, uint64_t seed, uint64_t first_block, int64_t lo,
                uint64_t range) {
    ISTHMUS_DISPATCH(dt, T, { ints_of<T>(data, n, seed, first_block, lo, range); });
}

} // namespace isthmus::cpu
