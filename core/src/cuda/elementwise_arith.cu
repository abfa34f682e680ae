// CUDA binary arithmetic kernels (add ... atan2: not logic_family) for every kernel type (complex
// pow: elementwise_cmath.cu), and launch_binary.
#include "cuda/elementwise_ops.cuh"

namespace isthmus::cudak {

namespace {

// Complex pow launches from elementwise_cmath.cu, the logic family from elementwise_logic.cu:
// this file never compiles them.
template <bop OP, kdt K>
void run_binary_here(cudaStream_t s, const space& sp, const arg& out, const arg& a, const arg& b) {
    if constexpr (!logic_family(OP) && !(is_cplx(K) && OP == bop::pow))
        run_binary<OP, K>(s, sp, out, a, b);
}

template <kdt K>
void arith_of(cudaStream_t s, bop op, const space& sp, const arg& out, const arg& a, const arg& b) {
    if constexpr (is_cplx(K))
        if (op == bop::pow) return launch_binary_cmath(s, op, K, sp, out, a, b);
    switch (op) {
#define ISTHMUS_CASE(OP, ...)                                                                      \
    case bop::OP:                                                                                  \
        return run_binary_here<bop::OP, K>(s, sp, out, a, b);
        ISTHMUS_BINARY_OPS(ISTHMUS_CASE)
#undef ISTHMUS_CASE
    default:
        return;
    }
}

} // namespace

void launch_binary(cudaStream_t s, bop op, kdt t, const space& sp, const arg& out, const arg& a,
                   const arg& b) {
    if (logic_family(op)) return launch_binary_logic(s, op, t, sp, out, a, b);
    ISTHMUS_KDT_DISPATCH(t, arith_of<K>(s, op, sp, out, a, b))
}

} // namespace isthmus::cudak
