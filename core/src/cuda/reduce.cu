// CUDA row reductions (sum, mean, min, max): float32 sums accumulate in double.
#include "cuda/elementwise_common.cuh"

#include <cfloat>
#include <climits>

namespace isthmus::cudak {

namespace {

// Note [gpu reductions]: the op layer hands over a contiguous (rows, cols) input. Each row is
// split into `chunks` pieces, one block each, reduced with a grid-stride loop and a block tree;
// with more than one chunk the partial results (in the accumulator type) go to scratch memory
// and a second kernel combines them per row. Sums accumulate in double for floating inputs and
// int64 for integers; min/max keep the input type and propagate NaN, as NumPy does.
template <rop OP, class I>
struct acc_of {
    using type = std::conditional_t<std::is_floating_point_v<I>, double, int64_t>;
};
template <class I>
struct acc_of<rop::min, I> {
    using type = I;
};
template <class I>
struct acc_of<rop::max, I> {
    using type = I;
};

template <class A>
__device__ inline bool nan_of(A x) {
    return x != x;
}

template <rop OP, class A>
struct combine {
    __device__ A identity() const {
        if constexpr (OP == rop::min) {
            if constexpr (std::is_floating_point_v<A>)
                return A(INFINITY);
            else
                return std::numeric_limits<A>::max();
        } else if constexpr (OP == rop::max) {
            if constexpr (std::is_floating_point_v<A>)
                return A(-INFINITY);
            else
                return std::numeric_limits<A>::lowest();
        } else {
            return A(0);
        }
    }
    __device__ A operator()(A x, A y) const {
        if constexpr (OP == rop::min)
            return nan_of(x) ? x : (nan_of(y) ? y : (y < x ? y : x));
        else if constexpr (OP == rop::max)
            return nan_of(x) ? x : (nan_of(y) ? y : (y > x ? y : x));
        else
            return x + y;
    }
};

template <class A>
__device__ void store(void* out, kdt t, int64_t i, A v) {
    switch (t) {
    case kdt::b8:
        static_cast<unsigned char*>(out)[i] = v != A(0);
        break;
    case kdt::i8:
        static_cast<int8_t*>(out)[i] = static_cast<int8_t>(v);
        break;
    case kdt::i16:
        static_cast<int16_t*>(out)[i] = static_cast<int16_t>(v);
        break;
    case kdt::i32:
        static_cast<int32_t*>(out)[i] = static_cast<int32_t>(v);
        break;
    case kdt::i64:
        static_cast<int64_t*>(out)[i] = static_cast<int64_t>(v);
        break;
    case kdt::u8:
        static_cast<uint8_t*>(out)[i] = static_cast<uint8_t>(v);
        break;
    case kdt::f32:
        static_cast<float*>(out)[i] = static_cast<float>(v);
        break;
    case kdt::f64:
        static_cast<double*>(out)[i] = static_cast<double>(v);
        break;
    }
}

template <rop OP, class A>
__device__ void finish(void* out, kdt out_t, int64_t row, A v, int64_t cols) {
    if constexpr (OP == rop::mean)
        store(out, out_t, row, static_cast<double>(v) / double(cols));
    else
        store(out, out_t, row, v);
}

constexpr int block = 256;

// The block's combined value of each thread's `v` (valid in thread 0).
template <rop OP, class A>
__device__ A block_reduce(A v) {
    __shared__ A shared[block];
    const combine<OP, A> c;
    shared[threadIdx.x] = v;
    __syncthreads();
    for (int s = block / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) shared[threadIdx.x] = c(shared[threadIdx.x], shared[threadIdx.x + s]);
        __syncthreads();
    }
    return shared[0];
}

template <rop OP, class I>
__global__ void rows_kernel(const I* in, int64_t rows, int64_t cols, int64_t chunks, void* out,
                            kdt out_t, typename acc_of<OP, I>::type* partial) {
    using A = typename acc_of<OP, I>::type;
    const combine<OP, A> c;
    for (int64_t task = blockIdx.x; task < rows * chunks; task += gridDim.x) {
        const int64_t row = task / chunks, chunk = task % chunks;
        const int64_t per = (cols + chunks - 1) / chunks;
        const int64_t lo = chunk * per, hi = lo + per < cols ? lo + per : cols;
        const I* p = in + row * cols;
        A v = c.identity();
        for (int64_t j = lo + threadIdx.x; j < hi; j += block) v = c(v, static_cast<A>(p[j]));
        v = block_reduce<OP, A>(v);
        if (threadIdx.x == 0) {
            if (chunks == 1)
                finish<OP, A>(out, out_t, row, v, cols);
            else
                partial[task] = v;
        }
        __syncthreads();
    }
}

template <rop OP, class A>
__global__ void partials_kernel(const A* partial, int64_t rows, int64_t chunks, int64_t cols,
                                void* out, kdt out_t) {
    const combine<OP, A> c;
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        A v = c.identity();
        for (int64_t j = threadIdx.x; j < chunks; j += block) v = c(v, partial[row * chunks + j]);
        v = block_reduce<OP, A>(v);
        if (threadIdx.x == 0) finish<OP, A>(out, out_t, row, v, cols);
        __syncthreads();
    }
}

// Short rows: one thread per row.
template <rop OP, class I>
__global__ void short_rows_kernel(const I* in, int64_t rows, int64_t cols, void* out, kdt out_t) {
    using A = typename acc_of<OP, I>::type;
    const combine<OP, A> c;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < rows;
         row += stride) {
        A v = c.identity();
        for (int64_t j = 0; j < cols; ++j) v = c(v, static_cast<A>(in[row * cols + j]));
        finish<OP, A>(out, out_t, row, v, cols);
    }
}

template <rop OP, class I>
void run(cudaStream_t s, int64_t rows, int64_t cols, const void* in, void* out, kdt out_t,
         void* scratch) {
    using A = typename acc_of<OP, I>::type;
    const I* pi = static_cast<const I*>(in);
    if (rows == 0) return;
    if (cols <= 32 && rows >= 1024) {
        short_rows_kernel<OP, I>
            <<<grid_for(rows, block), block, 0, s>>>(pi, rows, cols, out, out_t);
        return;
    }
    const int64_t chunks = reduce_chunks(rows, cols);
    A* partial = static_cast<A*>(scratch);
    rows_kernel<OP, I><<<grid_for(rows * chunks * block, block), block, 0, s>>>(
        pi, rows, cols, chunks, out, out_t, partial);
    if (chunks > 1)
        partials_kernel<OP, A><<<grid_for(rows * block, block), block, 0, s>>>(
            partial, rows, chunks, cols, out, out_t);
}

template <class I>
void run_op(cudaStream_t s, rop op, int64_t rows, int64_t cols, const void* in, void* out,
            kdt out_t, void* scratch) {
    switch (op) {
    case rop::sum:
        return run<rop::sum, I>(s, rows, cols, in, out, out_t, scratch);
    case rop::mean:
        return run<rop::mean, I>(s, rows, cols, in, out, out_t, scratch);
    case rop::min:
        return run<rop::min, I>(s, rows, cols, in, out, out_t, scratch);
    case rop::max:
        return run<rop::max, I>(s, rows, cols, in, out, out_t, scratch);
    }
}

} // namespace

int64_t reduce_chunks(int64_t rows, int64_t cols) {
    if (rows <= 0 || (cols <= 32 && rows >= 1024)) return 1;
    int64_t chunks = (cols + 4095) / 4096; // about 16 elements per thread per chunk
    const int64_t cap = rows >= 4096 ? 1 : 4096 / rows;
    if (chunks > cap) chunks = cap;
    return chunks < 1 ? 1 : chunks;
}

void launch_reduce(cudaStream_t s, rop op, kdt in_t, kdt out_t, int64_t rows, int64_t cols,
                   const void* in, void* out, void* scratch) {
    ISTHMUS_KDT_SWITCH_ALL(in_t, run_op<T>(s, op, rows, cols, in, out, out_t, scratch))
}

} // namespace isthmus::cudak
