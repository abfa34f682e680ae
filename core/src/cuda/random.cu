// CUDA random kernels: the CPU's Philox4x32-10 streams, element for element (uniform, normal,
// integers); the element maps are in random.cuh.
#include "cuda/elementwise_common.cuh"
#include "cuda/random.cuh"

namespace isthmus::cudak {

namespace {

// One Philox block per thread step (Note [gpu random]).
template <kdt K>
__global__ void real32_kernel(storage_t<K>* out, bool normal, int64_t n, uint64_t seed,
                              uint64_t first_block, real32_params p) {
    const int64_t blocks = (n + 3) / 4;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t blk = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; blk < blocks;
         blk += stride)
        real32_block<K>(out, normal, n, seed, first_block, blk, p);
}

__global__ void real64_kernel(double* out, bool normal, int64_t n, uint64_t seed,
                              uint64_t first_block, double a, double b) {
    const int64_t blocks = (n + 1) / 2;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t blk = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; blk < blocks;
         blk += stride)
        real64_block(out, normal, n, seed, first_block, blk, a, b);
}

template <kdt K>
__global__ void int_kernel(storage_t<K>* out, int64_t n, uint64_t seed, uint64_t first_block,
                           int64_t lo, uint64_t range) {
    const int64_t blocks = (n + 1) / 2;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t blk = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; blk < blocks;
         blk += stride)
        int_block<K>(out, n, seed, first_block, blk, lo, range);
}

constexpr int block = 256;

template <kdt K>
void run_real32(cudaStream_t s, bool normal, void* data, int64_t n, uint64_t seed,
                uint64_t first_block, double a, double b) {
    real32_kernel<K><<<grid_for((n + 3) / 4, block), block, 0, s>>>(
        static_cast<storage_t<K>*>(data), normal, n, seed, first_block, make_real32<K>(a, b));
}

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
    switch (t) {
    case kdt::f64:
        real64_kernel<<<grid_for((n + 1) / 2, block), block, 0, s>>>(
            static_cast<double*>(data), normal, n, seed, first_block, a, b);
        return;
    case kdt::f32:
        return run_real32<kdt::f32>(s, normal, data, n, seed, first_block, a, b);
    case kdt::f16:
        return run_real32<kdt::f16>(s, normal, data, n, seed, first_block, a, b);
    case kdt::bf16:
        return run_real32<kdt::bf16>(s, normal, data, n, seed, first_block, a, b);
    default:
        return;
    }
}

void launch_random_int(cudaStream_t s, kdt t, void* data, int64_t n, uint64_t seed,
                       uint64_t first_block, int64_t lo, uint64_t range) {
    if (n == 0) return;
    ISTHMUS_KDT_DISPATCH(t, run_int<K>(s, data, n, seed, first_block, lo, range))
}

} // namespace isthmus::cudak
