// A tiled CUDA matrix product: integers and bool always, floats and complex without cuBLAS.
#include "cuda/gemm.cuh"

namespace isthmus::cudak {

namespace {

constexpr int tile = 16;

// One 16x16 tile of C per block, the k dimension walked through shared-memory tiles; the
// batch runs along grid.z and the row tiles along grid.y (loops past the grid's 65535 limit).
// Element steps and accumulators: gemm.cuh (Note [integer gemm]); each output sums its k
// products in increasing k order.
template <kdt K>
__global__ void gemm_kernel(int64_t batch, int64_t m, int64_t n, int64_t k, const storage_t<K>* a0,
                            const storage_t<K>* b0, storage_t<K>* c0) {
    using G = gemm_t<K>;
    __shared__ G as[tile][tile];
    __shared__ G bs[tile][tile];
    const int64_t row_tiles = (m + tile - 1) / tile;
    const int64_t col = static_cast<int64_t>(blockIdx.x) * tile + threadIdx.x;
    for (int64_t z = blockIdx.z; z < batch; z += gridDim.z) {
        const storage_t<K>* a = a0 + z * m * k;
        const storage_t<K>* b = b0 + z * k * n;
        // every thread of the block runs the same iterations (the __syncthreads below)
        for (int64_t rt = blockIdx.y; rt < row_tiles; rt += gridDim.y) {
            const int64_t row = rt * tile + threadIdx.y;
            G acc = gemm_zero<K>();
            for (int64_t t = 0; t < k; t += tile) {
                const int64_t ka = t + threadIdx.x, kb = t + threadIdx.y;
                as[threadIdx.y][threadIdx.x] =
                    row < m && ka < k ? gemm_load<K>(a[row * k + ka]) : gemm_zero<K>();
                bs[threadIdx.y][threadIdx.x] =
                    kb < k && col < n ? gemm_load<K>(b[kb * n + col]) : gemm_zero<K>();
                __syncthreads();
                for (int j = 0; j < tile; ++j)
                    acc = gemm_fma<K>(acc, as[threadIdx.y][j], bs[j][threadIdx.x]);
                __syncthreads();
            }
            if (row < m && col < n) c0[z * m * n + row * n + col] = gemm_store<K>(acc);
        }
    }
}

template <kdt K>
void run_gemm(cudaStream_t s, int64_t batch, int64_t m, int64_t n, int64_t k, const void* a,
              const void* b, void* c) {
    if constexpr (gemm_ok(K)) {
        using S = storage_t<K>;
        const dim3 threads(tile, tile);
        const int64_t z = batch < 65535 ? batch : 65535;
        const int64_t y = (m + tile - 1) / tile < 65535 ? (m + tile - 1) / tile : 65535;
        const dim3 grid(static_cast<unsigned>((n + tile - 1) / tile), static_cast<unsigned>(y),
                        static_cast<unsigned>(z));
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
