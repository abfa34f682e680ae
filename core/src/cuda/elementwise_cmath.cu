// CUDA kernels of the complex transcendental functions and complex pow (complex64/128 only).
#include "cuda/elementwise_cmath.cuh"

namespace isthmus::cudak {

namespace {

// Note [complex math file]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// These 17 functions and pow, instantiated for the two complex types only, are the costliest
// element functions to compile (thrust's complex algorithms); keeping them in their own file keeps
// every other elementwise file's compile time unchanged and lets this one build in parallel with
// them. Only the ops of kernels.hpp's complex_math are instantiated here.
template <uop OP, kdt K>
void run_cmath(cudaStream_t s, const space& sp, const arg& out, const arg& a) {
    if constexpr (complex_math(OP)) run_unary<OP, K>(s, sp, out, a);
}

template <kdt K>
void unary_of(cudaStream_t s, uop op, const space& sp, const arg& out, const arg& a) {
    switch (op) {
#define ISTHMUS_CASE(OP, ...)                                                                      \
    case uop::OP:                                                                                  \
        return run_cmath<uop::OP, K>(s, sp, out, a);
        ISTHMUS_UNARY_OPS(ISTHMUS_CASE)
#undef ISTHMUS_CASE
    default:
        return;
    }
}

} // namespace

void launch_unary_cmath(cudaStream_t s, uop op, kdt t, const space& sp, const arg& out,
                        const arg& a) {
    if (t == kdt::c64)
        unary_of<kdt::c64>(s, op, sp, out, a);
    else if (t == kdt::c128)
        unary_of<kdt::c128>(s, op, sp, out, a);
}

void launch_binary_cmath(cudaStream_t s, bop op, kdt t, const space& sp, const arg& out,
                         const arg& a, const arg& b) {
    if (op != bop::pow) return;
    if (t == kdt::c64)
        run_binary<bop::pow, kdt::c64>(s, sp, out, a, b);
    else if (t == kdt::c128)
        run_binary<bop::pow, kdt::c128>(s, sp, out, a, b);
}

} // namespace isthmus::cudak
