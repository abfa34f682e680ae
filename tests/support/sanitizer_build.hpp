// Whether a C++ suite is compiled for the sanitizer gate (AddressSanitizer), for the large-input
// cases that take fewer element types there.
#pragma once

// Note [large cases under the sanitizer]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The sanitizer gate runs the CPU kernels at -O0 with every access checked (See Note [sanitizer
// kernels at -O0]), so the reductions' large-input cases were its two longest tests (argmin/argmax
// 49 s, the one-pass variance 38 s: a quarter of the gate's C++ test time). What ASan checks there
// is each kernel path's memory access, which depends on the path and the element size, not on
// repeating the path for more types of the same size. So under the sanitizer those cases keep one
// type per path and size (the smallest and the largest elements, the complex path); the normal
// build runs every type.
#if defined(__SANITIZE_ADDRESS__)
#define ISTHMUS_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ISTHMUS_TEST_SANITIZED 1
#endif
#endif

namespace isthmus_test {
#ifdef ISTHMUS_TEST_SANITIZED
inline constexpr bool sanitized_build = true;
#else
inline constexpr bool sanitized_build = false;
#endif
} // namespace isthmus_test
