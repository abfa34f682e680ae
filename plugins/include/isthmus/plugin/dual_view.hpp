// The plugin author layer's views and tensors of dual numbers: what a generic function's or
// kernel's views and tensors become in the forward mode derived from it.
#pragma once

#include "isthmus/plugin/active_view.hpp"
#include "isthmus/plugin/dual.hpp"

namespace isthmus::plugin {

// Note [derivative views written out]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The views of dual numbers here and those of active numbers (active_view.hpp) have the same
// element access (operator(), [], load / store over their own read or element), written out in
// each rather than inherited from one CRTP base: with the base, GCC 12 made the derived backward
// of a 3x3 blur kernel 35% slower (bench/derived_backward.py, 256x256: 8.0-9.7 ms against
// 5.0-6.8 ms written out, alternating processes), its reads no longer inlined into the position
// loop as before. The bodies are a few lines; a change to one belongs in the other.

/// An input view of a derived forward mode: each read is the element with the same element of
/// the input's tangent (See Note [dual numbers]).
template <typename E, int N, access A>
class view<const dual<E>, N, A> {
public:
    using element_type = const dual<E>;
    using value_type = dual<E>;
    static constexpr int rank = N;
    static constexpr access modifier = A;

    view() = default;
    /// Reads `x` with its tangent `dx`, a view shaped like x (tangent 0 when it has no data). It
    /// refers to x and dx, which outlive it (a derived call's or position's arguments).
    ISTHMUS_HD view(const plugin::view<const E, N, A>& x, const plugin::view<const E, N>& dx)
        : x_(&x), t_(&dx) {}

    ISTHMUS_HD int64_t size(int d) const { return x_->size(d); }
    ISTHMUS_HD int64_t numel() const { return x_->numel(); }
    /// Element at the given indices (one per dimension), after the access modifier.
    template <typename... I>
    ISTHMUS_HD dual<E> operator()(I... idx) const {
        static_assert(sizeof...(I) == N, "one index per dimension");
        const int64_t ii[] = {static_cast<int64_t>(idx)...};
        return read(ii);
    }
    ISTHMUS_HD dual<E> operator[](const ivec<N>& p) const { return read(p.v); }
    /// K consecutive elements along the last dimension, from `idx...`.
    template <int K, typename... I>
    ISTHMUS_HD vec<dual<E>, K> load(I... idx) const {
        static_assert(sizeof...(I) == N, "one index per dimension");
        int64_t ii[] = {static_cast<int64_t>(idx)...};
        vec<dual<E>, K> r{};
        for (int k = 0; k < K; ++k, ++ii[N - 1]) r[k] = read(ii);
        return r;
    }

private:
    ISTHMUS_HD dual<E> read(const int64_t* ii) const {
        int64_t jj[N > 0 ? N : 1] = {};
        const E* p = detail::view_binding::at(*x_, ii, jj);
        const E* t = t_->data();
        if (!t) return dual<E>(*p);
        for (int d = 0; d < N; ++d) t += jj[d] * t_->stride(d);
        return {*p, *t};
    }
    const plugin::view<const E, N, A>* x_ = nullptr;
    const plugin::view<const E, N>* t_ = nullptr;
};

namespace detail {
/// What a kernel position's forward mode wrote, applied when the position ends: each output
/// element's value as the kernel writes it, and its tangent added to the output's tangent. A
/// `y(p) = v` replaces the position's earlier writes of the element, as it does in the kernel.
/// The writes live in the log itself (on the stack): on the CPU the first 16, then on the heap;
/// on the GPU up to 32 (See Note [derived forward mode on the GPU]).
template <typename E>
struct write_log {
    struct write {
        E* y;  // the output element
        E* ty; // its element of the output's tangent
        E value, tangent;
        bool assign; // `=` (replaces the element) or `+=` (adds to it)
    };
#if defined(__CUDA_ARCH__)
    small_vec<write, 32> writes; // See Note [derived forward mode on the GPU]
#else
    small_vec<write, 16> writes;
#endif

    ISTHMUS_HD void record(E* y, E* ty, const dual<E>& v, bool assign) {
        if (assign)
            for (size_t i = writes.size(); i-- > 0;)
                if (writes[i].y == y) writes.erase(i);
#if defined(__CUDA_ARCH__)
        if (writes.full()) { // a GPU thread's log does not grow: what it holds is applied
            apply();
            writes.clear();
        }
#endif
        writes.push_back({y, ty, v.value(), v.tangent(), assign});
    }
    /// Writes the values and adds the tangents: atomically for `+=` (positions on other threads
    /// may add to the same element); for `=`, as the kernel's own store, plainly (an element
    /// that several positions assign has no defined value, nor tangent).
    ISTHMUS_HD void apply() const {
        for (const write& w : writes) {
            *w.y = w.assign ? w.value : *w.y + w.value;
            add_to(w.ty, w.tangent, !w.assign);
        }
    }
};
} // namespace detail

/// An output view of a kernel's derived forward mode: writes are logged for the position's end
/// (See detail::write_log).
template <typename E, int N, access A>
class view<dual<E>, N, A> {
public:
    using element_type = dual<E>;
    using value_type = dual<E>;
    static constexpr int rank = N;
    static constexpr access modifier = A;

    /// An element of the output: assign or add to it.
    class reference {
    public:
        ISTHMUS_HD reference(E* y, E* ty, detail::write_log<E>* log) : y_(y), ty_(ty), log_(log) {}
        ISTHMUS_HD const reference& operator=(const dual<E>& v) const {
            log_->record(y_, ty_, v, true);
            return *this;
        }
        ISTHMUS_HD const reference& operator+=(const dual<E>& v) const {
            log_->record(y_, ty_, v, false);
            return *this;
        }
        ISTHMUS_HD const reference& operator-=(const dual<E>& v) const { return *this += -v; }

    private:
        E* y_;
        E* ty_;
        detail::write_log<E>* log_;
    };

    view() = default;
    /// The output `y` with its tangent `dy` (shaped like y, added to); writes go to `log`. It
    /// refers to y, dy and log, which outlive it.
    ISTHMUS_HD view(const plugin::view<E, N, A>& y, const plugin::view<E, N>& dy,
                    detail::write_log<E>& log)
        : y_(&y), t_(&dy), log_(&log) {}

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
    ISTHMUS_HD void store(const vec<dual<E>, K>& v, I... idx) const {
        static_assert(sizeof...(I) == N, "one index per dimension");
        int64_t ii[] = {static_cast<int64_t>(idx)...};
        for (int k = 0; k < K; ++k, ++ii[N - 1]) element(ii) = v[k];
    }

private:
    ISTHMUS_HD reference element(const int64_t* ii) const {
        int64_t jj[N > 0 ? N : 1] = {};
        E* y = const_cast<E*>(detail::view_binding::at(*y_, ii, jj));
        E* t = t_->data();
        for (int d = 0; d < N; ++d) t += jj[d] * t_->stride(d);
        return reference(y, t, log_);
    }
    const plugin::view<E, N, A>* y_ = nullptr;
    const plugin::view<E, N>* t_ = nullptr;
    detail::write_log<E>* log_ = nullptr;
};

/// A dual number's tensor: what a generic function's `tensor<T, N>` is in its derived forward
/// mode (See detail::boxed_tensor).
template <typename E, int N>
class tensor<dual<E>, N> : public detail::boxed_tensor<dual<E>, N> {
public:
    using detail::boxed_tensor<dual<E>, N>::boxed_tensor;
};

} // namespace isthmus::plugin
