// Conversions between C++ values (scalars, strings, containers, runtime tensors) and Python.
#pragma once

#include "isthmus/ops/indexing.hpp"
#include "isthmus/pyvalue.hpp"
#include "isthmus/tensor.hpp"
#include "isthmus/value.hpp"

#include <complex>
#include <concepts>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace isthmus {

/// How a tensor crosses into Python: a NumPy array or a torch tensor, both sharing the tensor's
/// memory (Note [tensor hand-over] in py_convert.cpp).
enum class tensor_target : uint8_t { numpy, torch };

/// A NumPy array viewing `t`'s memory (no copy). The storage is pinned to the CPU for as long
/// as the array (or any view NumPy makes of it) lives, so writes on either side are seen by
/// the other. bfloat16 has no NumPy dtype: type_error.
ISTHMUS_API pyvalue to_numpy(const tensor& t);
/// A torch tensor viewing `t`'s memory (through a DLPack capsule; no copy).
ISTHMUS_API pyvalue to_torch(const tensor& t);
/// A tensor from a Python array-like: NumPy arrays and CPU torch tensors are shared without a
/// copy when their layout allows (`copy=false` then throws value_error when it does not);
/// anything else NumPy can read (lists, scalars, __array_interface__) is copied.
ISTHMUS_API tensor tensor_from_py(const pyvalue& obj, bool allow_copy = true);

/// Customisation point: `static pyvalue to(const T&)` and `static T from(const pyvalue&)`.
/// Specialise it for your own types.
template <typename T, typename Enable = void>
struct py_converter;

namespace detail {
// Exported primitives (py_convert.cpp). `from` functions throw type_error (wrong Python type)
// or value_error (out of range) with messages that name the Python type and the C++ target.
ISTHMUS_API pyvalue py_long(long long v);
ISTHMUS_API pyvalue py_ulong(unsigned long long v);
ISTHMUS_API pyvalue py_float(double v);
ISTHMUS_API pyvalue py_complex(double re, double im);
ISTHMUS_API pyvalue py_bool(bool v);
ISTHMUS_API pyvalue py_str(std::string_view v);
ISTHMUS_API long long as_long(_object* o, long long lo, long long hi, const char* target);
ISTHMUS_API unsigned long long as_ulong(_object* o, unsigned long long hi, const char* target);
ISTHMUS_API double as_double(_object* o, const char* target);
ISTHMUS_API std::complex<double> as_complex(_object* o);
ISTHMUS_API bool as_bool(_object* o);
ISTHMUS_API std::string as_string(_object* o);
/// The items of any iterable (list, tuple, array, generator), as a vector.
ISTHMUS_API std::vector<pyvalue> items_of(const pyvalue& o, const char* target);
/// The (key, value) pairs of a mapping (dict or anything with .items()).
ISTHMUS_API std::vector<std::pair<pyvalue, pyvalue>> mapping_items(const pyvalue& o,
                                                                   const char* target);
ISTHMUS_API void dict_set(const pyvalue& d, const pyvalue& k, const pyvalue& v);
ISTHMUS_API pyvalue value_to_py(const value& v);
ISTHMUS_API value value_from_py(const pyvalue& o);
ISTHMUS_API pyvalue scalar_to_py(const scalar& s);
ISTHMUS_API scalar scalar_from_py(const pyvalue& o);
ISTHMUS_API pyvalue slice_to_py(const index_slice& s);
ISTHMUS_API pyvalue ellipsis();

/// "int32", "uint8", ...: the C++ integer type's name for messages.
template <typename T>
constexpr const char* int_name() {
    constexpr bool s = std::is_signed_v<T>;
    switch (sizeof(T)) {
    case 1:
        return s ? "int8" : "uint8";
    case 2:
        return s ? "int16" : "uint16";
    case 4:
        return s ? "int32" : "uint32";
    default:
        return s ? "int64" : "uint64";
    }
}

template <typename T>
struct is_std_vector : std::false_type {};
template <typename T, typename A>
struct is_std_vector<std::vector<T, A>> : std::true_type {};
template <typename T>
struct is_std_map : std::false_type {};
template <typename K, typename V, typename C, typename A>
struct is_std_map<std::map<K, V, C, A>> : std::true_type {};
template <typename K, typename V, typename H, typename E, typename A>
struct is_std_map<std::unordered_map<K, V, H, E, A>> : std::true_type {};
} // namespace detail

/// Converts a C++ value to Python: bool -> bool, integers -> int, floating -> float,
/// std::complex -> complex, strings -> str, std::vector -> list, std::map/unordered_map -> dict,
/// std::pair/std::tuple -> tuple, std::optional -> the value or None, nullptr -> None,
/// index_slice -> slice, tensor -> NumPy array sharing memory, scalar -> a Python number,
/// value -> by kind (tensors shared, cells as lists), pyvalue -> itself.
template <typename T>
pyvalue to_py(const T& v) {
    if constexpr (detail::is_pyapi_v<T>)
        return pyvalue::borrow(v.ptr());
    else if constexpr (std::is_array_v<T> && std::is_same_v<std::remove_extent_t<T>, const char>)
        return detail::py_str(std::string_view(v));
    else if constexpr (std::is_array_v<T> && std::is_same_v<std::remove_extent_t<T>, char>)
        return detail::py_str(std::string_view(v));
    else
        return py_converter<std::decay_t<T>>::to(v);
}
/// Converts a Python object to the C++ type T (the types to_py accepts; tensor shares memory
/// where it can). Impossible conversions throw type_error, out-of-range ones value_error.
template <typename T>
T from_py(const pyvalue& v) {
    if constexpr (std::is_same_v<T, pyvalue>)
        return v;
    else
        return py_converter<T>::from(v);
}

template <>
struct py_converter<pyvalue> {
    static pyvalue to(const pyvalue& v) { return v; }
    static pyvalue from(const pyvalue& v) { return v; }
};
template <>
struct py_converter<bool> {
    static pyvalue to(bool v) { return detail::py_bool(v); }
    static bool from(const pyvalue& v) { return detail::as_bool(v.get()); }
};
template <typename T>
requires(std::is_integral_v<T>&& std::is_signed_v<T> && !std::is_same_v<T, bool> &&
         !std::is_same_v<T, char>) struct py_converter<T> {
    static pyvalue to(T v) { return detail::py_long(static_cast<long long>(v)); }
    static T from(const pyvalue& v) {
        return static_cast<T>(detail::as_long(v.get(), std::numeric_limits<T>::min(),
                                              std::numeric_limits<T>::max(),
                                              detail::int_name<T>()));
    }
};
template <typename T>
requires(std::is_integral_v<T>&& std::is_unsigned_v<T> &&
         !std::is_same_v<T, bool>) struct py_converter<T> {
    static pyvalue to(T v) { return detail::py_ulong(static_cast<unsigned long long>(v)); }
    static T from(const pyvalue& v) {
        return static_cast<T>(
            detail::as_ulong(v.get(), std::numeric_limits<T>::max(), detail::int_name<T>()));
    }
};
template <std::floating_point T>
struct py_converter<T> {
    static pyvalue to(T v) { return detail::py_float(static_cast<double>(v)); }
    static T from(const pyvalue& v) {
        return static_cast<T>(
            detail::as_double(v.get(), std::is_same_v<T, float> ? "float" : "double"));
    }
};
template <std::floating_point T>
struct py_converter<std::complex<T>> {
    static pyvalue to(const std::complex<T>& v) {
        return detail::py_complex(static_cast<double>(v.real()), static_cast<double>(v.imag()));
    }
    static std::complex<T> from(const pyvalue& v) {
        return std::complex<T>(detail::as_complex(v.get()));
    }
};
template <>
struct py_converter<char> {
    static pyvalue to(char v) { return detail::py_str(std::string_view(&v, 1)); }
};
template <>
struct py_converter<std::string> {
    static pyvalue to(const std::string& v) { return detail::py_str(v); }
    static std::string from(const pyvalue& v) { return detail::as_string(v.get()); }
};
template <>
struct py_converter<std::string_view> {
    static pyvalue to(std::string_view v) { return detail::py_str(v); }
};
template <>
struct py_converter<const char*> {
    static pyvalue to(const char* v) { return detail::py_str(v); }
};
template <>
struct py_converter<char*> {
    static pyvalue to(const char* v) { return detail::py_str(v); }
};
template <>
struct py_converter<std::nullptr_t> {
    static pyvalue to(std::nullptr_t) { return none(); }
};
template <>
struct py_converter<index_slice> {
    static pyvalue to(const index_slice& s) { return detail::slice_to_py(s); }
};
template <>
struct py_converter<newaxis_t> {
    static pyvalue to(newaxis_t) { return none(); }
};
template <>
struct py_converter<ellipsis_t> {
    static pyvalue to(ellipsis_t) { return detail::ellipsis(); }
};
template <typename T>
struct py_converter<std::optional<T>> {
    static pyvalue to(const std::optional<T>& v) { return v ? to_py(*v) : none(); }
    static std::optional<T> from(const pyvalue& v) {
        if (v.is_none()) return std::nullopt;
        return from_py<T>(v);
    }
};
template <typename T>
requires detail::is_std_vector<T>::value struct py_converter<T> {
    static pyvalue to(const T& v) {
        std::vector<pyvalue> items;
        items.reserve(v.size());
        for (const auto& x : v) items.push_back(to_py(x));
        return detail::make_list(items.data(), items.size());
    }
    static T from(const pyvalue& v) {
        T out;
        for (const pyvalue& x : detail::items_of(v, "std::vector"))
            out.push_back(from_py<typename T::value_type>(x));
        return out;
    }
};
template <typename T>
requires detail::is_std_map<T>::value struct py_converter<T> {
    static pyvalue to(const T& m) {
        pyvalue d = dict();
        for (const auto& [k, x] : m) detail::dict_set(d, to_py(k), to_py(x));
        return d;
    }
    static T from(const pyvalue& v) {
        T out;
        for (const auto& [k, x] : detail::mapping_items(v, "std::map"))
            out.emplace(from_py<typename T::key_type>(k), from_py<typename T::mapped_type>(x));
        return out;
    }
};
template <typename... T>
struct py_converter<std::tuple<T...>> {
    static pyvalue to(const std::tuple<T...>& t) {
        return std::apply([](const auto&... x) { return tuple(x...); }, t);
    }
    static std::tuple<T...> from(const pyvalue& v) {
        std::vector<pyvalue> items = detail::items_of(v, "std::tuple");
        ISTHMUS_CHECK(items.size() == sizeof...(T), value_error, "from_py: expected ", sizeof...(T),
                      " items for a std::tuple, got ", items.size());
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return std::tuple<T...>(from_py<T>(items[I])...);
        }
        (std::index_sequence_for<T...>{});
    }
};
template <typename A, typename B>
struct py_converter<std::pair<A, B>> {
    static pyvalue to(const std::pair<A, B>& p) { return tuple(p.first, p.second); }
    static std::pair<A, B> from(const pyvalue& v) {
        auto t = py_converter<std::tuple<A, B>>::from(v);
        return {std::get<0>(t), std::get<1>(t)};
    }
};
template <>
struct py_converter<tensor> {
    static pyvalue to(const tensor& t) { return to_numpy(t); }
    static tensor from(const pyvalue& v) { return tensor_from_py(v); }
};
template <>
struct py_converter<scalar> {
    static pyvalue to(const scalar& s) { return detail::scalar_to_py(s); }
    static scalar from(const pyvalue& v) { return detail::scalar_from_py(v); }
};
template <>
struct py_converter<value> {
    static pyvalue to(const value& v) { return detail::value_to_py(v); }
    static value from(const pyvalue& v) { return detail::value_from_py(v); }
};
template <>
struct py_converter<pyfunction> {
    static pyvalue to(const pyfunction& f) { return f.object(); }
    static pyfunction from(const pyvalue& v) { return pyfunction(v); }
};
template <typename R, typename... A>
struct py_converter<std::function<R(A...)>> {
    static pyvalue to(const std::function<R(A...)>& f) { return py_function(f); }
    static std::function<R(A...)> from(const pyvalue& v) { return pyfunction(v); }
};

} // namespace isthmus
