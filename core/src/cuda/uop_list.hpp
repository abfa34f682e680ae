// The list of unary ops with GPU kernels, for switches and maps that cover every one of them.
#pragma once

/// Calls X(name) for every cudak::uop, in the enum's order (kernels.hpp); the names are also
/// those of isthmus::unary_op.
#define ISTHMUS_CUDA_UOPS(X)                                                                       \
    X(neg)                                                                                         \
    X(abs)                                                                                         \
    X(sign)                                                                                        \
    X(exp)                                                                                         \
    X(log)                                                                                         \
    X(log2)                                                                                        \
    X(log10)                                                                                       \
    X(expm1)                                                                                       \
    X(log1p)                                                                                       \
    X(sqrt)                                                                                        \
    X(rsqrt)                                                                                       \
    X(sin)                                                                                         \
    X(cos)                                                                                         \
    X(tan)                                                                                         \
    X(asin)                                                                                        \
    X(acos)                                                                                        \
    X(atan)                                                                                        \
    X(sinh)                                                                                        \
    X(cosh)                                                                                        \
    X(tanh)                                                                                        \
    X(floor)                                                                                       \
    X(ceil)                                                                                        \
    X(round)                                                                                       \
    X(square)                                                                                      \
    X(reciprocal)                                                                                  \
    X(isnan)                                                                                       \
    X(isinf)                                                                                       \
    X(isfinite)                                                                                    \
    X(logical_not)                                                                                 \
    X(bit_not)                                                                                     \
    X(conj)
