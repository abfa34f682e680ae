// A vector that keeps its first N elements inline: no heap block until it grows past N.
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace isthmus {

/// A std::vector-like sequence whose first `N` elements live inside the object, for the short
/// lists made on hot paths (a storage's copies, an autograd node's inputs, a shape of a few
/// dimensions). Past `N` it
/// moves to one heap block, as std::vector does. Iterators and references are invalidated by
/// every growth and by moving the container.
template <typename T, std::size_t N>
class small_vector {
    static_assert(N > 0, "small_vector needs an inline capacity");

public:
    using value_type = T;
    using size_type = std::size_t;
    using iterator = T*;
    using const_iterator = const T*;

    small_vector() noexcept = default;
    small_vector(std::initializer_list<T> items) { assign(items.begin(), items.end()); }
    template <typename It, typename = typename std::iterator_traits<It>::iterator_category>
    small_vector(It first, It last) {
        assign(first, last);
    }
    small_vector(const small_vector& o) { assign(o.begin(), o.end()); }
    small_vector(small_vector&& o) noexcept(std::is_nothrow_move_constructible_v<T>) {
        take(std::move(o));
    }
    small_vector& operator=(const small_vector& o) {
        if (this != &o) {
            clear();
            assign(o.begin(), o.end());
        }
        return *this;
    }
    small_vector& operator=(small_vector&& o) noexcept(std::is_nothrow_move_constructible_v<T>) {
        if (this != &o) {
            reset();
            take(std::move(o));
        }
        return *this;
    }
    ~small_vector() { reset(); }

    size_type size() const noexcept { return size_; }
    size_type capacity() const noexcept { return cap_; }
    bool empty() const noexcept { return size_ == 0; }
    T* data() noexcept { return data_; }
    const T* data() const noexcept { return data_; }
    iterator begin() noexcept { return data_; }
    iterator end() noexcept { return data_ + size_; }
    const_iterator begin() const noexcept { return data_; }
    const_iterator end() const noexcept { return data_ + size_; }
    T& operator[](size_type i) noexcept { return data_[i]; }
    const T& operator[](size_type i) const noexcept { return data_[i]; }
    T& back() noexcept { return data_[size_ - 1]; }
    const T& back() const noexcept { return data_[size_ - 1]; }

    /// Room for `n` elements without another allocation.
    void reserve(size_type n) {
        if (n > cap_) grow(n);
    }
    void push_back(const T& v) { emplace_back(v); }
    void push_back(T&& v) { emplace_back(std::move(v)); }
    template <typename... A>
    T& emplace_back(A&&... args) {
        if (size_ == cap_) {
            // `args` may refer into this container: build the element before moving the rest.
            T item(std::forward<A>(args)...);
            grow(cap_ * 2);
            return *::new (static_cast<void*>(data_ + size_++)) T(std::move(item));
        }
        return *::new (static_cast<void*>(data_ + size_++)) T(std::forward<A>(args)...);
    }
    /// Removes the element at `pos`, moving the later ones down.
    void erase(T* pos) {
        std::move(pos + 1, end(), pos);
        data_[--size_].~T();
    }
    /// Destroys the elements and keeps the capacity.
    void clear() noexcept {
        std::destroy(begin(), end());
        size_ = 0;
    }

    friend bool operator==(const small_vector& a, const small_vector& b) {
        return std::equal(a.begin(), a.end(), b.begin(), b.end());
    }

private:
    T* inline_data() noexcept { return std::launder(reinterpret_cast<T*>(inline_)); }
    bool on_heap() const noexcept { return cap_ > N; }

    template <typename It>
    void assign(It first, It last) {
        reserve(static_cast<size_type>(std::distance(first, last)));
        for (; first != last; ++first) emplace_back(*first);
    }
    void grow(size_type n) {
        T* fresh = static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{alignof(T)}));
        std::uninitialized_move(begin(), end(), fresh);
        std::destroy(begin(), end());
        if (on_heap()) ::operator delete (data_, std::align_val_t{alignof(T)});
        data_ = fresh;
        cap_ = n;
    }
    /// Destroys the elements and frees a heap block: back to empty inline storage.
    void reset() noexcept {
        clear();
        if (on_heap()) ::operator delete (data_, std::align_val_t{alignof(T)});
        data_ = inline_data();
        cap_ = N;
    }
    /// Takes `o`'s elements (its heap block, or moved one by one from its inline storage).
    void take(small_vector&& o) {
        if (o.on_heap()) {
            data_ = o.data_;
            size_ = o.size_;
            cap_ = o.cap_;
            o.data_ = o.inline_data();
            o.size_ = 0;
            o.cap_ = N;
            return;
        }
        std::uninitialized_move(o.begin(), o.end(), data_);
        size_ = o.size_;
        o.clear();
    }

    alignas(T) unsigned char inline_[N * sizeof(T)];
    T* data_ = inline_data();
    size_type size_ = 0;
    size_type cap_ = N;
};

} // namespace isthmus
