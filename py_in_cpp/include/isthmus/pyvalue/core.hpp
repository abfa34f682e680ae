// pyvalue's core: the object handle, attribute and item references, calls, iteration.
#pragma once

#include "isthmus/export.hpp"
#include "isthmus/python.hpp"

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <iterator>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace isthmus {

class pyvalue;
class attr_ref;
class item_ref;
struct kwarg;

template <typename T>
pyvalue to_py(const T& v);
template <typename T>
T from_py(const pyvalue& v);

namespace detail {

// ---- exported primitives (pyvalue.cpp); each takes the GIL itself ----
// incref / decref: isthmus/python_ref.hpp.

/// RAII GIL holder used by the inline templates (one acquisition for a whole call: the
/// conversions, the call and the argument references it drops).
class gil_scope {
public:
    gil_scope() : t_(gil_ensure()) {}
    ~gil_scope() {
        if (t_.state >= 0) gil_release(t_);
    }
    gil_scope(const gil_scope&) = delete;
    gil_scope& operator=(const gil_scope&) = delete;

private:
    gil_token t_;
};

/// Python operators, in the order of the table in pyvalue.cpp.
enum class binop : uint8_t {
    add,
    sub,
    mul,
    truediv,
    floordiv,
    mod,
    pow,
    matmul,
    lshift,
    rshift,
    and_,
    or_,
    xor_
};
enum class unop : uint8_t { neg, pos, invert, not_, abs };
enum class cmpop : uint8_t { lt, le, eq, ne, gt, ge }; // Py_LT .. Py_GE

template <typename T>
struct is_pyapi;

} // namespace detail

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
    bool is_int() const;
    bool is_float() const;
    bool is_bool() const;
    bool is_str() const;
    bool is_bytes() const;
    bool is_list() const;
    bool is_tuple() const;
    bool is_dict() const;
    bool is_callable() const;
    /// hash(obj).
    int64_t hash() const;
    /// The object converted to a C++ type T (from_py<T>).
    template <typename T>
    T cast() const;

    /// `with`, in two calls (the seed's enter/exit): calls type(obj).__enter__(obj) and returns
    /// its result; exit() calls __exit__(None, None, None). Prefer `isthmus::with` or
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

/// An owned reference to a Python object. Copies share the object (reference semantics, like
/// Python names). Every operation takes the GIL itself, so pyvalues may be used, copied and
/// destroyed on any thread. A default-constructed pyvalue is empty (not None); using it throws
/// value_error.
class ISTHMUS_API pyvalue : public pyapi<pyvalue> {
public:
    pyvalue() noexcept = default;
    pyvalue(const pyvalue& o) noexcept : p_(o.p_) {
        if (p_) detail::incref(p_);
    }
    pyvalue(pyvalue&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
    pyvalue(const attr_ref& r); // NOLINT: reads the attribute
    pyvalue(const item_ref& r); // NOLINT: reads the item
    pyvalue& operator=(const pyvalue& o) noexcept {
        pyvalue tmp(o);
        std::swap(p_, tmp.p_);
        return *this;
    }
    pyvalue& operator=(pyvalue&& o) noexcept {
        pyvalue tmp(std::move(o));
        std::swap(p_, tmp.p_);
        return *this;
    }
    ~pyvalue() {
        if (p_) detail::decref(p_);
    }

    /// Takes over a new reference (the GIL need not be held).
    static pyvalue steal(_object* p) noexcept {
        pyvalue v;
        v.p_ = p;
        return v;
    }
    /// Adds a reference to a borrowed one.
    static pyvalue borrow(_object* p) noexcept {
        if (p) detail::incref(p);
        return steal(p);
    }
    /// Python's None.
    static pyvalue none();

    /// True when this holds no object (default-constructed or moved from).
    bool empty() const noexcept { return p_ == nullptr; }
    /// Gives up the reference without decrementing it.
    _object* release() noexcept { return std::exchange(p_, nullptr); }
    /// The object (throws value_error when empty).
    _object* get() const {
        if (!p_) [[unlikely]]
            throw_empty();
        return p_;
    }

private:
    [[noreturn]] static void throw_empty();
    _object* p_ = nullptr;
};

/// `obj.attr(name)`: reads the attribute lazily (once) and assigns with `=`. Holds a borrowed
/// reference to `obj`, so use it within the expression (or convert it to a pyvalue).
class ISTHMUS_API attr_ref : public pyapi<attr_ref> {
public:
    attr_ref(_object* obj, std::string_view name) : obj_(obj), name_(name) {}
    attr_ref(const attr_ref&) = default;
    /// setattr(obj, name, v)
    template <typename T>
    attr_ref& operator=(const T& v) {
        set(to_py(v));
        return *this;
    }
    attr_ref& operator=(const attr_ref& other) {
        set(pyvalue(other));
        return *this;
    }
    void set(const pyvalue& v);
    _object* get() const;

private:
    _object* obj_;
    std::string name_;
    mutable pyvalue cache_;
};

/// `obj[key]`: reads the item lazily (once) and assigns with `=`. Holds a borrowed reference to
/// `obj`, so use it within the expression (or convert it to a pyvalue).
class ISTHMUS_API item_ref : public pyapi<item_ref> {
public:
    item_ref(_object* obj, pyvalue key) : obj_(obj), key_(std::move(key)) {}
    item_ref(const item_ref&) = default;
    /// obj[key] = v
    template <typename T>
    item_ref& operator=(const T& v) {
        set(to_py(v));
        return *this;
    }
    item_ref& operator=(const item_ref& other) {
        set(pyvalue(other));
        return *this;
    }
    void set(const pyvalue& v);
    _object* get() const;

private:
    _object* obj_;
    pyvalue key_;
    mutable pyvalue cache_;
};

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

template <typename T>
struct is_pyapi : std::is_base_of<pyapi<std::decay_t<T>>, std::decay_t<T>> {};
template <typename T>
inline constexpr bool is_pyapi_v = is_pyapi<T>::value;

/// One call argument: a borrowed object (pyvalue and keyword arguments), an owned converted
/// one, or a C++ number that the call converts itself (Note [call arguments] in pyvalue.cpp);
/// `name` is set for keyword arguments.
/// The argument types a call takes as they are, without the GIL taken beforehand: pyvalues,
/// keyword arguments and C++ numbers, which the call converts itself (char is a one-letter
/// str, as in to_py).
template <typename T>
inline constexpr bool direct_call_arg_v =
    (std::is_arithmetic_v<std::decay_t<T>> && !std::is_same_v<std::decay_t<T>, char>) ||
    std::is_same_v<std::decay_t<T>, pyvalue> || std::is_same_v<std::decay_t<T>, kwarg>;

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

/// Calls `f` (takes the GIL itself; the arguments' own conversions need it taken before).
ISTHMUS_API pyvalue call(_object* f, const call_arg* args, std::size_t n);
/// Calls `f` without arguments (takes the GIL itself).
ISTHMUS_API pyvalue call0(_object* f);
ISTHMUS_API pyvalue getattr(_object* o, std::string_view name);
ISTHMUS_API bool hasattr(_object* o, std::string_view name);
ISTHMUS_API pyvalue getitem(_object* o, _object* key);
ISTHMUS_API void delitem(_object* o, _object* key);
ISTHMUS_API pyvalue binary(binop op, _object* a, _object* b);
ISTHMUS_API pyvalue inplace(binop op, _object* a, _object* b);
ISTHMUS_API pyvalue unary(unop op, _object* a);
ISTHMUS_API pyvalue compare(cmpop op, _object* a, _object* b);
ISTHMUS_API int64_t len(_object* o);
ISTHMUS_API std::string str(_object* o);
ISTHMUS_API std::string repr(_object* o);
ISTHMUS_API bool truthy(_object* o);
ISTHMUS_API bool is_none(_object* o);
ISTHMUS_API bool isinstance(_object* o, _object* type);
ISTHMUS_API pyvalue type(_object* o);
ISTHMUS_API std::string type_name(_object* o);
/// Built-in type checks: 0 int, 1 float, 2 bool, 3 str, 4 bytes, 5 list, 6 tuple, 7 dict,
/// 8 callable.
ISTHMUS_API bool check_type(_object* o, int which);
ISTHMUS_API int64_t hash(_object* o);
ISTHMUS_API pyvalue enter(_object* o);
ISTHMUS_API void exit(_object* o);
ISTHMUS_API pyvalue iter(_object* o);
/// The next item of iterator `it`, or an empty pyvalue at the end.
ISTHMUS_API pyvalue next(_object* it);

} // namespace detail

/// Input iterator over a Python iterable (holds the Python iterator).
template <typename Derived>
class pyapi<Derived>::iterator {
public:
    using iterator_category = std::input_iterator_tag;
    using value_type = pyvalue;
    using difference_type = std::ptrdiff_t;
    using pointer = const pyvalue*;
    using reference = const pyvalue&;

    iterator() = default;
    explicit iterator(pyvalue it) : it_(std::move(it)) { ++*this; }
    const pyvalue& operator*() const { return cur_; }
    const pyvalue* operator->() const { return &cur_; }
    iterator& operator++() {
        cur_ = detail::next(it_.get());
        if (cur_.empty()) it_ = pyvalue();
        return *this;
    }
    void operator++(int) { ++*this; }
    bool operator==(const iterator& o) const { return it_.empty() && o.it_.empty(); }

private:
    pyvalue it_, cur_;
};

// ---- pyapi members ----

template <typename D>
attr_ref pyapi<D>::attr(std::string_view name) const {
    return attr_ref(ptr(), name);
}
template <typename D>
bool pyapi<D>::hasattr(std::string_view name) const {
    return detail::hasattr(ptr(), name);
}
template <typename D>
template <typename K>
item_ref pyapi<D>::operator[](const K& key) const {
    return item_ref(ptr(), to_py(key));
}
template <typename D>
template <typename K>
void pyapi<D>::del_item(const K& key) const {
    detail::delitem(ptr(), to_py(key).get());
}
template <typename D>
template <typename... Args>
pyvalue pyapi<D>::operator()(Args&&... args) const {
    _object* f = ptr();
    if constexpr (sizeof...(Args) == 0) {
        return detail::call0(f);
    } else if constexpr ((detail::direct_call_arg_v<Args> && ...)) {
        // See Note [call arguments]: numbers and objects go to the call as they are
        const detail::call_arg a[] = {detail::call_arg(std::forward<Args>(args))...};
        return detail::call(f, a, sizeof...(Args));
    } else {
        detail::gil_scope g; // one acquisition for the conversions and the call
        const detail::call_arg a[] = {detail::call_arg(std::forward<Args>(args))...};
        return detail::call(f, a, sizeof...(Args));
    }
}
template <typename D>
int64_t pyapi<D>::len() const {
    return detail::len(ptr());
}
template <typename D>
std::string pyapi<D>::str() const {
    return detail::str(ptr());
}
template <typename D>
std::string pyapi<D>::repr() const {
    return detail::repr(ptr());
}
template <typename D>
pyapi<D>::operator bool() const {
    return detail::truthy(ptr());
}
template <typename D>
bool pyapi<D>::is_none() const {
    return detail::is_none(ptr());
}
template <typename D>
template <typename O>
bool pyapi<D>::is(const pyapi<O>& other) const {
    return ptr() == other.ptr();
}
template <typename D>
template <typename O>
bool pyapi<D>::isinstance(const pyapi<O>& type) const {
    return detail::isinstance(ptr(), type.ptr());
}
template <typename D>
pyvalue pyapi<D>::type() const {
    return detail::type(ptr());
}
template <typename D>
std::string pyapi<D>::type_name() const {
    return detail::type_name(ptr());
}
template <typename D>
bool pyapi<D>::is_int() const {
    return detail::check_type(ptr(), 0);
}
template <typename D>
bool pyapi<D>::is_float() const {
    return detail::check_type(ptr(), 1);
}
template <typename D>
bool pyapi<D>::is_bool() const {
    return detail::check_type(ptr(), 2);
}
template <typename D>
bool pyapi<D>::is_str() const {
    return detail::check_type(ptr(), 3);
}
template <typename D>
bool pyapi<D>::is_bytes() const {
    return detail::check_type(ptr(), 4);
}
template <typename D>
bool pyapi<D>::is_list() const {
    return detail::check_type(ptr(), 5);
}
template <typename D>
bool pyapi<D>::is_tuple() const {
    return detail::check_type(ptr(), 6);
}
template <typename D>
bool pyapi<D>::is_dict() const {
    return detail::check_type(ptr(), 7);
}
template <typename D>
bool pyapi<D>::is_callable() const {
    return detail::check_type(ptr(), 8);
}
template <typename D>
int64_t pyapi<D>::hash() const {
    return detail::hash(ptr());
}
template <typename D>
template <typename T>
T pyapi<D>::cast() const {
    return from_py<T>(pyvalue::borrow(ptr()));
}
template <typename D>
pyvalue pyapi<D>::enter() const {
    return detail::enter(ptr());
}
template <typename D>
void pyapi<D>::exit() const {
    detail::exit(ptr());
}
template <typename D>
typename pyapi<D>::iterator pyapi<D>::begin() const {
    return iterator(detail::iter(ptr()));
}
template <typename D>
typename pyapi<D>::iterator pyapi<D>::end() const {
    return iterator();
}

} // namespace isthmus
