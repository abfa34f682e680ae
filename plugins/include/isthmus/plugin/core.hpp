// The plugin author layer's core over base.hpp: errors and messages, the running call's helpers,
// complex dtype codes.
#pragma once

#include "isthmus/plugin/base.hpp"

#include <array>
#include <complex>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#if defined(__CUDACC__)
#include <mutex>
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

/// "argument 2 (y)" for C++ parameter `i` of the running function or kernel, counted as the
/// caller counts (a method's instance is not an argument).
ISTHMUS_PLUGIN_SUPPORT std::string arg_label(int64_t i);

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

/// The complex element types' dtype codes (the real ones are in base.hpp).
template <>
struct dtype_code<std::complex<float>> {
    static constexpr int32_t value = ISTHMUS_DT_COMPLEX64;
};
template <>
struct dtype_code<std::complex<double>> {
    static constexpr int32_t value = ISTHMUS_DT_COMPLEX128;
};

} // namespace isthmus::plugin
