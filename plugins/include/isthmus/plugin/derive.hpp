// The plugin author layer's generic functions and the backward passes derived from them.
#pragma once

#include "isthmus/plugin/active_view.hpp"
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
// It runs on the same instantiation as f_vjp, f<active<E>> (Note [active numbers]): each
// differentiable input's leaves carry the address of their element in a buffer shaped like the
// input, which here holds the input's tangent instead of a zeroed gradient; f runs once and
// records its tape; a forward sweep over the tape gives every node its tangent (its partials times
// its operands' tangents), and each result element's tangent is its scale times its node's or
// leaf's. So it costs what f_vjp costs (the tape's memory included: this is forward mode on a
// recorded tape, not dual numbers, and the values and derivatives are the ones f_vjp's sweep uses);
// its results are f<active<E>>'s values, f's up to rounding (the compiler may contract or order
// the plain instantiation's arithmetic differently). Opt-in (with_jvp), since it compiles one more
// derived function per element type.
//
// A generic kernel registered with with_jvp (`m.kernel("k", generic<float>(ISTHMUS_GENERIC(k),
// with_jvp), ...)`) gets "k_jvp" beside k and k_vjp: k's parameters, then the tangent of each
// differentiable input (tangent_<name>, read: a view shaped like the input, a 0-d tensor for a
// number, a vector for a vec) and of each output view (tangent_<name>, added to, as a derived
// kernel's gradients are). Each position runs k<active<E>> on a tape of its own whose leaves carry
// the address of their tangent element, writes its outputs as k does (the values k<active<E>>
// computed: k's up to rounding), sweeps the tape forward, and adds each element it wrote's tangent
// (its scale times its node's or leaf's tangent) to that element of the output's tangent,
// atomically; an element written with `=` counts its last write at that position, with `+=` each
// (See Note [derived kernels] in isthmus/plugin/active_view.hpp). So one launch gives the outputs
// and their directional derivative, what torch.func.jvp gives; it costs about what k_vjp costs.
// The same limits hold as for k_vjp: an output that is also a differentiable input is refused.

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
    for (int d = 0; d < N; ++d)
        if (r.size(d) != dy.size(d))
            throw value_error(cat("grad_output has size ", dy.size(d), " along dimension ", d,
                                  " where the result has ", r.size(d)));
    int64_t shape[N > 0 ? N : 1] = {};
    for (int d = 0; d < N; ++d) shape[d] = r.size(d);
    for_each_index<N>(shape, [&](int64_t i, const int64_t* idx) {
        r.data()[i].take_gradient(adj, dy.data()[offset_of<N>(dy, idx)]);
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

// ---- derived kernels (Note [derived kernels] in active_view.hpp) ----

/// How a parameter of a kernel's active form takes part in its derived kernel: `plain` is the
/// parameter the derived kernel has in its place; an output (a view of active<E>) adds its
/// gradient `dy` (read), a differentiable input (a view of const active<E>, an active<E>, a vec
/// of them) adds its gradient `grad` (accumulated into). Anything else passes through.
template <typename P, typename E>
struct kernel_param {
    using plain = P;
    using dy = std::tuple<>;
    using grad = std::tuple<>;
    static P make(const P& p, const void*, const void*, tape<E>&) { return p; }
};
template <typename E, int N, access A>
struct kernel_param<view<const active<E>, N, A>, E> {
    using plain = view<const E, N, A>;
    using dy = std::tuple<>;
    using grad = std::tuple<view<E, N>>;
    static view<const active<E>, N, A> make(const plain& x, const void*, const view<E, N>* g,
                                            tape<E>& t) {
        for (int d = 0; d < N; ++d)
            if (g->size(d) != x.size(d))
                throw value_error(cat("a gradient has size ", g->size(d), " along dimension ", d,
                                      " where its input has ", x.size(d)));
        return {x, *g, t};
    }
};
template <typename E, int N, access A>
struct kernel_param<view<active<E>, N, A>, E> {
    using plain = view<E, N, A>;
    using dy = std::tuple<view<const E, N>>;
    using grad = std::tuple<>;
    static view<active<E>, N, A> make(const plain& y, const view<const E, N>* dy, const void*,
                                      tape<E>& t) {
        for (int d = 0; d < N; ++d)
            if (dy->size(d) != y.size(d))
                throw value_error(cat("an output gradient has size ", dy->size(d),
                                      " along dimension ", d, " where its output has ", y.size(d)));
        return {y, *dy, t};
    }
};
template <typename E>
struct kernel_param<active<E>, E> {
    using plain = E;
    using dy = std::tuple<>;
    using grad = std::tuple<view<E, 0>>;
    static active<E> make(E v, const void*, const view<E, 0>* g, tape<E>& t) {
        return active<E>::leaf(t, v, g->data());
    }
};
template <typename E, int K>
struct kernel_param<vec<active<E>, K>, E> {
    using plain = vec<E, K>;
    using dy = std::tuple<>;
    using grad = std::tuple<view<E, 1>>;
    static vec<active<E>, K> make(const plain& v, const void*, const view<E, 1>* g, tape<E>& t) {
        if (g->size(0) != K)
            throw value_error(cat("the gradient of a vec", K, " has ", g->size(0), " elements"));
        vec<active<E>, K> r{};
        for (int k = 0; k < K; ++k) r[k] = active<E>::leaf(t, v[k], g->data() + k * g->stride(0));
        return r;
    }
};

template <typename Tuple, typename E, template <typename, typename> class Part, typename Seq>
struct kernel_parts_of;
template <typename Tuple, typename E, template <typename, typename> class Part, size_t... I>
struct kernel_parts_of<Tuple, E, Part, std::index_sequence<I...>> {
    using type = decltype(std::tuple_cat(
        std::declval<Part<std::remove_cvref_t<std::tuple_element_t<I, Tuple>>, E>>()...));
};
template <typename P, typename E>
using dy_part = typename kernel_param<P, E>::dy;
template <typename P, typename E>
using grad_part = typename kernel_param<P, E>::grad;

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

/// `p` as a pointer to the one element type of Part (a void pointer when Part is empty).
template <typename Part>
auto part_ptr(const void* p) {
    if constexpr (std::tuple_size_v < Part >> 0)
        return static_cast<const std::tuple_element_t<0, Part>*>(p);
    else
        return p;
}

template <typename Tuple, typename Seq>
struct tuple_prefix;
template <typename Tuple, size_t... I>
struct tuple_prefix<Tuple, std::index_sequence<I...>> {
    using type = std::tuple<std::tuple_element_t<I, Tuple>...>;
};
template <typename Args, typename E>
struct plain_params;
template <typename... A, typename E>
struct plain_params<std::tuple<A...>, E> {
    using type = std::tuple<typename kernel_param<std::remove_cvref_t<A>, E>::plain...>;
};

template <typename E, typename Fa, typename Args, typename Plain, typename Dys, typename Grads,
          typename P>
struct derived_kernel;
/// A generic kernel's derived form (See Note [derived kernels]): Fa is the body instantiated
/// with active<E>, Args its parameters less the position P.
template <typename E, typename Fa, typename Args, typename... Plain, typename... Dy, typename... G,
          typename P>
struct derived_kernel<E, Fa, Args, std::tuple<Plain...>, std::tuple<Dy...>, std::tuple<G...>, P> {
    Fa fa;
    void operator()(Plain... p, Dy... dy, G... g, P pos) const {
        tape<E> t; // on the stack: a position's tape fits in its inline nodes
        t.shared = true;
        const std::tuple<const Plain&...> plain(p...);
        refuse_aliases(plain, std::index_sequence_for<Plain...>{});
        const std::tuple<const Dy*...> dys(&dy...);
        const std::tuple<const G*...> grads(&g...);
        [&]<size_t... I>(std::index_sequence<I...>) {
            fa(arg<I>(plain, dys, grads, t)..., pos);
        }
        (std::index_sequence_for<Plain...>{});
        auto& adj = t.zero_adjoints();
        for (const auto& w : t.writes) t.add_gradient(adj, w.slot, w.target, w.scale * *w.at);
        t.sweep(adj);
    }
    /// An output view that is also a differentiable input (the same first element) would be
    /// differentiated as if the input were unchanged (See Note [derived kernels]): refused.
    template <typename PT, size_t... I>
    static void refuse_aliases(const PT& plain, std::index_sequence<I...>) {
        const void* outs[sizeof...(I) + 1] = {};
        const void* ins[sizeof...(I) + 1] = {};
        size_t no = 0, ni = 0;
        auto note = [&]<size_t J>() {
            using A = std::remove_cvref_t<std::tuple_element_t<J, Args>>;
            if constexpr (std::tuple_size_v < dy_part < A, E >>> 0)
                outs[no++] = std::get<J>(plain).data();
            else if constexpr (requires { A::rank; } && std::tuple_size_v<grad_part<A, E>> > 0)
                ins[ni++] = std::get<J>(plain).data();
        };
        (note.template operator()<I>(), ...);
        for (size_t o = 0; o < no; ++o)
            for (size_t i = 0; i < ni; ++i)
                if (outs[o] == ins[i] && outs[o] != nullptr)
                    throw value_error("an output view is also passed as a differentiable input "
                                      "(the same memory): the derived kernel would differentiate "
                                      "as if the input were unchanged; pass a copy of the input");
    }
    template <size_t I, typename PT, typename DT, typename GT>
    static auto arg(const PT& plain, const DT& dys, const GT& grads, tape<E>& t) {
        using A = std::remove_cvref_t<std::tuple_element_t<I, Args>>;
        constexpr size_t di = part_index<Args, E, dy_part, I>();
        constexpr size_t gi = part_index<Args, E, grad_part, I>();
        const void* d = nullptr;
        const void* gr = nullptr;
        if constexpr (std::tuple_size_v < dy_part < A, E >>> 0) d = std::get<di>(dys);
        if constexpr (std::tuple_size_v < grad_part < A, E >>> 0) gr = std::get<gi>(grads);
        return kernel_param<A, E>::make(std::get<I>(plain), part_ptr<dy_part<A, E>>(d),
                                        part_ptr<grad_part<A, E>>(gr), t);
    }
};

template <typename E, typename Fa>
struct derived_kernel_of {
    using all = typename fn_traits<std::decay_t<Fa>>::args;
    static constexpr size_t n = std::tuple_size_v<all> - 1;
    using args = typename tuple_prefix<all, std::make_index_sequence<n>>::type;
    using position = std::tuple_element_t<n, all>;
    using plain = typename plain_params<args, E>::type;
    using dys = typename kernel_parts_of<args, E, dy_part, std::make_index_sequence<n>>::type;
    using grads = typename kernel_parts_of<args, E, grad_part, std::make_index_sequence<n>>::type;
    using type = derived_kernel<E, std::decay_t<Fa>, args, plain, dys, grads, position>;
};

// ---- forward mode (Note [derived forward mode]) ----

/// The tangent parameter of a derived function's input, as a tuple of none or one type: a view
/// of E has a view of E shaped like it, an E number a number; other parameters have none.
template <typename P, typename E>
struct jvp_tangent {
    using type = std::tuple<>;
};
template <typename E>
struct jvp_tangent<active<E>, E> {
    using type = std::tuple<E>;
};
template <typename E, int N, access A>
struct jvp_tangent<view<const active<E>, N, A>, E> {
    using type = std::tuple<view<const E, N>>;
};
template <typename P, typename E>
using jvp_part = typename jvp_tangent<std::remove_cvref_t<P>, E>::type;

/// Sets an input's tangent where its leaves carry their gradient element (See Note [derived
/// forward mode]).
template <typename E, int N, access A>
void set_tangent(active_input<view<const active<E>, N, A>, E>& in, const view<const E, N>& dx) {
    for (int d = 0; d < N; ++d)
        if (in.x.size(d) != dx.size(d))
            throw value_error(cat("a tangent has size ", dx.size(d), " along dimension ", d,
                                  " where its input has ", in.x.size(d)));
    int64_t shape[N > 0 ? N : 1] = {};
    for (int d = 0; d < N; ++d) shape[d] = dx.size(d);
    for_each_index<N>(shape, [&](int64_t i, const int64_t* idx) {
        in.g.data()[i] = dx.data()[offset_of<N>(dx, idx)];
    });
}
template <typename E>
void set_tangent(active_input<active<E>, E>& in, E dx) {
    in.g = dx;
}

/// The tangent of an active value after the forward sweep (`tan`: one per node).
template <typename E>
E tangent_of(const active<E>& r, const typename tape<E>::adjoints& tan) {
    if (!r.recorded_on()) return E(0);
    if (r.slot() >= 0) return r.scale() * tan[static_cast<size_t>(r.slot())];
    return r.leaf_target() ? r.scale() * *r.leaf_target() : E(0);
}

/// A result of f<active<E>> as its plain values, and as its tangents.
template <typename E, int N>
tensor<E, N> plain_result(const tensor<active<E>, N>& r, const typename tape<E>::adjoints* tan) {
    int64_t shape[N > 0 ? N : 1] = {};
    for (int d = 0; d < N; ++d) shape[d] = r.size(d);
    tensor<E, N> out(shape, N);
    for (int64_t i = 0, n = r.numel(); i < n; ++i)
        out.data()[i] = tan ? tangent_of(r.data()[i], *tan) : r.data()[i].value();
    return out;
}
template <typename E>
E plain_result(const active<E>& r, const typename tape<E>::adjoints* tan) {
    return tan ? tangent_of(r, *tan) : r.value();
}
template <typename E, typename R>
auto plain_results(const R& r, const typename tape<E>::adjoints* tan) {
    if constexpr (is_tuple_like<R>::value)
        return std::apply(
            [&](const auto&... e) { return std::make_tuple(plain_result<E>(e, tan)...); }, r);
    else
        return std::make_tuple(plain_result<E>(r, tan));
}

template <typename E, typename Fa, typename Args, typename Tangents>
struct derived_jvp;
/// f's Jacobian-vector product (See Note [derived forward mode]): Fa is f<active<E>>.
template <typename E, typename Fa, typename... A, typename... T>
struct derived_jvp<E, Fa, std::tuple<A...>, std::tuple<T...>> {
    using Args = std::tuple<A...>;
    Fa fa;
    auto operator()(typename active_input<std::remove_cvref_t<A>, E>::plain... p, T... dx) const {
        tape_lease<E> t;
        t->shared = false;
        std::tuple<active_input<std::remove_cvref_t<A>, E>...> in{
            active_input<std::remove_cvref_t<A>, E>(p)...};
        const std::tuple<const T&...> tangents(dx...);
        [&]<size_t... I>(std::index_sequence<I...>) {
            (set_tangent_of<I>(std::get<I>(in), tangents), ...);
        }
        (std::index_sequence_for<A...>{});
        const auto r = std::apply([&](auto&... a) { return fa(a.arg(*t)...); }, in);
        auto& tan = t->zero_adjoints();
        t->forward_sweep(tan);
        return std::tuple_cat(plain_results<E>(r, nullptr), plain_results<E>(r, &tan));
    }
    template <size_t I, typename In, typename Tan>
    static void set_tangent_of(In& in, const Tan& tangents) {
        using P = std::tuple_element_t<I, Args>;
        if constexpr (std::tuple_size_v < jvp_part < P, E >>> 0)
            set_tangent(in, std::get<part_index<Args, E, jvp_part, I>()>(tangents));
    }
};

// ---- forward mode of kernels (Note [derived forward mode]) ----

/// A view of E's elements as a view of T (const added or dropped): the same memory, shape and
/// strides.
template <typename T, int N, typename V>
view<T, N> retyped_view(const V& v) {
    return view_binding::adopt<view<T, N>>(v.abi());
}

/// How a parameter of a kernel's active form takes part in its forward mode: a differentiable
/// input (a view of const active<E>, an active<E>, a vec of them) adds its tangent `in` (read:
/// a view shaped like it, a 0-d tensor for a number, one of K elements for a vec<K>); an output
/// (a view of active<E>) adds its tangent `out` (added to). Its leaves carry the address of their
/// tangent element, as a derived function's do (See Note [derived forward mode]).
template <typename P, typename E>
struct kernel_tangent {
    using in = std::tuple<>;
    using out = std::tuple<>;
    static P make(const P& p, const void*, const void*, tape<E>&) { return p; }
};
template <typename E, int N, access A>
struct kernel_tangent<view<const active<E>, N, A>, E> {
    using in = std::tuple<view<const E, N>>;
    using out = std::tuple<>;
    static view<const active<E>, N, A> make(const view<const E, N, A>& x,
                                            const view<const E, N>* dx, const void*, tape<E>& t) {
        for (int d = 0; d < N; ++d)
            if (dx->size(d) != x.size(d))
                throw value_error(cat("a tangent has size ", dx->size(d), " along dimension ", d,
                                      " where its input has ", x.size(d)));
        return {x, retyped_view<E, N>(*dx), t};
    }
};
template <typename E, int N, access A>
struct kernel_tangent<view<active<E>, N, A>, E> {
    using in = std::tuple<>;
    using out = std::tuple<view<E, N>>;
    static view<active<E>, N, A> make(const view<E, N, A>& y, const void*, const view<E, N>* dy,
                                      tape<E>& t) {
        for (int d = 0; d < N; ++d)
            if (dy->size(d) != y.size(d))
                throw value_error(cat("an output tangent has size ", dy->size(d),
                                      " along dimension ", d, " where its output has ", y.size(d)));
        return {y, retyped_view<const E, N>(*dy), t};
    }
};
template <typename E>
struct kernel_tangent<active<E>, E> {
    using in = std::tuple<view<const E, 0>>;
    using out = std::tuple<>;
    static active<E> make(E v, const view<const E, 0>* dx, const void*, tape<E>& t) {
        return active<E>::leaf(t, v, const_cast<E*>(dx->data()));
    }
};
template <typename E, int K>
struct kernel_tangent<vec<active<E>, K>, E> {
    using in = std::tuple<view<const E, 1>>;
    using out = std::tuple<>;
    static vec<active<E>, K> make(const vec<E, K>& v, const view<const E, 1>* dx, const void*,
                                  tape<E>& t) {
        if (dx->size(0) != K)
            throw value_error(cat("the tangent of a vec", K, " has ", dx->size(0), " elements"));
        vec<active<E>, K> r{};
        for (int k = 0; k < K; ++k)
            r[k] = active<E>::leaf(t, v[k], const_cast<E*>(dx->data() + k * dx->stride(0)));
        return r;
    }
};
template <typename P, typename E>
using tangent_in_part = typename kernel_tangent<P, E>::in;
template <typename P, typename E>
using tangent_out_part = typename kernel_tangent<P, E>::out;

template <typename E, typename Fa, typename Args, typename Plain, typename Ins, typename Outs,
          typename P>
struct derived_kernel_jvp;
/// A generic kernel's forward mode: at each position, the body's active form on a tape of that
/// position, a forward sweep, and each output element written gets its tangent added (atomically:
/// positions may write the same element with +=).
template <typename E, typename Fa, typename Args, typename... Plain, typename... Ti, typename... To,
          typename P>
struct derived_kernel_jvp<E, Fa, Args, std::tuple<Plain...>, std::tuple<Ti...>, std::tuple<To...>,
                          P> {
    Fa fa;
    void operator()(Plain... p, Ti... ti, To... to, P pos) const {
        tape<E> t; // on the stack, as a derived kernel's (See Note [derived kernels])
        t.shared = true;
        const std::tuple<const Plain&...> plain(p...);
        derived_kernel_of<E, Fa>::type::refuse_aliases(plain, std::index_sequence_for<Plain...>{});
        const std::tuple<const Ti*...> ins(&ti...);
        const std::tuple<const To*...> outs(&to...);
        [&]<size_t... I>(std::index_sequence<I...>) {
            fa(arg<I>(plain, ins, outs, t)..., pos);
        }
        (std::index_sequence_for<Plain...>{});
        auto& tan = t.zero_adjoints();
        t.forward_sweep(tan);
        for (const auto& w : t.writes) {
            // the value as the plain kernel writes it, then the tangent
            E& y = *static_cast<E*>(const_cast<void*>(w.key));
            y = w.assign ? w.value : y + w.value;
            const E d = w.slot >= 0 ? tan[static_cast<size_t>(w.slot)]
                        : w.target  ? *w.target
                                    : E(0);
            t.add_to(const_cast<E*>(w.at), w.scale * d);
        }
    }
    template <size_t I, typename PT, typename IT, typename OT>
    static auto arg(const PT& plain, const IT& ins, const OT& outs, tape<E>& t) {
        using A = std::remove_cvref_t<std::tuple_element_t<I, Args>>;
        const void* i = nullptr;
        const void* o = nullptr;
        if constexpr (std::tuple_size_v < tangent_in_part < A, E >>> 0)
            i = std::get<part_index<Args, E, tangent_in_part, I>()>(ins);
        if constexpr (std::tuple_size_v < tangent_out_part < A, E >>> 0)
            o = std::get<part_index<Args, E, tangent_out_part, I>()>(outs);
        return kernel_tangent<A, E>::make(std::get<I>(plain), part_ptr<tangent_in_part<A, E>>(i),
                                          part_ptr<tangent_out_part<A, E>>(o), t);
    }
};

template <typename E, typename Fa>
struct derived_kernel_jvp_of {
    using base = derived_kernel_of<E, Fa>;
    using ins = typename kernel_parts_of<typename base::args, E, tangent_in_part,
                                         std::make_index_sequence<base::n>>::type;
    using outs = typename kernel_parts_of<typename base::args, E, tangent_out_part,
                                          std::make_index_sequence<base::n>>::type;
    using args = typename base::args;
    static constexpr size_t n = base::n;
    using type = derived_kernel_jvp<E, std::decay_t<Fa>, args, typename base::plain, ins, outs,
                                    typename base::position>;
};

template <typename E, typename Fa>
struct derived_jvp_of {
    using args = typename fn_traits<std::decay_t<Fa>>::args;
    using tangents =
        typename kernel_parts_of<args, E, jvp_part,
                                 std::make_index_sequence<std::tuple_size_v<args>>>::type;
    using type = derived_jvp<E, std::decay_t<Fa>, args, tangents>;
};

} // namespace detail

} // namespace isthmus::plugin

/// The generic form of a function template `f` for generic<...>(): `[]<typename T>() { return
/// &f<T>; }`.
#define ISTHMUS_GENERIC(F) []<typename IsthmusElement_>() { return &F<IsthmusElement_>; }
