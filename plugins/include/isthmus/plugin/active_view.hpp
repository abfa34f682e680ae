// The plugin author layer's views and tensors of active numbers: what a generic function's or
// kernel's views and tensors become in the backward pass derived from it.
#pragma once

#include "isthmus/plugin/active.hpp"
#include "isthmus/plugin/view.hpp"

namespace isthmus::plugin {

// Note [derived kernels]
// ~~~~~~~~~~~~~~~~~~~~~~
// A generic kernel's derived form (`<name>_vjp`, Note [derived backward] in derive.hpp) runs the
// body with active<E> at every position, on a tape of that position alone (on the stack, its
// first nodes inline, so a position allocates nothing): each read of an input view is a leaf that
// carries the same element, after the access modifier's map, of that input's gradient (See Note
// [leaves are not nodes] in active.hpp); each write to an output view records the output
// gradient's element. After the body the writes' gradients are set and the tape swept, every leaf's
// share added to its element with an atomic add (positions on other threads may read the same
// element: a gather's backward is a scatter-add); a number parameter's leaf carries its one-element
// gradient, so every position adds to it. What the body reads and writes therefore decides the
// derivative, as it does for the adjoints Warp and Quadrants derive from their kernels:
//   - `y(p) = v` makes v the element's value: an earlier write of the same element at this
//     position no longer counts; `y(p) += v` and `-=` add v (the value the element had before the
//     launch is a constant); an output element cannot be read (no conversion from the reference);
//   - an input read after another position wrote it, or a view passed both as an input and an
//     output, gives wrong derivatives: a kernel that updates in place is differentiated as if the
//     input were unchanged. A derived kernel refuses an output that is the same memory as a
//     differentiable input; partial overlaps of two different views are not detected.
// The positions' order of atomic adds varies between runs, so float gradients may differ in the
// last bits between runs and thread counts, except in deterministic mode (Note [deterministic
// launches] in isthmus/plugin_host.hpp).

/// An input view of a derived kernel or function: reads are leaves of the running tape whose
/// adjoints go to the same element of `grad` (See Note [derived kernels]). Its element access is
/// written out as dual<E>'s views' is (See Note [derivative views written out] in dual_view.hpp).
template <typename E, int N, access A>
class view<const active<E>, N, A> {
public:
    using element_type = const active<E>;
    using value_type = active<E>;
    static constexpr int rank = N;
    static constexpr access modifier = A;

    view() = default;
    /// Reads `x`, recording on `t`; adjoints go to `grad`, a view shaped like x (nothing when it
    /// has no data). It refers to x, grad and t, which outlive it (a derived call's or position's
    /// arguments): a position builds its views without copying the plain ones.
    ISTHMUS_HD view(const plugin::view<const E, N, A>& x, const plugin::view<E, N>& grad,
                    detail::tape<E>& t)
        : x_(&x), g_(&grad), t_(&t) {}

    ISTHMUS_HD int64_t size(int d) const { return x_->size(d); }
    ISTHMUS_HD int64_t numel() const { return x_->numel(); }
    /// Element at the given indices (one per dimension), after the access modifier.
    template <typename... I>
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD active<E> operator()(I... idx) const {
        static_assert(sizeof...(I) == N, "one index per dimension");
        const int64_t ii[] = {static_cast<int64_t>(idx)...};
        return read(ii);
    }
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD active<E> operator[](const ivec<N>& p) const {
        return read(p.v);
    }
    /// K consecutive elements along the last dimension, from `idx...`.
    template <int K, typename... I>
    ISTHMUS_HD vec<active<E>, K> load(I... idx) const {
        static_assert(sizeof...(I) == N, "one index per dimension");
        int64_t ii[] = {static_cast<int64_t>(idx)...};
        vec<active<E>, K> r{};
        for (int k = 0; k < K; ++k, ++ii[N - 1]) r[k] = read(ii);
        return r;
    }

private:
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD active<E> read(const int64_t* ii) const {
        int64_t jj[N > 0 ? N : 1] = {};
        const E* p = detail::view_binding::at(*x_, ii, jj);
        E* g = g_->data();
        if (g)
            for (int d = 0; d < N; ++d) g += jj[d] * g_->stride(d);
        return active<E>::leaf(*t_, *p, g);
    }
    const plugin::view<const E, N, A>* x_ = nullptr;
    const plugin::view<E, N>* g_ = nullptr;
    detail::tape<E>* t_ = nullptr;
};

/// An output view of a derived kernel: writes record the output's gradient (See Note [derived
/// kernels]).
template <typename E, int N, access A>
class view<active<E>, N, A> {
public:
    using element_type = active<E>;
    using value_type = active<E>;
    static constexpr int rank = N;
    static constexpr access modifier = A;

    /// An element of the output: assign or add to it.
    class reference {
    public:
        ISTHMUS_HD reference(const E* grad, const void* key, detail::tape<E>* t)
            : g_(grad), key_(key), t_(t) {}
        ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD const reference& operator=(const active<E>& v) const {
            auto& writes = t_->writes;
            for (size_t i = writes.size(); i-- > 0;)
                if (writes[i].key == key_) writes.erase(i);
            record(v);
            return *this;
        }
        ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD const reference&
        operator+=(const active<E>& v) const {
            record(v);
            return *this;
        }
        ISTHMUS_HD const reference& operator-=(const active<E>& v) const { return *this += -v; }

    private:
        // A constant (no tape) has no derivative: nothing to record.
        ISTHMUS_HD void record(const active<E>& v) const {
            if (v.recorded_on()) t_->writes.push_back({v.ref(), v.scale(), g_, key_});
        }
        const E* g_;
        const void* key_;
        detail::tape<E>* t_;
    };

    view() = default;
    /// The output `y` (its shape and access modifier), whose gradient is `grad`, shaped like y;
    /// writes are recorded on `t`. It refers to y, grad and t, which outlive it.
    ISTHMUS_HD view(const plugin::view<E, N, A>& y, const plugin::view<const E, N>& grad,
                    detail::tape<E>& t)
        : y_(&y), g_(&grad), t_(&t) {}

    ISTHMUS_HD int64_t size(int d) const { return y_->size(d); }
    ISTHMUS_HD int64_t numel() const { return y_->numel(); }
    template <typename... I>
    ISTHMUS_HD reference operator()(I... idx) const {
        static_assert(sizeof...(I) == N, "one index per dimension");
        const int64_t ii[] = {static_cast<int64_t>(idx)...};
        return element(ii);
    }
    ISTHMUS_HD reference operator[](const ivec<N>& p) const { return element(p.v); }
    /// Stores K consecutive elements along the last dimension, from `idx...`.
    template <int K, typename... I>
    ISTHMUS_HD void store(const vec<active<E>, K>& v, I... idx) const {
        static_assert(sizeof...(I) == N, "one index per dimension");
        int64_t ii[] = {static_cast<int64_t>(idx)...};
        for (int k = 0; k < K; ++k, ++ii[N - 1]) element(ii) = v[k];
    }

private:
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD reference element(const int64_t* ii) const {
        int64_t jj[N > 0 ? N : 1] = {};
        // the modifier's map and checks; nothing is written there
        const E* key = detail::view_binding::at(*y_, ii, jj);
        const E* g = g_->data();
        for (int d = 0; d < N; ++d) g += jj[d] * g_->stride(d);
        return reference(g, key, t_);
    }
    const plugin::view<E, N, A>* y_ = nullptr;
    const plugin::view<const E, N>* g_ = nullptr;
    detail::tape<E>* t_ = nullptr;
};

namespace detail {

// Note [boxed tensors start as zero bytes]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A derived function's tensor of active or dual numbers holds constant zeros until the function
// writes it, and is as large as the result: the mapping layer's 64x1000 table lookup builds one of
// 64000 active floats per call. Constructed element by element (a vector's value-initialisation)
// it cost 70 us of the derived backward's 500; both number types are trivially copyable and
// destructible, and all-zero bytes are a constant zero in each (an active number without a tape,
// whose scale and reference are never read; a dual number of value and tangent 0), so the
// elements are allocated with calloc, which zeroes at memory speed or not at all (fresh pages).

/// A tensor of derivative numbers (active<E>, dual<E>): what a generic function's `tensor<T, N>`
/// is in its derived forms. It lives in the plugin's memory (never handed to the host),
/// C-contiguous, shared by copies; its elements start as constant zeros (See Note [boxed tensors
/// start as zero bytes]).
template <typename T, int N>
class boxed_tensor {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

public:
    explicit boxed_tensor(const int64_t (&shape)[N]) : boxed_tensor(shape, N) {}
    boxed_tensor(const int64_t* shape, int ndim) {
        if (ndim != N) throw value_error("isthmus::plugin::tensor: rank mismatch");
        int64_t n = 1;
        for (int d = N - 1; d >= 0; --d) {
            if (shape[d] < 0) throw value_error("isthmus::plugin::tensor: a negative size");
            shape_[d] = shape[d];
            strides_[d] = n;
            if (__builtin_mul_overflow(n, shape[d], &n) ||
                static_cast<uint64_t>(n) > SIZE_MAX / sizeof(T))
                throw value_error("isthmus::plugin::tensor: the shape's size overflows memory");
        }
        void* p = std::calloc(static_cast<size_t>(n > 0 ? n : 1), sizeof(T));
        if (!p) throw std::bad_alloc();
        data_ = std::shared_ptr<T>(static_cast<T*>(p), [](T* q) { std::free(q); });
        numel_ = n;
    }
    template <typename... I>
    T& operator()(I... idx) const {
        static_assert(sizeof...(I) == N, "one index per dimension");
        const int64_t ii[] = {static_cast<int64_t>(idx)...};
        int64_t off = 0;
        for (int d = 0; d < N; ++d) {
            if (static_cast<uint64_t>(ii[d]) >= static_cast<uint64_t>(shape_[d]))
                throw index_error(cat("isthmus::plugin::tensor: index ", ii[d],
                                      " is out of bounds for dimension ", d, " of size ",
                                      shape_[d]));
            off += ii[d] * strides_[d];
        }
        return data_.get()[off];
    }
    T* data() const { return data_.get(); }
    int64_t size(int d) const { return shape_[d]; }
    int64_t numel() const { return numel_; }

private:
    std::shared_ptr<T> data_;
    int64_t numel_ = 0;
    int64_t shape_[N > 0 ? N : 1] = {};
    int64_t strides_[N > 0 ? N : 1] = {};
};
} // namespace detail

/// An active number's tensor: what a generic function's `tensor<T, N>` is in its derived
/// backward (See detail::boxed_tensor).
template <typename E, int N>
class tensor<active<E>, N> : public detail::boxed_tensor<active<E>, N> {
public:
    using detail::boxed_tensor<active<E>, N>::boxed_tensor;
};

} // namespace isthmus::plugin
