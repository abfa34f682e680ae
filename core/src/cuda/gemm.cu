// A tiled CUDA matrix product, used for matmul when the build has no cuBLAS.
#include "cuda/device_types.cuh"
#include "cuda/elementwise_ops.cuh"

namespace isthmus::cudak {

namespace {

constexpr int tile = 16;

template <class C>
__device__ inline C zero_of() {
    if constexpr (is_cplx_v<C>)
        return C{0, 0};
    else
        return C(0);
}

template <class C>
__device__ inline C fma_of(C acc, C x, C y) {
    if constexpr (is_cplx_v<C>) {
        const C p = cmul(x, y);
        return C{acc.re + p.re, acc.im + p.im};
    } else {
        return acc + x * y;
    }
}

// One 16x16 tile of C per block, the k dimension walked through shared-memory tiles; the
// batch runs along grid.z (a loop past the grid's 65535 limit). Half types are loaded as
// float and accumulate in float (Note [half gemm] in backend.cpp).
template <kdt K>
__global__ void gemm_kernel(int64_t batch, int64_t m, int64_t n, int64_t k, const storage_t<K>* a0,
                            const storage_t<K>* b0, storage_t<K>* c0) {
    using C = compute_t<K>;
    __shared__ C as[tile][tile];
    __shared__ C bs[tile][tile];
    const int64_t row = static_cast<int64_t>(blockIdx.y) * tile + threadIdx.y;
    const int64_t col = static_cast<int64_t>(blockIdx.x) * tile + threadIdx.x;
    for (int64_t z = blockIdx.z; z < batch; z += gridDim.z) {
        const storage_t<K>* a = a0 + z * m * k;
        const storage_t<K>* b = b0 + z * k * n;
        C acc = zero_of<C>();
        for (int64_t t = 0; t < k; t += tile) {
            const int64_t ka = t + threadIdx.x, kb = t + threadIdx.y;
            as[threadIdx.y][threadIdx.x] =
                row < m && ka < k ? up<K>(a[row * k + ka]) : zero_of<C>();
            bs[threadIdx.y][threadIdx.x] =
                kb < k && col < n ? up<K>(b[kb * n + col]) : zero_of<C>();
            __syncthreads();
            for (int j = 0; j < tile; ++j)
                acc = fma_of(acc, as[threadIdx.y][j], bs[j][threadIdx.x]);
            __syncthreads();
        }
        if (row < m && col < n) c0[z * m * n + row * n + col] = down<K>(acc);
    }
}

template <kdt K>
void run_gemm(cudaStream_t s, int64_t batch, int64_t m, int64_t n, int64_t k, const void* a,
              const void* b, void* c) {
    if constexpr (gemm_ok(K)) {
        using S = storage_t<K>;
        const dim3 threads(tile, tile);
        const int64_t z = batch < 65535 ? batch : 65535;
        const dim3 grid(static_cast<unsigned>((n + tile - 1) / tile),
                        static_cast<unsigned>((m + tile - 1) / tile), static_cast<unsigned>(z));
        gemm_kernel<K><<<grid, threads, 0, s>>>(batch, m, n, k, static_cast<const S*>(a),
                                                static_cast<const S*>(b), static_cast<S*>(c));
    }
}

} // namespace

void launch_gemm(cudaStream_t s, kdt t, int64_t batch, int64_t m, int64_t n, int64_t k,
                 const void* a, const void* b, void* c) {
    ISTHMUS_KDT_DISPATCH(t, run_gemm<K>(s, batch, m, n, k, a, b, c))
}

} // namespace isthmus::cudak
