// Call arguments: keyword arguments (kw, "name"_kw) and how each argument reaches a call
// (call_arg).
#pragma once

#include "isthmus/pyvalue/object.hpp"

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

namespace isthmus {

/// A keyword argument: `kw("sep") = "="` or, with `using namespace isthmus::literals`,
/// `"sep"_kw = "="`.
struct kwarg {
    std::string name;
    pyvalue value;
};
/// The left side of a keyword argument.
struct kw {
    std::string name;
    explicit kw(std::string n) : name(std::move(n)) {}
    template <typename T>
    kwarg operator=(const T& v) const { // NOLINT: builds a kwarg, assigns nothing
        return kwarg{name, to_py(v)};
    }
};

namespace literals {
/// `"sep"_kw = "="` is `kw("sep") = "="`.
inline kw operator""_kw(const char* s, std::size_t n) {
    return kw(std::string(s, n));
}
} // namespace literals

namespace detail {

/// The argument types a call takes as they are, without the GIL taken beforehand: pyvalues,
/// keyword arguments and C++ numbers, which the call converts itself (char is a one-letter
/// str, as in to_py).
template <typename T>
inline constexpr bool direct_call_arg_v =
    (std::is_arithmetic_v<std::decay_t<T>> && !std::is_same_v<std::decay_t<T>, char>) ||
    std::is_same_v<std::decay_t<T>, pyvalue> || std::is_same_v<std::decay_t<T>, kwarg>;

/// One call argument: a borrowed object (pyvalue and keyword arguments), an owned converted
/// one, or a C++ number that the call converts itself (Note [call arguments] in pyvalue.cpp);
/// `name` is set for keyword arguments.
struct call_arg {
    enum class kind : uint8_t { object, i64, u64, f64, boolean };
    kind k = kind::object;
    _object* obj = nullptr;
    const std::string* name = nullptr;
    union {
        long long i;
        unsigned long long u;
        double d;
        bool b;
    } num{};
    pyvalue owned;

    call_arg() = default;
    call_arg(const pyvalue& v) : obj(v.get()) {} // NOLINT
    call_arg(pyvalue& v) : obj(v.get()) {}       // NOLINT
    // A temporary lives to the end of the full expression, which the call is part of.
    call_arg(pyvalue&& v) : obj(v.get()) {}                         // NOLINT
    call_arg(const kwarg& k) : obj(k.value.get()), name(&k.name) {} // NOLINT
    call_arg(kwarg&& k) : obj(k.value.get()), name(&k.name) {}      // NOLINT: k outlives the call
    template <typename T>
    requires std::is_same_v<T, bool> call_arg(T v) : k(kind::boolean) { // NOLINT
        num.b = v;
    }
    template <typename T>
    requires(std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char>)
        call_arg(T v) { // NOLINT
        if constexpr (std::is_signed_v<T>) {
            k = kind::i64;
            num.i = static_cast<long long>(v);
        } else {
            k = kind::u64;
            num.u = static_cast<unsigned long long>(v);
        }
    }
    template <std::floating_point T>
    call_arg(T v) : k(kind::f64) { // NOLINT
        num.d = static_cast<double>(v);
    }
    template <typename T>
    requires(!direct_call_arg_v<T>) call_arg(T&& v) : owned(to_py(v)) { // NOLINT
        obj = owned.get();
    }
};

} // namespace detail

} // namespace isthmus
