// CUDA cumulative sum and product along one axis: a chunked three-pass scan.
#include "cuda/cumulative.cuh"
#include "cuda/elementwise_common.cuh"

namespace isthmus::cudak {

namespace {

// The passes of Note [gpu cumulative] (cumulative.cuh), each a grid-stride loop over its work.

template <bool PROD, kdt K>
__global__ void chunk_totals(cum_geometry g, const storage_t<K>* in,
                             storage_t<cum_acc_kdt<K>>* partial) {
    const int64_t n = g.lines() * g.chunks;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < n;
         t += stride)
        partial[t] = cum_chunk_total<PROD, K>(g, in, t);
}

// Pass 2, one thread per line (lines of few chunks).
template <bool PROD, kdt K>
__global__ void line_prefixes(cum_geometry g, storage_t<cum_acc_kdt<K>>* partial) {
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t line = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
         line < g.lines(); line += stride)
        cum_line_prefixes<PROD>(g, partial, line);
}

// Pass 2, one block of cum_block threads per line (lines of many chunks).
template <bool PROD, kdt K>
__global__ void block_prefixes(cum_geometry g, storage_t<cum_acc_kdt<K>>* partial) {
    using A = storage_t<cum_acc_kdt<K>>;
    __shared__ A seg[cum_block];
    const int tid = static_cast<int>(threadIdx.x);
    for (int64_t line = blockIdx.x; line < g.lines(); line += gridDim.x) { // uniform per block
        seg[tid] = cum_segment_total<PROD>(g, partial, line, tid, cum_block);
        __syncthreads();
        if (tid == 0) cum_exclusive<PROD>(seg, cum_block);
        __syncthreads();
        cum_segment_rewrite<PROD>(g, partial, line, tid, cum_block, seg[tid]);
        __syncthreads(); // seg is refilled for the block's next line
    }
}

template <bool PROD, kdt K>
__global__ void chunk_scan(cum_geometry g, const storage_t<K>* in, storage_t<K>* out,
                           const storage_t<cum_acc_kdt<K>>* prefix) {
    const int64_t n = g.lines() * g.chunks;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < n;
         t += stride)
        cum_chunk_scan<PROD, K>(g, in, out, prefix, t);
}

template <bool PROD, kdt K>
void run(cudaStream_t s, const cum_geometry& g, const void* in, void* out, void* scratch) {
    using A = storage_t<cum_acc_kdt<K>>;
    const auto* x = static_cast<const storage_t<K>*>(in);
    auto* y = static_cast<storage_t<K>*>(out);
    auto* partial = static_cast<A*>(scratch);
    const int64_t threads = g.lines() * g.chunks;
    if (g.chunks > 1) {
        chunk_totals<PROD, K><<<grid_for(threads, cum_block), cum_block, 0, s>>>(g, x, partial);
        if (g.chunks <= cum_serial_chunks)
            line_prefixes<PROD, K><<<grid_for(g.lines(), cum_block), cum_block, 0, s>>>(g, partial);
        else
            block_prefixes<PROD, K>
                <<<grid_for(g.lines() * cum_block, cum_block), cum_block, 0, s>>>(g, partial);
    }
    chunk_scan<PROD, K><<<grid_for(threads, cum_block), cum_block, 0, s>>>(
        g, x, y, g.chunks > 1 ? partial : nullptr);
}

template <kdt K>
void run_type(cudaStream_t s, bool prod, const cum_geometry& g, const void* in, void* out,
              void* scratch) {
    if constexpr (cumulative_ok(K)) {
        if (prod)
            run<true, K>(s, g, in, out, scratch);
        else
            run<false, K>(s, g, in, out, scratch);
    }
}

} // namespace

int64_t cumulative_chunks(int64_t pre, int64_t len, int64_t post) {
    return cumulative_chunk_count(pre, len, post);
}

void launch_cumulative(cudaStream_t s, bool prod, kdt t, int64_t pre, int64_t len, int64_t post,
                       const void* in, void* out, void* scratch) {
    if (pre * len * post == 0) return;
    const cum_geometry g = cumulative_geometry(pre, len, post);
    ISTHMUS_KDT_DISPATCH(t, run_type<K>(s, prod, g, in, out, scratch))
}

} // namespace isthmus::cudak
