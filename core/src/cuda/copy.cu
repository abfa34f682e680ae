// CUDA copy/cast kernel: strided copies with dtype conversion, and fills (a scalar source).
#include "cuda/elementwise_common.cuh"

namespace isthmus::cudak {

namespace {

template <class O, class I>
__device__ inline O convert(I v) {
    if constexpr (std::is_same_v<O, unsigned char> && !std::is_same_v<I, unsigned char>)
        return static_cast<O>(v != I(0));
    else
        return static_cast<O>(v);
}

template <class O, class I>
__global__ void copy_kernel(space sp, arg out, arg in) {
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const I* pi = static_cast<const I*>(in.data);
    O* po = static_cast<O*>(const_cast<void*>(out.data));
    const O s = pi ? O() : convert<O>(scalar_of<I>(in));
    if (sp.contiguous) {
        for (int64_t i = tid; i < sp.numel; i += stride) po[i] = pi ? convert<O>(pi[i]) : s;
        return;
    }
    const int64_t* const strides[2] = {out.strides, in.strides};
    for (int64_t i = tid; i < sp.numel; i += stride) {
        int64_t off[2];
        offsets<2>(sp, i, strides, off);
        po[off[0]] = pi ? convert<O>(pi[off[1]]) : s;
    }
}

template <class O>
void copy_to(cudaStream_t s, kdt in_t, const space& sp, const arg& out, const arg& in) {
    ISTHMUS_KDT_SWITCH_ALL(in_t,
                           (copy_kernel<O, T><<<grid_for(sp.numel, 256), 256, 0, s>>>(sp, out, in)))
}

} // namespace

void launch_copy(cudaStream_t s, kdt out_t, kdt in_t, const space& sp, const arg& out,
                 const arg& in) {
    ISTHMUS_KDT_SWITCH_ALL(out_t, copy_to<T>(s, in_t, sp, out, in))
}

} // namespace isthmus::cudak
