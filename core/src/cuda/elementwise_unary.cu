// CUDA unary elementwise kernels for every kernel type (complex math: elementwise_cmath.cu).
#include "cuda/elementwise_ops.cuh"

namespace isthmus::cudak {

namespace {

// Complex transcendental functions launch from elementwise_cmath.cu (kernels.hpp's
// complex_math): this file never compiles them.
template <uop OP, kdt K>
void run_unary_here(cudaStream_t s, const space& sp, const arg& out, const arg& a) {
    if constexpr (!(is_cplx(K) && complex_math(OP))) run_unary<OP, K>(s, sp, out, a);
}

template <kdt K>
void unary_of(cudaStream_t s, uop op, const space& sp, const arg& out, const arg& a) {
    switch (op) {
#define ISTHMUS_CASE(OP, ...)                                                                      \
    case uop::OP:                                                                                  \
        return run_unary_here<uop::OP, K>(s, sp, out, a);
        ISTHMUS_UNARY_OPS(ISTHMUS_CASE)
#undef ISTHMUS_CASE
    default:
        return;
    }
}

} // namespace

void launch_unary(cudaStream_t s, uop op, kdt t, const space& sp, const arg& out, const arg& a) {
    if (is_cplx(t) && complex_math(op)) return launch_unary_cmath(s, op, t, sp, out, a);
    ISTHMUS_KDT_DISPATCH(t, unary_of<K>(s, op, sp, out, a))
}

} // namespace isthmus::cudak
