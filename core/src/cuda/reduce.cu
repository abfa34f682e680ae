// CUDA row reductions: sum, mean, prod (floats accumulate in double, complex in complex128),
// min, max, any, all, argmin, argmax on every type.
#include "cuda/reduce.cuh"

namespace isthmus::cudak {

namespace {

// Note [gpu reductions] (reduce.cuh): accumulators and combine steps.

// Writes the row's result as element `row` of `out` (of kdt K), for the output types
// reduce_ok admits.
template <rop OP, kdt I, kdt K>
__device__ void put(void* out, int64_t row, storage_t<acc_kdt(OP, I)> v, int64_t cols) {
    if constexpr (reduce_ok(OP, I, K))
        static_cast<storage_t<K>*>(out)[row] = combine<OP, I>().template result<K>(v, cols);
}

template <rop OP, kdt I>
__device__ void finish(void* out, kdt out_t, int64_t row, storage_t<acc_kdt(OP, I)> v,
                       int64_t cols) {
    ISTHMUS_KDT_DISPATCH(out_t, (put<OP, I, K>(out, row, v, cols)))
}

constexpr int block = 256;

// The block's combined value of each thread's `v` (valid in every thread on return).
template <class A, class F>
__device__ A block_reduce(A v, F c) {
    __shared__ A shared[block];
    shared[threadIdx.x] = v;
    __syncthreads();
    for (int s = block / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) shared[threadIdx.x] = c(shared[threadIdx.x], shared[threadIdx.x + s]);
        __syncthreads();
    }
    const A r = shared[0];
    __syncthreads(); // shared is reused by the next task of the block
    return r;
}

template <rop OP, kdt I>
__global__ void rows_kernel(const storage_t<I>* in, int64_t rows, int64_t cols, int64_t chunks,
                            void* out, kdt out_t, storage_t<acc_kdt(OP, I)>* partial) {
    using A = storage_t<acc_kdt(OP, I)>;
    const combine<OP, I> c;
    for (int64_t task = blockIdx.x; task < rows * chunks; task += gridDim.x) {
        const int64_t row = task / chunks, chunk = task % chunks;
        const int64_t per = (cols + chunks - 1) / chunks;
        const int64_t lo = chunk * per, hi = lo + per < cols ? lo + per : cols;
        const storage_t<I>* p = in + row * cols;
        A v = c.identity();
        for (int64_t j = lo + threadIdx.x; j < hi; j += block) v = c(v, c.load(p[j]));
        v = block_reduce(v, c);
        if (threadIdx.x == 0) {
            if (chunks == 1)
                finish<OP, I>(out, out_t, row, v, cols);
            else
                partial[task] = v;
        }
    }
}

template <rop OP, kdt I>
__global__ void partials_kernel(const storage_t<acc_kdt(OP, I)>* partial, int64_t rows,
                                int64_t chunks, int64_t cols, void* out, kdt out_t) {
    using A = storage_t<acc_kdt(OP, I)>;
    const combine<OP, I> c;
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        A v = c.identity();
        for (int64_t j = threadIdx.x; j < chunks; j += block) v = c(v, partial[row * chunks + j]);
        v = block_reduce(v, c);
        if (threadIdx.x == 0) finish<OP, I>(out, out_t, row, v, cols);
    }
}

// Short rows: one thread per row.
template <rop OP, kdt I>
__global__ void short_rows_kernel(const storage_t<I>* in, int64_t rows, int64_t cols, void* out,
                                  kdt out_t) {
    using A = storage_t<acc_kdt(OP, I)>;
    const combine<OP, I> c;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < rows;
         row += stride) {
        A v = c.identity();
        for (int64_t j = 0; j < cols; ++j) v = c(v, c.load(in[row * cols + j]));
        finish<OP, I>(out, out_t, row, v, cols);
    }
}

// ---- argmin / argmax (arg_acc, arg_combine: reduce.cuh) ----

template <bool MAX, kdt I>
__global__ void arg_rows_kernel(const storage_t<I>* in, int64_t rows, int64_t cols, int64_t* out) {
    using C = compute_t<I>;
    const arg_combine<MAX, C> c;
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const storage_t<I>* p = in + row * cols;
        arg_acc<C> v{C(), -1, false};
        // each thread walks its elements in increasing order, so within a thread the first
        // occurrence is kept by the strict comparisons
        for (int64_t j = threadIdx.x; j < cols; j += block) {
            const C x = up<I>(p[j]);
            v = c(v, arg_acc<C>{x, j, nan_of(x)});
        }
        v = block_reduce(v, c);
        if (threadIdx.x == 0) out[row] = v.i;
    }
}

template <bool MAX, kdt I>
__global__ void arg_short_rows_kernel(const storage_t<I>* in, int64_t rows, int64_t cols,
                                      int64_t* out) {
    using C = compute_t<I>;
    const arg_combine<MAX, C> c;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < rows;
         row += stride) {
        arg_acc<C> v{C(), -1, false};
        for (int64_t j = 0; j < cols; ++j) {
            const C x = up<I>(in[row * cols + j]);
            v = c(v, arg_acc<C>{x, j, nan_of(x)});
        }
        out[row] = v.i;
    }
}

bool short_rows(int64_t rows, int64_t cols) {
    return cols <= 32 && rows >= 1024;
}

template <rop OP, kdt I>
void run(cudaStream_t s, int64_t rows, int64_t cols, const void* in, void* out, kdt out_t,
         void* scratch) {
    const auto* pi = static_cast<const storage_t<I>*>(in);
    if constexpr (OP == rop::argmin || OP == rop::argmax) {
        constexpr bool mx = OP == rop::argmax;
        auto* po = static_cast<int64_t*>(out);
        if (short_rows(rows, cols))
            arg_short_rows_kernel<mx, I>
                <<<grid_for(rows, block), block, 0, s>>>(pi, rows, cols, po);
        else
            arg_rows_kernel<mx, I>
                <<<grid_for(rows * block, block), block, 0, s>>>(pi, rows, cols, po);
    } else {
        using A = storage_t<acc_kdt(OP, I)>;
        if (short_rows(rows, cols)) {
            short_rows_kernel<OP, I>
                <<<grid_for(rows, block), block, 0, s>>>(pi, rows, cols, out, out_t);
            return;
        }
        const int64_t chunks = reduce_chunks(OP, rows, cols);
        A* partial = static_cast<A*>(scratch);
        rows_kernel<OP, I><<<grid_for(rows * chunks * block, block), block, 0, s>>>(
            pi, rows, cols, chunks, out, out_t, partial);
        if (chunks > 1)
            partials_kernel<OP, I><<<grid_for(rows * block, block), block, 0, s>>>(
                partial, rows, chunks, cols, out, out_t);
    }
}

template <kdt I>
void run_op(cudaStream_t s, rop op, int64_t rows, int64_t cols, const void* in, void* out,
            kdt out_t, void* scratch) {
    switch (op) {
#define ISTHMUS_CASE(OP)                                                                           \
    case rop::OP:                                                                                  \
        return run<rop::OP, I>(s, rows, cols, in, out, out_t, scratch);
        ISTHMUS_CASE(sum)
        ISTHMUS_CASE(mean)
        ISTHMUS_CASE(min)
        ISTHMUS_CASE(max)
        ISTHMUS_CASE(prod)
        ISTHMUS_CASE(any)
        ISTHMUS_CASE(all)
        ISTHMUS_CASE(argmin)
        ISTHMUS_CASE(argmax)
#undef ISTHMUS_CASE
    }
}

} // namespace

int64_t reduce_chunks(rop op, int64_t rows, int64_t cols) {
    if (op == rop::argmin || op == rop::argmax) return 1;
    if (rows <= 0 || short_rows(rows, cols)) return 1;
    int64_t chunks = (cols + 4095) / 4096; // about 16 elements per thread per chunk
    const int64_t cap = rows >= 4096 ? 1 : 4096 / rows;
    if (chunks > cap) chunks = cap;
    return chunks < 1 ? 1 : chunks;
}

void launch_reduce(cudaStream_t s, rop op, kdt in_t, kdt out_t, int64_t rows, int64_t cols,
                   const void* in, void* out, void* scratch) {
    if (rows == 0) return;
    ISTHMUS_KDT_DISPATCH(in_t, run_op<K>(s, op, rows, cols, in, out, out_t, scratch))
}

} // namespace isthmus::cudak
