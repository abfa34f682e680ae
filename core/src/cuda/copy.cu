// CUDA copy/cast kernel: strided copies with dtype conversion, and fills (a scalar source).
#include "cuda/device_types.cuh"
#include "cuda/elementwise_common.cuh"

namespace isthmus::cudak {

namespace {

template <kdt O, kdt I>
__global__ void copy_kernel(space sp, arg out, arg in) {
    using SO = storage_t<O>;
    using SI = storage_t<I>;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const SI* pi = static_cast<const SI*>(in.data);
    SO* po = static_cast<SO*>(const_cast<void*>(out.data));
    const SO s = pi ? SO() : convert<O, I>(scalar_of<SI>(in));
    if (sp.contiguous) {
        for (int64_t i = tid; i < sp.numel; i += stride) po[i] = pi ? convert<O, I>(pi[i]) : s;
        return;
    }
    const int64_t* const strides[2] = {out.strides, in.strides};
    for (int64_t i = tid; i < sp.numel; i += stride) {
        int64_t off[2];
        offsets<2>(sp, i, strides, off);
        po[off[0]] = pi ? convert<O, I>(pi[off[1]]) : s;
    }
}

template <kdt O>
void copy_to(cudaStream_t s, kdt in_t, const space& sp, const arg& out, const arg& in) {
    ISTHMUS_KDT_DISPATCH(in_t,
                         (copy_kernel<O, K><<<grid_for(sp.numel, 256), 256, 0, s>>>(sp, out, in)))
}

} // namespace

void launch_copy(cudaStream_t s, kdt out_t, kdt in_t, const space& sp, const arg& out,
                 const arg& in) {
    // the outer dispatch's K names the output type; copy_to's names the input's
    switch (out_t) {
#define ISTHMUS_OUT(X)                                                                             \
    case kdt::X:                                                                                   \
        return copy_to<kdt::X>(s, in_t, sp, out, in);
        ISTHMUS_OUT(b8)
        ISTHMUS_OUT(i8)
        ISTHMUS_OUT(i16)
        ISTHMUS_OUT(i32)
        ISTHMUS_OUT(i64)
        ISTHMUS_OUT(u8)
        ISTHMUS_OUT(u16)
        ISTHMUS_OUT(u32)
        ISTHMUS_OUT(u64)
        ISTHMUS_OUT(f16)
        ISTHMUS_OUT(bf16)
        ISTHMUS_OUT(f32)
        ISTHMUS_OUT(f64)
        ISTHMUS_OUT(c64)
        ISTHMUS_OUT(c128)
#undef ISTHMUS_OUT
    }
}

} // namespace isthmus::cudak
