// The plugin author layer's generic functions and the backward passes derived from them.
#pragma once

#include "isthmus/plugin/active.hpp"
#include "isthmus/plugin/callables.hpp"

namespace isthmus::plugin {

// Note [derived backward]
// ~~~~~~~~~~~~~~~~~~~~~~~
// `m.def("f", generic<float, double>(ISTHMUS_GENERIC(f)), {"a", "x"})` registers f<float> and
// f<double> as overloads of "f", as two m.def calls would, and for each floating element type E
// also "f_vjp": f's vector-Jacobian product, an ordinary function of the plugin (callable from C++
// and Python, listed like any other). f_vjp takes f's arguments followed by one gradient per
// result (grad_output, or grad_output0, grad_output1, ... for a tuple), each shaped like its
// result, and returns a tuple with one entry per parameter of f: the gradient of a view of E (a
// tensor shaped like it), of an E number (a number), and none for every other parameter (integers,
// strings, views of other types), which is not differentiable.
//
// It is derived from f<active<E>> (Note [active numbers] in isthmus/plugin/active.hpp): each
// element of a view of E is copied into an active leaf (in C order, so an element read twice, or
// an index clamped onto it, gets both contributions), each E number becomes a leaf, f runs once,
// the result's elements are seeded with grad_output and the tape is swept. The views f receives
// keep their shape, access modifier and argument position (messages are unchanged) and are
// contiguous. f may not write into a view of E (its results are what gets differentiated: return
// them); f<active<E>> must compile, so code that must not be differentiated through reads
// value_of(x). Reading a view element and assigning to it through the returned tensor are the
// only ways values enter and leave; the tape holds one node per arithmetic operation on active
// values (about 24 bytes each for double), freed when the call returns. Only first derivatives:
// f_vjp is not itself derivable. Memory and time grow with the work f does, as for every
// operator-overloading tool; a hand-written backward, given, is used instead.

/// A function or kernel written once for several element types: `make` returns the callable
/// for an element type, `[]<typename T>() { return &forward<T>; }` (ISTHMUS_GENERIC(forward)).
template <typename Make, typename... Ts>
struct generic_def {
    Make make;
};
/// The generic callable `make` for the element types Ts (See Note [derived backward]).
template <typename... Ts, typename Make>
generic_def<Make, Ts...> generic(Make make) {
    static_assert(sizeof...(Ts) > 0, "generic<T...>: name at least one element type");
    return {std::move(make)};
}

/// An active number's tensor: what a generic function's `tensor<T, N>` is in its derived form.
/// It lives in the plugin's memory (never handed to the host), C-contiguous, shared by copies.
template <typename E, int N>
class tensor<active<E>, N> {
public:
    explicit tensor(const int64_t (&shape)[N]) : tensor(shape, N) {}
    tensor(const int64_t* shape, int ndim) {
        if (ndim != N) throw value_error("isthmus::plugin::tensor: rank mismatch");
        int64_t n = 1, strides[N > 0 ? N : 1] = {};
        for (int d = N - 1; d >= 0; --d) {
            if (shape[d] < 0) throw value_error("isthmus::plugin::tensor: a negative size");
            strides[d] = n;
            n *= shape[d];
        }
        data_ = std::make_shared<std::vector<active<E>>>(static_cast<size_t>(n));
        view_ = detail::view_binding::over(data_->data(), shape, strides, view<active<E>, N>());
    }
    const view<active<E>, N>& v() const { return view_; }
    template <typename... I>
    active<E>& operator()(I... idx) const {
        return view_(idx...);
    }
    active<E>* data() const { return view_.data(); }
    int64_t size(int d) const { return view_.size(d); }
    int64_t numel() const { return view_.numel(); }

private:
    std::shared_ptr<std::vector<active<E>>> data_;
    view<active<E>, N> view_;
};

namespace detail {

template <typename>
inline constexpr bool dependent_false = false;

/// Sets the running thread's tape for active<E> for one derived call.
template <typename E>
class tape_scope {
public:
    explicit tape_scope(tape<E>& t) : prev_(t_tape<E>) { t_tape<E> = &t; }
    ~tape_scope() { t_tape<E> = prev_; }
    tape_scope(const tape_scope&) = delete;
    tape_scope& operator=(const tape_scope&) = delete;

private:
    tape<E>* prev_;
};

/// Calls f(i, j) for every C-order position j (N indices) of `shape`, i counting from 0.
template <int N, typename F>
void for_each_index(const int64_t* shape, F&& f) {
    int64_t n = 1;
    for (int d = 0; d < N; ++d) n *= shape[d];
    int64_t idx[N > 0 ? N : 1] = {};
    for (int64_t i = 0; i < n; ++i) {
        f(i, idx);
        for (int d = N - 1; d >= 0; --d) {
            if (++idx[d] < shape[d]) break;
            idx[d] = 0;
        }
    }
}

template <int N, typename V>
int64_t offset_of(const V& v, const int64_t* idx) {
    int64_t off = 0;
    for (int d = 0; d < N; ++d) off += idx[d] * v.stride(d);
    return off;
}

/// One parameter of a derived function: what the caller passes (plain), what f<active<E>> gets
/// (arg()) and its gradient (grad()). Anything but views and numbers of E passes through and has
/// no gradient.
template <typename P, typename E>
struct active_input {
    using plain = P;
    using grad_type = isthmus_value;
    P value;
    explicit active_input(P v) : value(std::move(v)) {}
    P arg() const { return value; }
    isthmus_value grad(const std::vector<E>&) const { return isthmus_value{}; }
};
template <typename E>
struct active_input<active<E>, E> {
    using plain = E;
    using grad_type = E;
    active<E> value;
    explicit active_input(E v) : value(active<E>::leaf(v)) {}
    active<E> arg() const { return value; }
    E grad(const std::vector<E>& adj) const { return adj[static_cast<size_t>(value.slot())]; }
};
template <typename E, int N, access A>
struct active_input<view<const active<E>, N, A>, E> {
    using plain = view<const E, N, A>;
    using grad_type = tensor<E, N>;
    std::vector<active<E>> copy;
    plain like; // the argument: its modifier and position
    int64_t shape[N > 0 ? N : 1] = {}, strides[N > 0 ? N : 1] = {};
    int32_t first = 0;
    explicit active_input(const plain& x) : like(x) {
        int64_t n = 1;
        for (int d = N - 1; d >= 0; --d) shape[d] = x.size(d), strides[d] = n, n *= shape[d];
        copy.reserve(static_cast<size_t>(n));
        first = static_cast<int32_t>(running_tape<E>().nodes.size());
        for_each_index<N>(shape, [&](int64_t, const int64_t* idx) {
            copy.push_back(active<E>::leaf(x.data()[offset_of<N>(x, idx)]));
        });
    }
    view<const active<E>, N, A> arg() const {
        return view_binding::over<const active<E>, N, A>(copy.data(), shape, strides, like);
    }
    tensor<E, N> grad(const std::vector<E>& adj) const {
        tensor<E, N> g(shape, N);
        for (size_t i = 0; i < copy.size(); ++i) g.data()[i] = adj[static_cast<size_t>(first) + i];
        return g;
    }
};
template <typename E, int N, access A>
struct active_input<view<active<E>, N, A>, E> {
    static_assert(dependent_false<E>,
                  "isthmus::plugin: a generic function whose backward is "
                  "derived may not write into a view of its element type; return the "
                  "result instead (Note [derived backward])");
};

/// The gradient parameter(s) for a result type of f<active<E>>: one view per active tensor, one
/// number per active number, in a tuple's order.
template <typename R, typename E>
struct result_grads {
    static_assert(dependent_false<R>,
                  "isthmus::plugin: a generic function whose backward is "
                  "derived returns tensors or numbers of its element type (or a tuple of "
                  "them)");
};
template <typename E, int N>
struct result_grads<tensor<active<E>, N>, E> {
    using type = std::tuple<view<const E, N>>;
};
template <typename E>
struct result_grads<active<E>, E> {
    using type = std::tuple<E>;
};
template <typename E, typename... R>
struct result_grads<std::tuple<R...>, E> {
    using type = decltype(std::tuple_cat(std::declval<typename result_grads<R, E>::type>()...));
};
template <typename E, typename A, typename B>
struct result_grads<std::pair<A, B>, E> : result_grads<std::tuple<A, B>, E> {};

template <typename E, int N>
void seed(const tensor<active<E>, N>& r, const view<const E, N>& dy, std::vector<E>& adj) {
    for (int d = 0; d < N; ++d)
        if (r.size(d) != dy.size(d))
            throw value_error(cat("grad_output has size ", dy.size(d), " along dimension ", d,
                                  " where the result has ", r.size(d)));
    int64_t shape[N > 0 ? N : 1] = {};
    for (int d = 0; d < N; ++d) shape[d] = r.size(d);
    for_each_index<N>(shape, [&](int64_t i, const int64_t* idx) {
        const int32_t s = r.data()[i].slot();
        if (s >= 0) adj[static_cast<size_t>(s)] += dy.data()[offset_of<N>(dy, idx)];
    });
}
template <typename E>
void seed(const active<E>& r, E dy, std::vector<E>& adj) {
    if (r.slot() >= 0) adj[static_cast<size_t>(r.slot())] += dy;
}
template <typename E, typename R, typename D, size_t... I>
void seed_all(const R& r, const D& dys, std::vector<E>& adj, std::index_sequence<I...>) {
    if constexpr (is_tuple_like<R>::value)
        (seed<E>(std::get<I>(r), std::get<I>(dys), adj), ...);
    else
        seed<E>(r, std::get<0>(dys), adj);
}

template <typename E, typename Fa, typename Args, typename Dys>
struct derived_vjp;
/// f's vector-Jacobian product (See Note [derived backward]): Fa is f<active<E>>.
template <typename E, typename Fa, typename... A, typename... D>
struct derived_vjp<E, Fa, std::tuple<A...>, std::tuple<D...>> {
    Fa fa;
    std::tuple<typename active_input<std::remove_cvref_t<A>, E>::grad_type...>
    operator()(typename active_input<std::remove_cvref_t<A>, E>::plain... p, D... dy) const {
        tape<E> t;
        tape_scope<E> scope(t);
        std::tuple<active_input<std::remove_cvref_t<A>, E>...> in{
            active_input<std::remove_cvref_t<A>, E>(p)...};
        const auto r = std::apply([&](const auto&... a) { return fa(a.arg()...); }, in);
        std::vector<E> adj(t.nodes.size(), E(0));
        seed_all<E>(r, std::tuple<D...>(dy...), adj, std::index_sequence_for<D...>{});
        t.sweep(adj);
        return std::apply([&](const auto&... a) { return std::make_tuple(a.grad(adj)...); }, in);
    }
};

template <typename E, typename Fa>
using derived_vjp_of =
    derived_vjp<E, Fa, typename fn_traits<std::decay_t<Fa>>::args,
                typename result_grads<
                    std::remove_cvref_t<typename fn_traits<std::decay_t<Fa>>::result>, E>::type>;

} // namespace detail

} // namespace isthmus::plugin

/// The generic form of a function template `f` for generic<...>(): `[]<typename T>() { return
/// &f<T>; }`.
#define ISTHMUS_GENERIC(F) []<typename IsthmusElement_>() { return &F<IsthmusElement_>; }
