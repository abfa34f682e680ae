// CUDA binary comparison, logic, bitwise and shift kernels (logic_family) for every kernel type.
#include "cuda/elementwise_ops.cuh"

namespace isthmus::cudak {

namespace {

// Only kernels.hpp's logic_family is compiled here; elementwise_arith.cu has the others.
template <bop OP, kdt K>
void run_logic(cudaStream_t s, const space& sp, const arg& out, const arg& a, const arg& b) {
    if constexpr (logic_family(OP)) run_binary<OP, K>(s, sp, out, a, b);
}

template <kdt K>
void logic_of(cudaStream_t s, bop op, const space& sp, const arg& out, const arg& a, const arg& b) {
    switch (op) {
#define ISTHMUS_CASE(OP, ...)                                                                      \
    case bop::OP:                                                                                  \
        return run_logic<bop::OP, K>(s, sp, out, a, b);
        ISTHMUS_BINARY_OPS(ISTHMUS_CASE)
#undef ISTHMUS_CASE
    default:
        return;
    }
}

} // namespace

void launch_binary_logic(cudaStream_t s, bop op, kdt t, const space& sp, const arg& out,
                         const arg& a, const arg& b) {
    ISTHMUS_KDT_DISPATCH(t, logic_of<K>(s, op, sp, out, a, b))
}

} // namespace isthmus::cudak
