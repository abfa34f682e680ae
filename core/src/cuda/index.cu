// CUDA gather and scatter of advanced-index rows (integer index arrays, mask coordinates).
#include "cuda/elementwise_common.cuh"
#include "cuda/index.cuh"

namespace isthmus::cudak {

namespace {

struct alignas(8) bytes16 {
    uint64_t lo, hi;
};
// Note [index word alignment]: complex64 (8 bytes) and complex128 (16 bytes) elements need only
// their real part's alignment (4 and 8 bytes: DLPack / array-interface imports accept that), and
// a GPU load of a wider word from a smaller alignment faults. Such data is moved as 4-byte words.
struct alignas(4) words8 {
    uint32_t w[2];
};
struct alignas(4) words16 {
    uint32_t w[4];
};

// Note [gpu index rows]: the op layer checks the indices and turns them into one byte offset
// per row (core/src/ops/indexing.cpp); one thread per element of rows x rest copies one element
// (the rest index varies fastest, so neighbouring threads touch neighbouring elements when the
// rest dimensions are the inner ones). A scatter never sees repeated rows (the op layer keeps
// those on the CPU, where the last value wins), so its writes never race.
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
    // the row offsets and strides are multiples of the item size: the bases decide alignment
    const uintptr_t bases =
        reinterpret_cast<uintptr_t>(a_base) | reinterpret_cast<uintptr_t>(b_base);
    if (itemsize == 8 && bases % 8 != 0)
        return run<words8>(s, scatter, rows, row_off, a_base, b_base, b_row, rest);
    if (itemsize == 16 && bases % 8 != 0)
        return run<words16>(s, scatter, rows, row_off, a_base, b_base, b_row, rest);
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
