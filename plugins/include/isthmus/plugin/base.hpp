// The author layer's base, free of the standard library's heavy headers: the support macros, the
// running call, the real dtype codes; then the device layer (vec, views). Kernel-only plugins
// compile against this and module_base.hpp alone (Note [kernel-only plugins]).
#pragma once

#include "isthmus/plugin_abi.h"

// Note [cmath in kernel-only compiles]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// GCC instantiates what a header leaves pending at the end of every translation unit, and since
// C++17 libstdc++'s <cmath> brings the mathematical special functions (std::beta, std::expint,
// std::riemann_zeta, ...: <bits/specfun.h> and its tr1 .tcc files): 0.03 s of every kernel-only
// compile (a TU of a precompiled <cmath> and nothing else, g++ 12 -O3: 0.03-0.04 s of CPU,
// 0.00-0.01 s without them), a seventh of a small kernel's. The kernel half of the layer (and only
// it: ISTHMUS_PLUGIN_LEAN) therefore includes libstdc++'s <cmath> without them, by clearing the
// configuration macro that selects them before the first standard header. A kernel that calls one
// fails the kernel-only compile and is compiled against the full layer, which has them (Note
// [kernel-only plugins] in plugins/src/author_layer.cpp): the same plugin, compiled slower.
#if defined(ISTHMUS_PLUGIN_LEAN) && !defined(__CUDACC__) && __has_include(<bits/c++config.h>)
#include <bits/c++config.h>
#undef _GLIBCXX_USE_STD_SPEC_FUNCS
#endif

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <tuple>
#include <type_traits>
#include <utility>

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#endif

// Note [setup code is cold]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// A plugin's setup (the module builder, the descriptor, signatures) runs once at load, and its
// error texts only on errors, yet they were optimised at -O3 in every plugin compile: most of the
// optimiser's time once the messages were cheap. Marked cold, GCC and Clang optimise them for size,
// which is faster to compile; the kernels and call wrappers they register are separate functions
// and keep -O3. Nothing a call runs on its normal path may be cold, though: GCC predicts a path
// through a call of a cold function as never taken, so a cold view check in a kernel's argument
// conversion made every kernel loop after it "unlikely executed", optimised for size and never
// vectorised (saxpy over 10M float32 ran scalar). Such functions are ISTHMUS_PLUGIN_SUPPORT_CALL;
// errors, messages and setup stay cold.
#if defined(__GNUC__) || defined(__clang__)
#define ISTHMUS_PLUGIN_SETUP __attribute__((cold))
#else
#define ISTHMUS_PLUGIN_SETUP
#endif

// Note [support object]
// ~~~~~~~~~~~~~~~~~~~~~
// The author layer's non-template code (the module builder, the descriptor, error reporting and
// messages) is the same in every plugin, yet a header-only layer compiles it again in each: about
// 0.75 s of the optimiser per compile_string call with the precompiled header present, most of an
// empty plugin's compile. Its functions are declared ISTHMUS_PLUGIN_SUPPORT and defined in
// isthmus/plugin/support_code.hpp, after Asio's separate compilation: by default they are inline
// and the umbrella header includes their definitions (a CMake-built or nvcc-built plugin sees no
// difference); with ISTHMUS_PLUGIN_SEPARATE defined they are hidden external declarations, and the
// plugin cache compiles the definitions once per key into an object that every compile_string
// plugin with that key links (Note [precompiled plugin header] in
// plugins/src/precompiled_header.cpp).
#if defined(ISTHMUS_PLUGIN_SEPARATE)
#define ISTHMUS_PLUGIN_SUPPORT ISTHMUS_PLUGIN_SETUP __attribute__((visibility("hidden")))
#else
#define ISTHMUS_PLUGIN_SUPPORT ISTHMUS_PLUGIN_SETUP inline
#endif
// Support code that a call runs on its normal path (argument conversions, view checks, result
// tuples, device launches): not cold. See Note [setup code is cold].
#if defined(ISTHMUS_PLUGIN_SEPARATE)
#define ISTHMUS_PLUGIN_SUPPORT_CALL __attribute__((visibility("hidden")))
#else
#define ISTHMUS_PLUGIN_SUPPORT_CALL inline
#endif

namespace isthmus::plugin {

namespace detail {

/// What runs on this thread: the call context of the function or kernel chunk (for the host
/// callbacks), its parameter table (for argument names in messages) and how many leading C++
/// parameters the table leaves out (1 for a method's instance). One thread_local, so entering
/// and leaving a call costs one TLS address.
struct call_state {
    isthmus_call* call = nullptr;
    const isthmus_param* params = nullptr;
    int32_t nparams = 0;
    int32_t skip = 0;
};
inline thread_local call_state t_state;
/// The host table given to the entry point.
inline const isthmus_host* g_host = nullptr;

struct call_scope {
    call_state prev;
    explicit call_scope(isthmus_call* c, const isthmus_param* ps = nullptr, int32_t n = 0,
                        int32_t skip = 0)
        : prev(t_state) {
        t_state = {c, ps, n, skip};
    }
    ~call_scope() { t_state = prev; }
};

/// The ISTHMUS_CALL_* flags of `call`: 0 from a host without the call_flags slot (Note [checked
/// mode in the ABI]).
inline uint32_t call_flags(isthmus_call* call) noexcept {
    if (!call || !call->host) return 0;
    const isthmus_host* h = call->host;
    if (h->struct_size < offsetof(isthmus_host, call_flags) + sizeof(h->call_flags) ||
        !h->call_flags)
        return 0;
    return h->call_flags(call);
}

/// Reports the exception in flight to the host; returns the non-zero status to return.
ISTHMUS_PLUGIN_SUPPORT int report(isthmus_call* call) noexcept;

} // namespace detail

// ---- dtypes ------------------------------------------------------------------------------

/// C++ element type -> ABI dtype code.
template <typename T>
struct dtype_code;
#define ISTHMUS_PLUGIN_DTYPE(CT, CODE)                                                             \
    template <>                                                                                    \
    struct dtype_code<CT> {                                                                        \
        static constexpr int32_t value = CODE;                                                     \
    };
ISTHMUS_PLUGIN_DTYPE(bool, ISTHMUS_DT_BOOL)
ISTHMUS_PLUGIN_DTYPE(int8_t, ISTHMUS_DT_INT8)
ISTHMUS_PLUGIN_DTYPE(int16_t, ISTHMUS_DT_INT16)
ISTHMUS_PLUGIN_DTYPE(int32_t, ISTHMUS_DT_INT32)
ISTHMUS_PLUGIN_DTYPE(int64_t, ISTHMUS_DT_INT64)
ISTHMUS_PLUGIN_DTYPE(uint8_t, ISTHMUS_DT_UINT8)
ISTHMUS_PLUGIN_DTYPE(uint16_t, ISTHMUS_DT_UINT16)
ISTHMUS_PLUGIN_DTYPE(uint32_t, ISTHMUS_DT_UINT32)
ISTHMUS_PLUGIN_DTYPE(uint64_t, ISTHMUS_DT_UINT64)
ISTHMUS_PLUGIN_DTYPE(float, ISTHMUS_DT_FLOAT32)
ISTHMUS_PLUGIN_DTYPE(double, ISTHMUS_DT_FLOAT64)
#undef ISTHMUS_PLUGIN_DTYPE

/// A dtype code's name, for messages.
inline const char* dtype_name(int32_t code) {
    static const char* const names[] = {
        "bool",   "int8",    "int16",    "int32",   "int64",   "uint8",     "uint16",    "uint32",
        "uint64", "float16", "bfloat16", "float32", "float64", "complex64", "complex128"};
    return code >= 0 && code <= ISTHMUS_DT_COMPLEX128 ? names[code] : "any";
}

namespace detail {
/// Throws type_error unless `t` has dtype code `dtype` and `rank` dimensions.
ISTHMUS_PLUGIN_SUPPORT_CALL void check_view_of(const isthmus_tensor& t, int32_t dtype, int rank);
/// The CPU's failure path of a view access (cold: kept out of the kernels' loops).
[[noreturn]] ISTHMUS_PLUGIN_SUPPORT void throw_access_error(int modifier, int dim,
                                                            const int64_t* index,
                                                            const int64_t* shape, int rank,
                                                            int arg);
} // namespace detail

} // namespace isthmus::plugin

// vec, views and the device loop: the part NVRTC compiles too.
#include "isthmus/plugin/device.hpp"
