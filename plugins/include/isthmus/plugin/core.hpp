// The plugin author layer's base: errors, the running call, dtype codes (then device.hpp).
#pragma once

#include "isthmus/plugin_abi.h"

#include <array>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__CUDACC__)
#include <algorithm>
#include <mutex>

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

// ---- errors ------------------------------------------------------------------------------

/// An error a plugin raises; reaches the caller as the typed error of `code` (RuntimeError,
/// ValueError, TypeError, IndexError, MemoryError in Python) with the message unchanged.
class error : public std::runtime_error {
public:
    explicit error(const std::string& msg, int32_t code = ISTHMUS_ERR_RUNTIME)
        : std::runtime_error(msg), code_(code) {}
    int32_t code() const noexcept { return code_; }

private:
    int32_t code_;
};
/// ValueError.
struct value_error : error {
    explicit value_error(const std::string& m) : error(m, ISTHMUS_ERR_VALUE) {}
};
/// TypeError.
struct type_error : error {
    explicit type_error(const std::string& m) : error(m, ISTHMUS_ERR_TYPE) {}
};
/// IndexError.
struct index_error : error {
    explicit index_error(const std::string& m) : error(m, ISTHMUS_ERR_INDEX) {}
};
/// OverflowError: a number does not fit the type it converts to (an int64 for an int8).
struct overflow_error : error {
    explicit overflow_error(const std::string& m) : error(m, ISTHMUS_ERR_OVERFLOW) {}
};

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

/// "argument 2 (y)" for C++ parameter `i` of the running function or kernel, counted as the
/// caller counts (a method's instance is not an argument).
ISTHMUS_PLUGIN_SUPPORT std::string arg_label(int64_t i);

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

// Note [cheap messages]
// ~~~~~~~~~~~~~~~~~~~~~
// Error texts are built by cat(...) in every plugin. A fold that converted and appended each piece
// inline gave every distinct argument list its own copy of std::string's growth and std::to_string,
// all optimised at -O3 in every plugin compile (clang's -ftime-trace of the color_temperature
// kernel: the cat family was a third of the optimiser's time). Each piece now goes through one of a
// few out-of-line, cold overloads, so an instantiation of cat is only a row of calls. Out of line
// and cold: their definitions in support_code.hpp add noinline.
ISTHMUS_PLUGIN_SUPPORT void put(std::string& s, const char* x);
ISTHMUS_PLUGIN_SUPPORT void put(std::string& s, const std::string& x);
ISTHMUS_PLUGIN_SUPPORT void put(std::string& s, std::string_view x);
ISTHMUS_PLUGIN_SUPPORT void put(std::string& s, long long x);
ISTHMUS_PLUGIN_SUPPORT void put(std::string& s, unsigned long long x);
ISTHMUS_PLUGIN_SUPPORT void put(std::string& s, double x);

template <typename T>
inline void put_piece(std::string& s, const T& x) {
    if constexpr (std::is_floating_point_v<T>)
        put(s, static_cast<double>(x));
    else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
        put(s, static_cast<long long>(x));
    else if constexpr (std::is_integral_v<T>)
        put(s, static_cast<unsigned long long>(x));
    else if constexpr (std::is_convertible_v<const T&, const char*>)
        put(s, static_cast<const char*>(x));
    else
        put(s, std::string_view(x));
}

template <typename... A>
[[gnu::cold]] std::string cat(const A&... a) {
    std::string s;
    (put_piece(s, a), ...);
    return s;
}

} // namespace detail

/// The call context of the running function (for the host callbacks); throws outside a call.
inline isthmus_call* current_call() {
    isthmus_call* c = detail::t_state.call;
    if (!c) throw error("isthmus::plugin: no host call is running on this thread");
    return c;
}

/// Writes a message to the host's log.
inline void log(const std::string& msg, int32_t level = ISTHMUS_LOG_INFO) {
    isthmus_call* c = detail::t_state.call;
    if (c && c->host->log) c->host->log(c, level, msg.c_str());
}

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
ISTHMUS_PLUGIN_DTYPE(std::complex<float>, ISTHMUS_DT_COMPLEX64)
ISTHMUS_PLUGIN_DTYPE(std::complex<double>, ISTHMUS_DT_COMPLEX128)
#undef ISTHMUS_PLUGIN_DTYPE

/// A dtype code's name, for messages.
inline const char* dtype_name(int32_t code) {
    static const char* const names[] = {
        "bool",   "int8",    "int16",    "int32",   "int64",   "uint8",     "uint16",    "uint32",
        "uint64", "float16", "bfloat16", "float32", "float64", "complex64", "complex128"};
    return code >= 0 && code <= ISTHMUS_DT_COMPLEX128 ? names[code] : "any";
}

namespace detail {
/// Element `i` (in memory order, already strided) of a tensor of any real dtype, as double.
/// Element `i` of `data` (dtype code `dt`) as a double; type_error for other dtypes.
ISTHMUS_PLUGIN_SUPPORT_CALL double load_as_double(const void* data, int32_t dt, int64_t i);
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
