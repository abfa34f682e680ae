// The plugin author layer's generic functions and the backward passes derived from them.
#pragma once

#include "isthmus/plugin/active_view.hpp"
#include "isthmus/plugin/callables.hpp"
#include "isthmus/plugin/dual_view.hpp"

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
// strings, views of other types), which is not differentiable. A generic function whose result is
// no tensor or number of its element type (a count, an index, nothing) gets its overloads and no
// f_vjp.
//
// It is derived from f<active<E>> (Note [active numbers] in isthmus/plugin/active.hpp): each
// element of a view of E is copied into an active leaf (in C order, so an element read twice, or
// an index clamped onto it, gets both contributions), each E number becomes a leaf, f runs once,
// the result's elements take grad_output as their gradient and the tape is swept. The views f
// receives keep their shape, access modifier and argument position (messages are unchanged) and are
// contiguous. f may not write into a view of E (its results are what gets differentiated: return
// them); f<active<E>> must compile, so code that must not be differentiated through reads
// value_of(x). Reading a view element and assigning to it through the returned tensor are the
// only ways values enter and leave; the tape holds one node per arithmetic operation on active
// values (32 bytes each for float, 40 for double), freed when the call returns. Only first
// derivatives: f_vjp is not itself derivable. Memory and time grow with the work f does, as for
// every operator-overloading tool; a hand-written backward, given, is used instead.

// Note [derived forward mode]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// `m.def("f", generic<float, double>(ISTHMUS_GENERIC(f), with_jvp), ...)` registers, beside f and
// f_vjp, "f_jvp": f's Jacobian-vector product, the directional derivative. f_jvp takes f's
// arguments followed by one tangent per differentiable parameter (tangent_<name>: a view of E has
// one shaped like it, an E number a number; integers, strings and other views have none) and
// returns f's results followed by their tangents (a tuple: y, dy for one result). It is what
// torch.func.jvp computes, in one call whatever the number of outputs, so a few inputs' worth of
// directions cost a few calls where reverse mode needs one per output element.
//
// It runs f once with dual numbers, f<dual<E>> (Note [dual numbers] in isthmus/plugin/dual.hpp):
// each element read from a differentiable input carries its tangent's element, every operation
// computes its value and its tangent, and f_jvp returns the results' values and tangents. Nothing
// is recorded, so it costs about twice what f costs and no memory beyond f's own, where f_vjp pays
// for a tape; its results are f<dual<E>>'s values, f's up to rounding (the compiler may contract
// or order the plain instantiation's arithmetic differently). Opt-in (with_jvp), since it compiles
// one more instantiation per element type.
//
// A generic kernel registered with with_jvp (`m.kernel("k", generic<float>(ISTHMUS_GENERIC(k),
// with_jvp), ...)`) gets "k_jvp" beside k and k_vjp: k's parameters, then the tangent of each
// differentiable input (tangent_<name>, read: a view shaped like the input, a 0-d tensor for a
// number, a vector for a vec) and of each output view (tangent_<name>, added to, as a derived
// kernel's gradients are). Each position runs k<dual<E>>, writes its outputs as k does (the values
// k<dual<E>> computed: k's up to rounding) and adds each written element's tangent to that element
// of the output's tangent, atomically; an element written with `=` counts its last write at that
// position, with `+=` each (See Note [derived kernels] in isthmus/plugin/active_view.hpp). So one
// launch gives the outputs and their directional derivative, what torch.func.jvp gives. The same
// limits hold as for k_vjp: an output that is also a differentiable input is refused.

/// A function or kernel written once for several element types: `make` returns the callable
/// for an element type, `[]<typename T>() { return &forward<T>; }` (ISTHMUS_GENERIC(forward));
/// Derive: whether its backward is derived too.
template <typename Make, bool Derive, typename... Ts>
struct generic_def {
    Make make;
};
/// A generic function with both derivatives derived: `<name>_vjp` and `<name>_jvp` (See Note
/// [derived forward mode]).
template <typename Make, typename... Ts>
struct generic_jvp_def : generic_def<Make, true, Ts...> {};
/// Asks generic<...>() for the forward mode too (See Note [derived forward mode]).
struct with_jvp_t {};
inline constexpr with_jvp_t with_jvp{};
/// The generic callable `make` for the element types Ts, with its derived backward (See Note
/// [derived backward]).
template <typename... Ts, typename Make>
generic_def<Make, true, Ts...> generic(Make make) {
    static_assert(sizeof...(Ts) > 0, "generic<T...>: name at least one element type");
    return {std::move(make)};
}
/// The generic function `make` for the element types Ts, with its derived backward and forward
/// mode (See Note [derived forward mode]).
template <typename... Ts, typename Make>
generic_jvp_def<Make, Ts...> generic(Make make, with_jvp_t) {
    static_assert(sizeof...(Ts) > 0, "generic<T...>: name at least one element type");
    return {{std::move(make)}};
}
/// The generic callable `make` for the element types Ts, without a derived backward: for code
/// that is not to be differentiated, or does not compile with active numbers (std::floor of a T),
/// and compiles about a second faster per element type.
template <typename... Ts, typename Make>
generic_def<Make, false, Ts...> overloads(Make make) {
    static_assert(sizeof...(Ts) > 0, "overloads<T...>: name at least one element type");
    return {std::move(make)};
}

namespace detail {

template <typename>
inline constexpr bool dependent_false = false;

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

/// Refuses a derived parameter `part` (a gradient, a tangent; named `what` in the message) whose
/// N sizes are not those of what it belongs to, `of` (named `whose`).
template <int N, typename Part, typename Of>
void check_part_shape(const Part& part, const Of& of, const char* what, const char* whose) {
    for (int d = 0; d < N; ++d)
        if (part.size(d) != of.size(d))
            throw value_error(cat(what, " has size ", part.size(d), " along dimension ", d,
                                  " where ", whose, " has ", of.size(d)));
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
    P arg(tape<E>&) { return value; }
    isthmus_value grad() const { return isthmus_value{}; }
};
template <typename E>
struct active_input<active<E>, E> {
    using plain = E;
    using grad_type = E;
    E value, g = E(0);
    explicit active_input(E v) : value(v) {}
    active<E> arg(tape<E>& t) { return active<E>::leaf(t, value, &g); }
    E grad() const { return g; }
};
template <typename E, int N, access A>
struct active_input<view<const active<E>, N, A>, E> {
    using plain = view<const E, N, A>;
    using grad_type = tensor<E, N>;
    plain x;
    tensor<E, N> g;
    explicit active_input(const plain& v) : x(v), g(zeros_like(v)) {}
    view<const active<E>, N, A> arg(tape<E>& t) { return {x, g.v(), t}; }
    tensor<E, N> grad() const { return g; }
    static tensor<E, N> zeros_like(const plain& v) {
        int64_t shape[N > 0 ? N : 1] = {};
        for (int d = 0; d < N; ++d) shape[d] = v.size(d);
        tensor<E, N> t(shape, N);
        for (int64_t i = 0, n = t.numel(); i < n; ++i) t.data()[i] = E(0);
        return t;
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
    static constexpr bool derivable = false; // no result to differentiate: no f_vjp
    using type = std::tuple<>;
};
template <typename E, int N>
struct result_grads<tensor<active<E>, N>, E> {
    static constexpr bool derivable = true;
    using type = std::tuple<view<const E, N>>;
};
template <typename E>
struct result_grads<active<E>, E> {
    static constexpr bool derivable = true;
    using type = std::tuple<E>;
};
template <typename E, typename... R>
struct result_grads<std::tuple<R...>, E> {
    static constexpr bool derivable = sizeof...(R) > 0 && (result_grads<R, E>::derivable && ...);
    using type = decltype(std::tuple_cat(std::declval<typename result_grads<R, E>::type>()...));
};
template <typename E, typename A, typename B>
struct result_grads<std::pair<A, B>, E> : result_grads<std::tuple<A, B>, E> {};

/// Whether f<active<E>> (Fa) has a result to differentiate: tensors or numbers of E, or a tuple
/// of only those. A generic function without one (a count, an index, nothing) gets no f_vjp.
template <typename E, typename Fa>
inline constexpr bool derivable_function =
    result_grads<std::remove_cvref_t<typename fn_traits<std::decay_t<Fa>>::result>, E>::derivable;

template <typename E, int N>
void take_gradient(const tensor<active<E>, N>& r, const view<const E, N>& dy,
                   typename tape<E>::adjoints& adj) {
    check_part_shape<N>(dy, r, "grad_output", "the result");
    int64_t shape[N > 0 ? N : 1] = {};
    for (int d = 0; d < N; ++d) shape[d] = r.size(d);
    bool contiguous = true; // dy in r's C order (the usual grad_output): one index for both
    int64_t step = 1;
    for (int d = N - 1; d >= 0; --d) {
        if (shape[d] > 1 && dy.stride(d) != step) contiguous = false;
        step *= shape[d];
    }
    const active<E>* rd = r.data();
    if (contiguous) {
        for (int64_t i = 0, n = r.numel(); i < n; ++i) rd[i].take_gradient(adj, dy.data()[i]);
        return;
    }
    for_each_index<N>(shape, [&](int64_t i, const int64_t* idx) {
        rd[i].take_gradient(adj, dy.data()[offset_of<N>(dy, idx)]);
    });
}
template <typename E>
void take_gradient(const active<E>& r, E dy, typename tape<E>::adjoints& adj) {
    r.take_gradient(adj, dy);
}
template <typename E, typename R, typename D, size_t... I>
void take_gradients(const R& r, const D& dys, typename tape<E>::adjoints& adj,
                    std::index_sequence<I...>) {
    if constexpr (is_tuple_like<R>::value)
        (take_gradient<E>(std::get<I>(r), std::get<I>(dys), adj), ...);
    else
        take_gradient<E>(r, std::get<0>(dys), adj);
}

template <typename E, typename Fa, typename Args, typename Dys>
struct derived_vjp;
/// f's vector-Jacobian product (See Note [derived backward]): Fa is f<active<E>>.
template <typename E, typename Fa, typename... A, typename... D>
struct derived_vjp<E, Fa, std::tuple<A...>, std::tuple<D...>> {
    Fa fa;
    std::tuple<typename active_input<std::remove_cvref_t<A>, E>::grad_type...>
    operator()(typename active_input<std::remove_cvref_t<A>, E>::plain... p, D... dy) const {
        tape_lease<E> t;
        t->shared = false;
        std::tuple<active_input<std::remove_cvref_t<A>, E>...> in{
            active_input<std::remove_cvref_t<A>, E>(p)...};
        const auto r = std::apply([&](auto&... a) { return fa(a.arg(*t)...); }, in);
        auto& adj = t->zero_adjoints();
        take_gradients<E>(r, std::tuple<D...>(dy...), adj, std::index_sequence_for<D...>{});
        t->sweep(adj);
        return std::apply([&](const auto&... a) { return std::make_tuple(a.grad()...); }, in);
    }
};

template <typename E, typename Fa>
using derived_vjp_of =
    derived_vjp<E, Fa, typename fn_traits<std::decay_t<Fa>>::args,
                typename result_grads<
                    std::remove_cvref_t<typename fn_traits<std::decay_t<Fa>>::result>, E>::type>;

// ---- derived parameters (a derivative's parameters beside the originals) ----

/// The concatenated tuple of Part<P, E> over the parameter types P of Tuple: the derived
/// parameters a derivative adds (gradients, tangents), in parameter order.
template <typename Tuple, typename E, template <typename, typename> class Part, typename Seq>
struct kernel_parts_of;
template <typename Tuple, typename E, template <typename, typename> class Part, size_t... I>
struct kernel_parts_of<Tuple, E, Part, std::index_sequence<I...>> {
    using type = decltype(std::tuple_cat(
        std::declval<Part<std::remove_cvref_t<std::tuple_element_t<I, Tuple>>, E>>()...));
};
template <typename Tuple, typename E, template <typename, typename> class Part, size_t... J>
constexpr size_t part_count(std::index_sequence<J...>) {
    return (size_t{0} + ... +
            std::tuple_size_v<Part<std::remove_cvref_t<std::tuple_element_t<J, Tuple>>, E>>);
}
/// Where parameter I's dy (or grad) sits among the derived kernel's dy (grad) parameters.
template <typename Tuple, typename E, template <typename, typename> class Part, size_t I>
constexpr size_t part_index() {
    return part_count<Tuple, E, Part>(std::make_index_sequence<I>{});
}

// ---- forward mode (Note [derived forward mode]) ----

/// One parameter of a derived forward mode: what the caller passes (plain), its tangent (none
/// for parameters that are not differentiable) and what f<dual<E>> gets (arg()).
template <typename P, typename E>
struct dual_input {
    using plain = P;
    using tangent = std::tuple<>;
    static P arg(const P& p) { return p; }
};
template <typename E>
struct dual_input<dual<E>, E> {
    using plain = E;
    using tangent = std::tuple<E>;
    static dual<E> arg(E v, E dv) { return {v, dv}; }
};
template <typename E, int N, access A>
struct dual_input<view<const dual<E>, N, A>, E> {
    using plain = view<const E, N, A>;
    using tangent = std::tuple<view<const E, N>>;
    static view<const dual<E>, N, A> arg(const plain& x, const view<const E, N>& dx) {
        check_part_shape<N>(dx, x, "a tangent", "its input");
        return {x, dx};
    }
};
template <typename E, int N, access A>
struct dual_input<view<dual<E>, N, A>, E> {
    static_assert(dependent_false<E>,
                  "isthmus::plugin: a generic function whose forward mode is "
                  "derived may not write into a view of its element type; return the "
                  "result instead (Note [derived forward mode])");
};
/// The tangent parameter of a derived function's input, as a tuple of none or one type: a view
/// of E has a view of E shaped like it, an E number a number; other parameters have none.
template <typename P, typename E>
using jvp_part = typename dual_input<std::remove_cvref_t<P>, E>::tangent;

/// A result of f<dual<E>> as its plain values (Tangent false) or its tangents (true).
template <bool Tangent, typename E, int N>
tensor<E, N> plain_result(const tensor<dual<E>, N>& r) {
    int64_t shape[N > 0 ? N : 1] = {};
    for (int d = 0; d < N; ++d) shape[d] = r.size(d);
    tensor<E, N> out(shape, N);
    for (int64_t i = 0, n = r.numel(); i < n; ++i)
        out.data()[i] = Tangent ? r.data()[i].tangent() : r.data()[i].value();
    return out;
}
template <bool Tangent, typename E>
E plain_result(const dual<E>& r) {
    return Tangent ? r.tangent() : r.value();
}
template <bool Tangent, typename E, typename R>
auto plain_results(const R& r) {
    if constexpr (is_tuple_like<R>::value)
        return std::apply(
            [&](const auto&... e) { return std::make_tuple(plain_result<Tangent, E>(e)...); }, r);
    else
        return std::make_tuple(plain_result<Tangent, E>(r));
}

template <typename E, typename Fd, typename Args, typename Tangents>
struct derived_jvp;
/// f's Jacobian-vector product (See Note [derived forward mode]): Fd is f<dual<E>>.
template <typename E, typename Fd, typename... A, typename... T>
struct derived_jvp<E, Fd, std::tuple<A...>, std::tuple<T...>> {
    using Args = std::tuple<A...>;
    Fd fd;
    auto operator()(typename dual_input<std::remove_cvref_t<A>, E>::plain... p, T... dx) const {
        const std::tuple<const T&...> tangents(dx...);
        const auto r = [&]<size_t... I>(std::index_sequence<I...>) {
            return fd(arg_of<I>(p, tangents)...);
        }
        (std::index_sequence_for<A...>{});
        return std::tuple_cat(plain_results<false, E>(r), plain_results<true, E>(r));
    }
    template <size_t I, typename Plain, typename Tan>
    static auto arg_of(const Plain& p, const Tan& tangents) {
        using P = std::remove_cvref_t<std::tuple_element_t<I, Args>>;
        if constexpr (std::tuple_size_v < jvp_part < P, E >>> 0)
            return dual_input<P, E>::arg(p, std::get<part_index<Args, E, jvp_part, I>()>(tangents));
        else
            return dual_input<P, E>::arg(p);
    }
};

/// The forward mode of the generic function whose dual form is Fd.
template <typename E, typename Fd>
struct derived_jvp_of {
    using args = typename fn_traits<std::decay_t<Fd>>::args;
    using tangents =
        typename kernel_parts_of<args, E, jvp_part,
                                 std::make_index_sequence<std::tuple_size_v<args>>>::type;
    using type = derived_jvp<E, std::decay_t<Fd>, args, tangents>;
};

} // namespace detail

} // namespace isthmus::plugin

/// The generic form of a function template `f` for generic<...>(): `[]<typename T>() { return
/// &f<T>; }`.
#define ISTHMUS_GENERIC(F) []<typename IsthmusElement_>() { return &F<IsthmusElement_>; }
