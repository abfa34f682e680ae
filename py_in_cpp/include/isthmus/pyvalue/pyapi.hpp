// pyapi<Derived>: the common interface of pyvalue and of the attribute and item references.
#pragma once

#include "isthmus/pyvalue/primitives.hpp"

#include <string>
#include <string_view>
#include <type_traits>

namespace isthmus {

class pyvalue;
class attr_ref;
class item_ref;
struct kwarg;

template <typename T>
pyvalue to_py(const T& v);
template <typename T>
T from_py(const pyvalue& v);

/// The common interface of pyvalue and of the attribute/item references (`x.attr("a")`,
/// `x[k]`), which resolve lazily so they can also be assigned to.
template <typename Derived>
class pyapi {
public:
    /// `obj.name`: a reference that reads the attribute when used and sets it when assigned.
    attr_ref attr(std::string_view name) const;
    /// True when the object has attribute `name` (hasattr).
    bool hasattr(std::string_view name) const;
    /// `obj[key]`: a reference that reads the item when used and sets it when assigned. Keys:
    /// any pyvalue or C++ value (ints, strings, index_slice, tuple(...), pyslice(...)).
    template <typename K>
    item_ref operator[](const K& key) const;
    /// Deletes `obj[key]`.
    template <typename K>
    void del_item(const K& key) const;

    /// Calls the object with positional arguments and keyword arguments (`kw("sep") = "="`, or
    /// `"sep"_kw = "="`). Arguments are converted with to_py.
    template <typename... Args>
    pyvalue operator()(Args&&... args) const;

    /// len(obj); throws python_error when the object has no length.
    int64_t len() const;
    /// str(obj) and repr(obj).
    std::string str() const;
    std::string repr() const;
    /// bool(obj) (Python truthiness; `!obj` is Python's `not obj`).
    explicit operator bool() const;
    /// True for Python's None.
    bool is_none() const;
    /// Identity: `obj is other`.
    template <typename O>
    bool is(const pyapi<O>& other) const;
    /// isinstance(obj, type).
    template <typename O>
    bool isinstance(const pyapi<O>& type) const;
    /// type(obj) and its name ("int", "ndarray", "Tensor").
    pyvalue type() const;
    std::string type_name() const;
    /// Type checks for the common built-in types (subclasses count, bool is not an int here).
    bool is_int() const { return detail::check_type(ptr(), detail::builtin_type::int_); }
    bool is_float() const { return detail::check_type(ptr(), detail::builtin_type::float_); }
    bool is_bool() const { return detail::check_type(ptr(), detail::builtin_type::bool_); }
    bool is_str() const { return detail::check_type(ptr(), detail::builtin_type::str); }
    bool is_bytes() const { return detail::check_type(ptr(), detail::builtin_type::bytes); }
    bool is_list() const { return detail::check_type(ptr(), detail::builtin_type::list); }
    bool is_tuple() const { return detail::check_type(ptr(), detail::builtin_type::tuple); }
    bool is_dict() const { return detail::check_type(ptr(), detail::builtin_type::dict); }
    bool is_callable() const { return detail::check_type(ptr(), detail::builtin_type::callable); }
    /// hash(obj).
    int64_t hash() const;
    /// The object converted to a C++ type T (from_py<T>).
    template <typename T>
    T cast() const;

    /// `with`, in two calls (the PyQuasar manual's enter/exit): calls type(obj).__enter__(obj) and
    /// returns its result; exit() calls __exit__(None, None, None). Prefer `isthmus::with` or
    /// `with_guard`, which also pass exceptions.
    pyvalue enter() const;
    void exit() const;

    /// Iteration: `for (pyvalue x : obj)`.
    class iterator;
    iterator begin() const;
    iterator end() const;

    /// The underlying PyObject* (borrowed; resolves references).
    _object* ptr() const { return static_cast<const Derived&>(*this).get(); }
};

namespace detail {

template <typename T>
struct is_pyapi : std::is_base_of<pyapi<std::decay_t<T>>, std::decay_t<T>> {};
template <typename T>
inline constexpr bool is_pyapi_v = is_pyapi<T>::value;

} // namespace detail

} // namespace isthmus
