// CUDA ternary elementwise kernels: where(cond, a, b), clamp(x, lo, hi), fma(a, b, c).
#include "cuda/elementwise_ops.cuh"

namespace isthmus::cudak {

namespace {

// A contiguous flat loop or a strided one (no vector path: where/clamp are rarer than the
// binary ops, and four operands rarely share one alignment). Any operand may be a scalar.
template <top OP, kdt K>
__global__ void ternary_kernel(space sp, arg out, arg a, arg b, arg c) {
    using S = storage_t<K>;
    using SA = std::conditional_t<OP == top::where, unsigned char, S>;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const SA* pa = static_cast<const SA*>(a.data);
    const S* pb = static_cast<const S*>(b.data);
    const S* pc = static_cast<const S*>(c.data);
    S* po = static_cast<S*>(const_cast<void*>(out.data));
    const SA sa = pa ? SA() : scalar_of<SA>(a);
    const S sb = pb ? S() : scalar_of<S>(b), sc = pc ? S() : scalar_of<S>(c);
    auto f = [](SA x, S lo, S hi) -> S {
        if constexpr (OP == top::where) {
            return x ? lo : hi;
        } else if constexpr (OP == top::fma) { // x * lo + hi
            if constexpr (K == kdt::b8) {
                return static_cast<S>((x && lo) || hi);
            } else {
                const auto p = bapply<bop::mul, K>(up<K>(x), up<K>(lo));
                return down<K>(bapply<bop::add, K>(p, up<K>(hi)));
            }
        } else {
            return down<K>(elem::clamp(up<K>(x), up<K>(lo), up<K>(hi)));
        }
    };
    if (sp.contiguous) {
        for (int64_t i = tid; i < sp.numel; i += stride)
            po[i] = f(pa ? pa[i] : sa, pb ? pb[i] : sb, pc ? pc[i] : sc);
        return;
    }
    const int64_t* const strides[4] = {out.strides, a.strides, b.strides, c.strides};
    for (int64_t i = tid; i < sp.numel; i += stride) {
        int64_t off[4];
        offsets<4>(sp, i, strides, off);
        po[off[0]] = f(pa ? pa[off[1]] : sa, pb ? pb[off[2]] : sb, pc ? pc[off[3]] : sc);
    }
}

template <top OP, kdt K>
void run_ternary(cudaStream_t s, const space& sp, const arg& out, const arg& a, const arg& b,
                 const arg& c) {
    if constexpr (ternary_ok(OP, K))
        ternary_kernel<OP, K><<<grid_for(sp.numel, ew_block), ew_block, 0, s>>>(sp, out, a, b, c);
}

} // namespace

void launch_ternary(cudaStream_t s, top op, kdt t, const space& sp, const arg& out, const arg& a,
                    const arg& b, const arg& c) {
    if (op == top::where) {
        ISTHMUS_KDT_DISPATCH(t, (run_ternary<top::where, K>(s, sp, out, a, b, c)))
    } else if (op == top::fma) {
        ISTHMUS_KDT_DISPATCH(t, (run_ternary<top::fma, K>(s, sp, out, a, b, c)))
    } else {
        ISTHMUS_KDT_DISPATCH(t, (run_ternary<top::clamp, K>(s, sp, out, a, b, c)))
    }
}

} // namespace isthmus::cudak
