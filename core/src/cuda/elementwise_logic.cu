// CUDA binary comparison, logic, bitwise and shift kernels for every kernel type.
#include "cuda/elementwise_ops.cuh"

namespace isthmus::cudak {

namespace {

template <kdt K>
void logic_of(cudaStream_t s, bop op, const space& sp, const arg& out, const arg& a, const arg& b) {
    switch (op) {
#define ISTHMUS_CASE(OP)                                                                           \
    case bop::OP:                                                                                  \
        return run_binary<bop::OP, K>(s, sp, out, a, b);
        ISTHMUS_CASE(eq)
        ISTHMUS_CASE(ne)
        ISTHMUS_CASE(lt)
        ISTHMUS_CASE(le)
        ISTHMUS_CASE(gt)
        ISTHMUS_CASE(ge)
        ISTHMUS_CASE(logical_and)
        ISTHMUS_CASE(logical_or)
        ISTHMUS_CASE(logical_xor)
        ISTHMUS_CASE(bit_and)
        ISTHMUS_CASE(bit_or)
        ISTHMUS_CASE(bit_xor)
        ISTHMUS_CASE(shift_left)
        ISTHMUS_CASE(shift_right)
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
