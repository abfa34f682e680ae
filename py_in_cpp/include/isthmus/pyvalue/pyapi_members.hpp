// The inline members of pyapi<Derived> and its iterator: each calls one primitive (primitives.hpp).
#pragma once

#include "isthmus/pyvalue/call_args.hpp"

#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>

namespace isthmus {

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
