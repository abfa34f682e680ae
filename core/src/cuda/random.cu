// CUDA random kernels: the CPU's Philox4x32-10 streams, element for element (uniform, normal,
// integers).
#include "cuda/device_types.cuh"
#include "cuda/elementwise_common.cuh"

namespace isthmus::cudak {

namespace {

// The constants of core/src/cpu/random.hpp (Philox4x32-10, Salmon et al. 2011).
constexpr uint32_t m0 = 0xD2511F53u, m1 = 0xCD9E8D57u, w0 = 0x9E3779B9u, w1 = 0xBB67AE85u;

// Note [gpu random]: the CPU fills element e from word e * words_per_element (+ j) of the
// stream of Philox blocks first_block, first_block + 1, ... (block = word / 4, lane = word % 4),
// and so does each thread here for the elements of one block. The uniform and integer maps use
// exact integer steps and single float operations written with round-to-nearest intrinsics
// (no fused multiply-add, which the CPU build does not use either), so they are bit-identical
// to the CPU's; normals go through log/sqrt/cos/sin, whose last bit may differ from the host's
// libm (equal within a few ulp).
__device__ inline void philox(uint64_t seed, uint64_t ctr, uint32_t (&w)[4]) {
    uint32_t c0 = static_cast<uint32_t>(ctr), c1 = static_cast<uint32_t>(ctr >> 32), c2 = 0, c3 = 0;
    uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
    for (int r = 0; r < 10; ++r) {
        const uint32_t hi0 = __umulhi(m0, c0), lo0 = m0 * c0;
        const uint32_t hi1 = __umulhi(m1, c2), lo1 = m1 * c2;
        const uint32_t n0 = hi1 ^ c1 ^ k0;
        const uint32_t n2 = hi0 ^ c3 ^ k1;
        c1 = lo1;
        c3 = lo0;
        c0 = n0;
        c2 = n2;
        k0 += w0;
        k1 += w1;
    }
    w[0] = c0;
    w[1] = c1;
    w[2] = c2;
    w[3] = c3;
}

__device__ inline uint64_t word64(const uint32_t* w) {
    return static_cast<uint64_t>(w[0]) | (static_cast<uint64_t>(w[1]) << 32);
}

template <kdt K>
__device__ inline float as_float(storage_t<K> x) {
    if constexpr (K == kdt::f32)
        return x;
    else
        return to_float(x);
}
template <kdt K>
__device__ inline storage_t<K> from_float(float x) {
    if constexpr (K == kdt::f32)
        return x;
    else
        return half_from_float<storage_t<K>>(x);
}

// float32, float16, bfloat16: one word per element (4 per block).
template <kdt K>
__global__ void real32_kernel(storage_t<K>* out, bool normal, int64_t n, uint64_t seed,
                              uint64_t first_block, float fa, float fb, float width, float hi,
                              float lo_t) {
    constexpr int bits = K == kdt::f16 ? 11 : (K == kdt::bf16 ? 8 : 24);
    const int64_t blocks = (n + 3) / 4;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t blk = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; blk < blocks;
         blk += stride) {
        uint32_t w[4];
        philox(seed, first_block + static_cast<uint64_t>(blk), w);
        const int64_t e0 = blk * 4;
        if (!normal) {
            const float scale = 1.0f / static_cast<float>(1u << bits);
            for (int j = 0; j < 4 && e0 + j < n; ++j) {
                const float u = __fmul_rn(static_cast<float>(w[j] >> (32 - bits)), scale);
                storage_t<K> y = from_float<K>(__fadd_rn(fa, __fmul_rn(width, u)));
                if (!(as_float<K>(y) < hi)) y = from_float<K>(lo_t); // Note [half-open uniforms]
                out[e0 + j] = y;
            }
        } else {
            const float scale = 1.0f / 16777216.0f, two_pi = 6.28318530717958647692f;
            for (int j = 0; j < 4 && e0 + j < n; j += 2) { // Box-Muller on word pairs
                const float u1 = __fmul_rn(static_cast<float>((w[j] >> 8) + 1), scale);
                const float u2 = __fmul_rn(static_cast<float>(w[j + 1] >> 8), scale);
                const float r = sqrtf(__fmul_rn(-2.0f, logf(u1)));
                const float th = __fmul_rn(two_pi, u2);
                out[e0 + j] = from_float<K>(__fadd_rn(fa, __fmul_rn(fb, __fmul_rn(r, cosf(th)))));
                if (e0 + j + 1 < n)
                    out[e0 + j + 1] =
                        from_float<K>(__fadd_rn(fa, __fmul_rn(fb, __fmul_rn(r, sinf(th)))));
            }
        }
    }
}

// float64: two words per element (2 per block).
__global__ void real64_kernel(double* out, bool normal, int64_t n, uint64_t seed,
                              uint64_t first_block, double a, double b) {
    const double scale = 1.0 / 9007199254740992.0; // 2^-53
    const int64_t blocks = (n + 1) / 2;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t blk = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; blk < blocks;
         blk += stride) {
        uint32_t w[4];
        philox(seed, first_block + static_cast<uint64_t>(blk), w);
        const int64_t e0 = blk * 2;
        if (!normal) {
            const double width = __dadd_rn(b, -a);
            for (int j = 0; j < 2 && e0 + j < n; ++j) {
                const double u = __dmul_rn(static_cast<double>(word64(w + 2 * j) >> 11), scale);
                const double y = __dadd_rn(a, __dmul_rn(width, u));
                out[e0 + j] = y < b ? y : a; // Note [half-open uniforms]
            }
        } else {
            const double two_pi = 6.283185307179586476925;
            const double u1 = __dmul_rn(static_cast<double>((word64(w) >> 11) + 1), scale);
            const double u2 = __dmul_rn(static_cast<double>(word64(w + 2) >> 11), scale);
            const double r = ::sqrt(__dmul_rn(-2.0, ::log(u1)));
            const double th = __dmul_rn(two_pi, u2);
            out[e0] = __dadd_rn(a, __dmul_rn(b, __dmul_rn(r, ::cos(th))));
            if (e0 + 1 < n) out[e0 + 1] = __dadd_rn(a, __dmul_rn(b, __dmul_rn(r, ::sin(th))));
        }
    }
}

// Integers (any real type): two words per element, multiply-shift onto [0, range).
template <kdt K>
__global__ void int_kernel(storage_t<K>* out, int64_t n, uint64_t seed, uint64_t first_block,
                           int64_t lo, uint64_t range) {
    const int64_t blocks = (n + 1) / 2;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t blk = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; blk < blocks;
         blk += stride) {
        uint32_t w[4];
        philox(seed, first_block + static_cast<uint64_t>(blk), w);
        for (int j = 0; j < 2 && blk * 2 + j < n; ++j) {
            const uint64_t r = __umul64hi(word64(w + 2 * j), range);
            const auto v = static_cast<int64_t>(static_cast<uint64_t>(lo) + r);
            out[blk * 2 + j] = convert<K, kdt::i64>(v);
        }
    }
}

constexpr int block = 256;

template <kdt K>
void run_int(cudaStream_t s, void* data, int64_t n, uint64_t seed, uint64_t first_block, int64_t lo,
             uint64_t range) {
    if constexpr (!is_cplx(K))
        int_kernel<K><<<grid_for((n + 1) / 2, block), block, 0, s>>>(
            static_cast<storage_t<K>*>(data), n, seed, first_block, lo, range);
}

} // namespace

void launch_random_real(cudaStream_t s, kdt t, bool normal, void* data, int64_t n, uint64_t seed,
                        uint64_t first_block, double a, double b) {
    if (n == 0) return;
    if (t == kdt::f64) {
        real64_kernel<<<grid_for((n + 1) / 2, block), block, 0, s>>>(
            static_cast<double*>(data), normal, n, seed, first_block, a, b);
        return;
    }
    // the CPU's float parameters (core/src/cpu/random.cpp, real32)
    const float fa = static_cast<float>(a), fb = static_cast<float>(b);
    const float width = static_cast<float>(b - a);
    auto go = [&](auto tag) {
        constexpr kdt K = decltype(tag)::value;
        using S = storage_t<K>;
        float hi = fb, lo_t = fa;
        if constexpr (K != kdt::f32) {
            hi = to_float(half_from_float<S>(fb));
            lo_t = to_float(half_from_float<S>(fa));
        }
        real32_kernel<K><<<grid_for((n + 3) / 4, block), block, 0, s>>>(
            static_cast<S*>(data), normal, n, seed, first_block, fa, fb, width, hi, lo_t);
    };
    if (t == kdt::f32)
        go(std::integral_constant<kdt, kdt::f32>{});
    else if (t == kdt::f16)
        go(std::integral_constant<kdt, kdt::f16>{});
    else if (t == kdt::bf16)
        go(std::integral_constant<kdt, kdt::bf16>{});
}

void launch_random_int(cudaStream_t s, kdt t, void* data, int64_t n, uint64_t seed,
                       uint64_t first_block, int64_t lo, uint64_t range) {
    if (n == 0) return;
    ISTHMUS_KDT_DISPATCH(t, run_int<K>(s, data, n, seed, first_block, lo, range))
}

} // namespace isthmus::cudak
