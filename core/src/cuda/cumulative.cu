// CUDA cumulative sum and product along one axis: a chunked three-pass scan.
#include "cuda/device_types.cuh"
#include "cuda/elementwise_common.cuh"

namespace isthmus::cudak {

namespace {

// Note [gpu cumulative]: the input is (pre, len, post) around the axis, so line (p, j) has its
// elements at p * len * post + i * post + j. Each line is cut into `chunks` pieces of `per`
// elements, one thread per (line, chunk), consecutive threads on consecutive j so that reads
// coalesce when post > 1. Pass 1 reduces each chunk into scratch; pass 2 turns each line's
// chunk totals into exclusive prefixes (one thread per line); pass 3 rescans each chunk from
// its prefix and writes. With one chunk, passes 1 and 2 are skipped. The accumulators are the
// CPU's (double for float32, wrapping uint64 for integers), so only the order of the double
// operations differs from the CPU's sequential scan.
template <kdt K>
inline constexpr kdt acc_kdt = is_float(K) ? kdt::f64 : kdt::u64;

template <bool PROD, class A>
__device__ inline A step(A acc, A x) {
    if constexpr (PROD)
        return acc * x;
    else
        return acc + x;
}

struct geometry {
    int64_t pre, len, post, chunks, per;
    __device__ int64_t lines() const { return pre * post; }
    // thread t -> (p, chunk c, j), j fastest
    __device__ void split(int64_t t, int64_t& p, int64_t& c, int64_t& j) const {
        j = t % post;
        const int64_t rest = t / post;
        c = rest % chunks;
        p = rest / chunks;
    }
};

template <bool PROD, kdt K>
__global__ void chunk_totals(geometry g, const storage_t<K>* in, storage_t<acc_kdt<K>>* partial) {
    using A = storage_t<acc_kdt<K>>;
    const int64_t n = g.lines() * g.chunks;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < n;
         t += stride) {
        int64_t p, c, j;
        g.split(t, p, c, j);
        const int64_t lo = c * g.per, hi = lo + g.per < g.len ? lo + g.per : g.len;
        const storage_t<K>* x = in + p * g.len * g.post + j;
        A acc = PROD ? A(1) : A(0);
        for (int64_t i = lo; i < hi; ++i)
            acc = step<PROD>(acc, convert<acc_kdt<K>, K>(x[i * g.post]));
        partial[t] = acc;
    }
}

// partial[(p * chunks + c) * post + j] becomes the combination of chunks 0..c-1 of line (p, j).
template <bool PROD, kdt K>
__global__ void chunk_prefixes(geometry g, storage_t<acc_kdt<K>>* partial) {
    using A = storage_t<acc_kdt<K>>;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t line = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
         line < g.lines(); line += stride) {
        const int64_t p = line / g.post, j = line % g.post;
        A acc = PROD ? A(1) : A(0);
        for (int64_t c = 0; c < g.chunks; ++c) {
            A& slot = partial[(p * g.chunks + c) * g.post + j];
            const A total = slot;
            slot = acc;
            acc = step<PROD>(acc, total);
        }
    }
}

template <bool PROD, kdt K>
__global__ void chunk_scan(geometry g, const storage_t<K>* in, storage_t<K>* out,
                           const storage_t<acc_kdt<K>>* prefix) {
    using A = storage_t<acc_kdt<K>>;
    const int64_t n = g.lines() * g.chunks;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < n;
         t += stride) {
        int64_t p, c, j;
        g.split(t, p, c, j);
        const int64_t lo = c * g.per, hi = lo + g.per < g.len ? lo + g.per : g.len;
        const int64_t base = p * g.len * g.post + j;
        A acc = prefix ? prefix[t] : (PROD ? A(1) : A(0));
        for (int64_t i = lo; i < hi; ++i) {
            acc = step<PROD>(acc, convert<acc_kdt<K>, K>(in[base + i * g.post]));
            out[base + i * g.post] = convert<K, acc_kdt<K>>(acc);
        }
    }
}

constexpr int block = 256;

template <bool PROD, kdt K>
void run(cudaStream_t s, const geometry& g, const void* in, void* out, void* scratch) {
    using A = storage_t<acc_kdt<K>>;
    const auto* x = static_cast<const storage_t<K>*>(in);
    auto* y = static_cast<storage_t<K>*>(out);
    auto* partial = static_cast<A*>(scratch);
    const int64_t threads = g.pre * g.post * g.chunks;
    if (g.chunks > 1) {
        chunk_totals<PROD, K><<<grid_for(threads, block), block, 0, s>>>(g, x, partial);
        chunk_prefixes<PROD, K><<<grid_for(g.pre * g.post, block), block, 0, s>>>(g, partial);
    }
    chunk_scan<PROD, K>
        <<<grid_for(threads, block), block, 0, s>>>(g, x, y, g.chunks > 1 ? partial : nullptr);
}

template <kdt K>
void run_type(cudaStream_t s, bool prod, const geometry& g, const void* in, void* out,
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
    // enough threads to fill the GPU (about 128k), chunks of 64 elements at least
    const int64_t lines = pre * post;
    if (lines <= 0 || len <= 64 || lines >= 131072) return 1;
    const int64_t want = (131072 + lines - 1) / lines, most = (len + 63) / 64;
    return want < most ? want : most;
}

void launch_cumulative(cudaStream_t s, bool prod, kdt t, int64_t pre, int64_t len, int64_t post,
                       const void* in, void* out, void* scratch) {
    if (pre * len * post == 0) return;
    geometry g{pre, len, post, cumulative_chunks(pre, len, post), 0};
    g.per = (len + g.chunks - 1) / g.chunks;
    ISTHMUS_KDT_DISPATCH(t, run_type<K>(s, prod, g, in, out, scratch))
}

} // namespace isthmus::cudak
