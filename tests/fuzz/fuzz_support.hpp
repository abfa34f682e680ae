// Shared helpers of the libFuzzer targets: reading fuzz bytes, and the "only typed errors" rule.
#pragma once

#include "isthmus/error.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <type_traits>

namespace isthmus::fuzz {

/// Reads fixed-size values and strings from the front of a fuzz input; past the end it yields
/// zeros and empty strings, so every input is a valid program for a target.
class reader {
public:
    reader(const uint8_t* data, size_t size) : p_(data), n_(size) {}

    bool empty() const noexcept { return n_ == 0; }
    size_t left() const noexcept { return n_; }

    /// The next sizeof(T) bytes as a T (zero-padded at the end of the input).
    template <typename T>
    T get() {
        static_assert(std::is_trivially_copyable_v<T>);
        unsigned char buf[sizeof(T)] = {};
        const size_t k = n_ < sizeof(T) ? n_ : sizeof(T);
        if (k) std::memcpy(buf, p_, k);
        p_ += k;
        n_ -= k;
        T v;
        std::memcpy(&v, buf, sizeof(T));
        return v;
    }
    /// A byte in [0, n).
    unsigned pick(unsigned n) { return n ? get<uint8_t>() % n : 0; }
    bool flag() { return get<uint8_t>() & 1u; }
    /// A string of up to `max` bytes (length byte first).
    std::string str(size_t max = 32) {
        size_t len = get<uint8_t>() % (max + 1);
        if (len > n_) len = n_;
        std::string s(reinterpret_cast<const char*>(p_), len);
        p_ += len;
        n_ -= len;
        return s;
    }
    /// An int64 that is often interesting: small, negative, near a power of two, or extreme.
    int64_t size_like() {
        switch (pick(8)) {
        case 0:
            return 0;
        case 1:
            return 1;
        case 2:
            return get<uint8_t>() % 8;
        case 3:
            return -static_cast<int64_t>(get<uint8_t>() % 4) - 1;
        case 4:
            return int64_t{1} << (get<uint8_t>() % 63);
        case 5:
            return (int64_t{1} << (get<uint8_t>() % 63)) - 1 + (get<uint8_t>() % 3);
        case 6:
            return get<int64_t>();
        default:
            return get<uint8_t>() % 64;
        }
    }

private:
    const uint8_t* p_;
    size_t n_;
};

/// A bug found: prints what and where, then aborts so libFuzzer saves the input.
[[noreturn]] inline void fail(const char* what, const std::string& detail) {
    std::fprintf(stderr, "FUZZ FAILURE: %s: %s\n", what, detail.c_str());
    std::fflush(stderr);
    std::abort();
}

/// Runs `f`; an isthmus error a user may see for bad input (value_error, type_error,
/// index_error, memory_error, not_implemented_error, and runtime_error when `runtime_ok`) is
/// fine and returns false. Anything else (internal_error, a std:: exception escaping) is a bug
/// and aborts. Returns true when `f` returned normally.
/// The message of the last error user_errors_ok() accepted (for failure reports).
inline std::string& last_error() {
    static std::string m;
    return m;
}

template <typename F>
bool user_errors_ok(const char* what, F&& f, bool runtime_ok = false) {
    try {
        f();
        return true;
    } catch (const internal_error& e) {
        fail(what, std::string("internal_error: ") + e.what());
    } catch (const runtime_error& e) {
        if (!runtime_ok) fail(what, std::string("unexpected runtime_error: ") + e.what());
        last_error() = e.what();
        return false;
    } catch (const error& e) {
        last_error() = e.what();
        return false;
    } catch (const std::exception& e) {
        fail(what, std::string("non-isthmus exception: ") + e.what());
    }
}

} // namespace isthmus::fuzz
