// A tiled CUDA matrix product, used for matmul when the build has no cuBLAS.
#include "cuda/elementwise_common.cuh"

namespace isthmus::cudak {

namespace {

constexpr int tile = 16;

template <class T>
__global__ void gemm_kernel(int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c) {
    __shared__ T as[tile][tile];
    __shared__ T bs[tile][tile];
    const int64_t z = blockIdx.z;
    a += z * m * k;
    b += z * k * n;
    c += z * m * n;
    const int64_t row = static_cast<int64_t>(blockIdx.y) * tile + threadIdx.y;
    const int64_t col = static_cast<int64_t>(blockIdx.x) * tile + threadIdx.x;
    T acc = T(0);
    for (int64_t t = 0; t < k; t += tile) {
        const int64_t ka = t + threadIdx.x, kb = t + threadIdx.y;
        as[threadIdx.y][threadIdx.x] = row < m && ka < k ? a[row * k + ka] : T(0);
        bs[threadIdx.y][threadIdx.x] = kb < k && col < n ? b[kb * n + col] : T(0);
        __syncthreads();
        for (int j = 0; j < tile; ++j) acc += as[threadIdx.y][j] * bs[j][threadIdx.x];
        __syncthreads();
    }
    if (row < m && col < n) c[row * n + col] = acc;
}

} // namespace

void launch_gemm(cudaStream_t s, kdt t, int64_t batch, int64_t m, int64_t n, int64_t k,
                 const void* a, const void* b, void* c) {
    const dim3 threads(tile, tile);
    const dim3 grid(static_cast<unsigned>((n + tile - 1) / tile),
                    static_cast<unsigned>((m + tile - 1) / tile), static_cast<unsigned>(batch));
    if (t == kdt::f32)
        gemm_kernel<float><<<grid, threads, 0, s>>>(m, n, k, static_cast<const float*>(a),
                                                    static_cast<const float*>(b),
                                                    static_cast<float*>(c));
    else if (t == kdt::f64)
        gemm_kernel<double><<<grid, threads, 0, s>>>(m, n, k, static_cast<const double*>(a),
                                                     static_cast<const double*>(b),
                                                     static_cast<double*>(c));
}

} // namespace isthmus::cudak
