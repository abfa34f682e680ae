// Internal: ISTHMUS_HD, the marker of functions both the C++ compiler and nvcc compile.
#pragma once

/// Marks an element function callable from CPU loops and CUDA kernels alike (Note [element
/// functions once] in kernels/element_functions.hpp). Plain `inline` for the C++ compiler.
#if defined(__CUDACC__)
#define ISTHMUS_HD __host__ __device__
#else
#define ISTHMUS_HD
#endif
