// The Python object handle (pyvalue, exception_of) and the lazy attribute and item references.
// item_ref).
#pragma once

#include "isthmus/pyvalue/pyapi.hpp"

#include <string>
#include <string_view>
#include <utility>

namespace isthmus {

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

/// The Python exception object a python_error carries, as a pyvalue (empty when it has none).
ISTHMUS_API pyvalue exception_of(const python_error& e);

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

} // namespace isthmus
