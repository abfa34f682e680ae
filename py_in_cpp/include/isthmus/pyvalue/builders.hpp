// Python from C++: imports, eval/exec, and the PyQuasar manual's builders (pyint, pybool, pytuple,
// ...).
#pragma once

#include "isthmus/pyvalue/pyapi_members.hpp"

#include <initializer_list>

namespace isthmus {

/// `import name` (dotted names give the submodule, as importlib.import_module); throws
/// python_error (ModuleNotFoundError) when it cannot be imported.
ISTHMUS_API pyvalue pyimport(std::string_view name);
/// The module `builtins` (print, len, range, ...), imported once.
ISTHMUS_API pyvalue builtins();
/// Evaluates a Python expression with `globals` (a dict; a fresh one when empty).
ISTHMUS_API pyvalue pyeval(std::string_view expression, const pyvalue& globals = pyvalue());
/// Runs Python statements in `globals` (a dict; a fresh one when empty) and returns that dict.
ISTHMUS_API pyvalue pyexec(std::string_view code, const pyvalue& globals = pyvalue());

/// Python's None.
ISTHMUS_API pyvalue none();
/// Python's slice(start, stop, step); pass none() for a missing part.
template <typename A = pyvalue, typename B = pyvalue, typename C = pyvalue>
pyvalue pyslice(const A& start = A(), const B& stop = B(), const C& step = C());

/// The PyQuasar manual's pyint: a Python int from a C++ integer, from an integral floating value
/// (value_error otherwise), from a decimal string of any length ("-123456789012345678901234"),
/// or a list of Python ints from a list of numbers (`np.reshape(v, pyint({3, 1}))`).
ISTHMUS_API pyvalue pyint(long long v);
ISTHMUS_API pyvalue pyint(unsigned long long v);
ISTHMUS_API pyvalue pyint(double v);
ISTHMUS_API pyvalue pyint(std::string_view decimal);
inline pyvalue pyint(const char* decimal) {
    return pyint(std::string_view(decimal));
}
inline pyvalue pyint(int v) {
    return pyint(static_cast<long long>(v));
}
inline pyvalue pyint(long v) {
    return pyint(static_cast<long long>(v));
}
inline pyvalue pyint(unsigned v) {
    return pyint(static_cast<unsigned long long>(v));
}
inline pyvalue pyint(unsigned long v) {
    return pyint(static_cast<unsigned long long>(v));
}
ISTHMUS_API pyvalue pyint(std::initializer_list<long long> values);
/// The PyQuasar manual's pybool: Python's True or False (`requires_grad = pybool(true)`); numbers
/// are true when non-zero.
ISTHMUS_API pyvalue pybool(bool v);
inline pyvalue pybool(double v) {
    return pybool(v != 0.0);
}
inline pyvalue pybool(int v) {
    return pybool(v != 0);
}

/// tuple(...), list(...): Python containers of the converted arguments.
template <typename... Args>
pyvalue tuple(const Args&... args);
template <typename... Args>
pyvalue list(const Args&... args);
/// dict(kw("a") = 1, "b"_kw = 2): a Python dict of keyword items; dict() is empty.
template <typename... Kw>
pyvalue dict(const Kw&... items);

namespace detail {
ISTHMUS_API pyvalue make_tuple(const pyvalue* items, std::size_t n);
ISTHMUS_API pyvalue make_list(const pyvalue* items, std::size_t n);
ISTHMUS_API pyvalue make_dict(const kwarg* items, std::size_t n);
ISTHMUS_API pyvalue make_slice(_object* start, _object* stop, _object* step);
template <typename T>
pyvalue or_none(const T& v) {
    if constexpr (std::is_same_v<T, pyvalue>)
        return v.empty() ? none() : v;
    else
        return to_py(v);
}
} // namespace detail

template <typename A, typename B, typename C>
pyvalue pyslice(const A& start, const B& stop, const C& step) {
    return detail::make_slice(detail::or_none(start).get(), detail::or_none(stop).get(),
                              detail::or_none(step).get());
}
template <typename... Args>
pyvalue tuple(const Args&... args) {
    if constexpr (sizeof...(Args) == 0) {
        return detail::make_tuple(nullptr, 0);
    } else {
        const pyvalue items[] = {to_py(args)...};
        return detail::make_tuple(items, sizeof...(Args));
    }
}
template <typename... Args>
pyvalue list(const Args&... args) {
    if constexpr (sizeof...(Args) == 0) {
        return detail::make_list(nullptr, 0);
    } else {
        const pyvalue items[] = {to_py(args)...};
        return detail::make_list(items, sizeof...(Args));
    }
}
template <typename... Kw>
pyvalue dict(const Kw&... items) {
    static_assert((std::is_same_v<Kw, kwarg> && ...),
                  "dict(...) takes keyword items: dict(kw(\"a\") = 1, \"b\"_kw = 2)");
    if constexpr (sizeof...(Kw) == 0) {
        return detail::make_dict(nullptr, 0);
    } else {
        const kwarg a[] = {items...};
        return detail::make_dict(a, sizeof...(Kw));
    }
}

} // namespace isthmus
