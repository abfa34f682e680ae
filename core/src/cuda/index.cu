// CUDA gather and scatter of advanced-index rows (integer index arrays, mask coordinates).
#include "cuda/elementwise_common.cuh"
#include "cuda/index.cuh"

namespace isthmus::cudak {

namespace {

struct alignas(8) bytes16 {
    uint64_t lo, hi;
};
// (every element address is a multiple of its size: misaligned device data is refused at
// import, Note [misaligned device data] in py_boundary/src/cuda_array_interface.cpp)

// Note [gpu index rows]
// ~~~~~~~~~~~~~~~~~~~~~
// The op layer checks the indices and turns them into one byte offset per row
// (core/src/ops/indexing.cpp); one thread per element of rows x rest copies one element (the rest
// index varies fastest, so neighbouring threads touch neighbouring elements when the rest
// dimensions are the inner ones). A scatter never sees repeated rows (the op layer keeps the last
// row per target: Note [repeated scatter rows], ops/dispatch_kernels.cpp), so its writes never
// race.
template <class W, bool SCATTER>
__global__ void index_kernel(int64_t rows, const int64_t* row_off, char* a, char* b, int64_t b_row,
                             rest_layout g) {
    const int64_t total = rows * g.numel;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
         e += stride) {
        int64_t oa, ob;
        index_offsets(g, row_off, b_row, e, oa, ob);
        if constexpr (SCATTER)
            *reinterpret_cast<W*>(a + oa) = *reinterpret_cast<const W*>(b + ob);
        else
            *reinterpret_cast<W*>(b + ob) = *reinterpret_cast<const W*>(a + oa);
    }
}

template <class W>
void run(cudaStream_t s, bool scatter, int64_t rows, const int64_t* row_off, void* a, void* b,
         int64_t b_row, const rest_layout& g) {
    const int64_t total = rows * g.numel;
    auto* pa = static_cast<char*>(a);
    auto* pb = static_cast<char*>(b);
    if (scatter)
        index_kernel<W, true><<<grid_for(total, 256), 256, 0, s>>>(rows, row_off, pa, pb, b_row, g);
    else
        index_kernel<W, false>
            <<<grid_for(total, 256), 256, 0, s>>>(rows, row_off, pa, pb, b_row, g);
}

} // namespace

void launch_index(cudaStream_t s, bool scatter, size_t itemsize, int64_t rows,
                  const int64_t* row_off, void* a_base, void* b_base, int64_t b_row,
                  const rest_layout& rest) {
    if (rows == 0 || rest.numel == 0) return;
    switch (itemsize) {
    case 1:
        return run<uint8_t>(s, scatter, rows, row_off, a_base, b_base, b_row, rest);
    case 2:
        return run<uint16_t>(s, scatter, rows, row_off, a_base, b_base, b_row, rest);
    case 4:
        return run<uint32_t>(s, scatter, rows, row_off, a_base, b_base, b_row, rest);
    case 8:
        return run<uint64_t>(s, scatter, rows, row_off, a_base, b_base, b_row, rest);
    case 16:
        return run<bytes16>(s, scatter, rows, row_off, a_base, b_base, b_row, rest);
    default:
        return;
    }
}

} // namespace isthmus::cudak
