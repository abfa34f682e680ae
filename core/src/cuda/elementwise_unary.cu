// CUDA unary elementwise kernels for every kernel type: vectorised contiguous loads, strided.
#include "cuda/elementwise_ops.cuh"

namespace isthmus::cudak {

namespace {

// The same three paths as binary_kernel (Note [elementwise kernel paths]).
template <uop OP, kdt K>
__global__ void unary_kernel(space sp, arg out, arg a, bool vector_ok) {
    constexpr kdt RK = unary_result(OP, K);
    using S = storage_t<K>;
    using O = storage_t<RK>;
    auto f = [](S x) -> O {
        if constexpr (RK == K)
            return down<K>(uapply<OP, K>(up<K>(x)));
        else // bool tests, abs of complex: already the stored result type
            return static_cast<O>(uapply<OP, K>(up<K>(x)));
    };
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const S* pa = static_cast<const S*>(a.data);
    O* po = static_cast<O*>(const_cast<void*>(out.data));
    if (sp.contiguous) {
        int64_t start = 0;
        if (vector_ok) {
            constexpr int V = 16 / sizeof(S);
            const int64_t nv = sp.numel / V;
            for (int64_t v = tid; v < nv; v += stride) {
                const vec<S, V> x = reinterpret_cast<const vec<S, V>*>(pa)[v];
                vec<O, V> r;
                for (int j = 0; j < V; ++j) r.v[j] = f(x.v[j]);
                reinterpret_cast<vec<O, V>*>(po)[v] = r;
            }
            start = nv * V;
        }
        for (int64_t i = start + tid; i < sp.numel; i += stride) po[i] = f(pa[i]);
        return;
    }
    const int64_t* const strides[2] = {out.strides, a.strides};
    for (int64_t i = tid; i < sp.numel; i += stride) {
        int64_t off[2];
        offsets<2>(sp, i, strides, off);
        po[off[0]] = f(pa[off[1]]);
    }
}

template <uop OP, kdt K>
void run_unary(cudaStream_t s, const space& sp, const arg& out, const arg& a) {
    if constexpr (unary_ok(OP, K)) {
        using S = storage_t<K>;
        const bool vok = aligned16(out.data, a.data);
        const int64_t work = vok && sp.contiguous ? sp.numel / (16 / sizeof(S)) + 1 : sp.numel;
        unary_kernel<OP, K><<<grid_for(work, ew_block), ew_block, 0, s>>>(sp, out, a, vok);
    }
}

template <kdt K>
void unary_of(cudaStream_t s, uop op, const space& sp, const arg& out, const arg& a) {
    switch (op) {
#define ISTHMUS_CASE(OP)                                                                           \
    case uop::OP:                                                                                  \
        return run_unary<uop::OP, K>(s, sp, out, a);
        ISTHMUS_CASE(neg)
        ISTHMUS_CASE(abs)
        ISTHMUS_CASE(sign)
        ISTHMUS_CASE(exp)
        ISTHMUS_CASE(log)
        ISTHMUS_CASE(log2)
        ISTHMUS_CASE(log10)
        ISTHMUS_CASE(expm1)
        ISTHMUS_CASE(log1p)
        ISTHMUS_CASE(sqrt)
        ISTHMUS_CASE(rsqrt)
        ISTHMUS_CASE(sin)
        ISTHMUS_CASE(cos)
        ISTHMUS_CASE(tan)
        ISTHMUS_CASE(asin)
        ISTHMUS_CASE(acos)
        ISTHMUS_CASE(atan)
        ISTHMUS_CASE(sinh)
        ISTHMUS_CASE(cosh)
        ISTHMUS_CASE(tanh)
        ISTHMUS_CASE(floor)
        ISTHMUS_CASE(ceil)
        ISTHMUS_CASE(round)
        ISTHMUS_CASE(square)
        ISTHMUS_CASE(reciprocal)
        ISTHMUS_CASE(isnan)
        ISTHMUS_CASE(isinf)
        ISTHMUS_CASE(isfinite)
        ISTHMUS_CASE(logical_not)
        ISTHMUS_CASE(bit_not)
        ISTHMUS_CASE(conj)
#undef ISTHMUS_CASE
    }
}

} // namespace

void launch_unary(cudaStream_t s, uop op, kdt t, const space& sp, const arg& out, const arg& a) {
    ISTHMUS_KDT_DISPATCH(t, unary_of<K>(s, op, sp, out, a))
}

} // namespace isthmus::cudak
