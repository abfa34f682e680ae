// Derivatives of generic kernels: the derived backward kernel (<name>_vjp, Note [derived kernels]
// in active_view.hpp) and forward mode (<name>_jvp, Note [derived forward mode] in derive.hpp, on
// dual numbers).
#pragma once

#include "isthmus/plugin/derive.hpp"
#include "isthmus/plugin/dual_view.hpp"
#include "isthmus/plugin/kernel_cuda.hpp"

namespace isthmus::plugin {

namespace detail {

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
    static void check(const P&, const void*, const void*) {}
    ISTHMUS_HD static P make(const P& p, const void*, const void*, tape<E>&) { return p; }
};
template <typename E, int N, access A>
struct kernel_param<view<const active<E>, N, A>, E> {
    using plain = view<const E, N, A>;
    using dy = std::tuple<>;
    using grad = std::tuple<view<E, N>>;
    static void check(const plain& x, const void*, const view<E, N>* g) {
        check_part_shape<N>(*g, x, "a gradient", "its input");
    }
    ISTHMUS_HD static view<const active<E>, N, A> make(const plain& x, const void*,
                                                       const view<E, N>* g, tape<E>& t) {
        return {x, *g, t};
    }
};
template <typename E, int N, access A>
struct kernel_param<view<active<E>, N, A>, E> {
    using plain = view<E, N, A>;
    using dy = std::tuple<view<const E, N>>;
    using grad = std::tuple<>;
    static void check(const plain& y, const view<const E, N>* dy, const void*) {
        check_part_shape<N>(*dy, y, "an output gradient", "its output");
    }
    ISTHMUS_HD static view<active<E>, N, A> make(const plain& y, const view<const E, N>* dy,
                                                 const void*, tape<E>& t) {
        return {y, *dy, t};
    }
};
template <typename E>
struct kernel_param<active<E>, E> {
    using plain = E;
    using dy = std::tuple<>;
    using grad = std::tuple<view<E, 0>>;
    static void check(E, const void*, const void*) {}
    ISTHMUS_HD static active<E> make(E v, const void*, const view<E, 0>* g, tape<E>& t) {
        return active<E>::leaf(t, v, g->data());
    }
};
template <typename E, int K>
struct kernel_param<vec<active<E>, K>, E> {
    using plain = vec<E, K>;
    using dy = std::tuple<>;
    using grad = std::tuple<view<E, 1>>;
    static void check(const plain&, const void*, const view<E, 1>* g) {
        if (g->size(0) != K)
            throw value_error(cat("the gradient of a vec", K, " has ", g->size(0), " elements"));
    }
    ISTHMUS_HD static vec<active<E>, K> make(const plain& v, const void*, const view<E, 1>* g,
                                             tape<E>& t) {
        vec<active<E>, K> r{};
        for (int k = 0; k < K; ++k) r[k] = active<E>::leaf(t, v[k], g->data() + k * g->stride(0));
        return r;
    }
};

template <typename P, typename E>
using dy_part = typename kernel_param<P, E>::dy;
template <typename P, typename E>
using grad_part = typename kernel_param<P, E>::grad;

/// Parameter J's derived part among `parts` (the derived kernel's pointers to its Part
/// parameters, in order), or a null void pointer when Part<A_J, E> adds none.
template <template <typename, typename> class Part, typename Args, typename E, size_t J,
          typename Parts>
ISTHMUS_HD auto part_of(const Parts& parts) {
    using A = std::remove_cvref_t<std::tuple_element_t<J, Args>>;
    if constexpr (std::tuple_size_v < Part < A, E >>> 0)
        return std::get<part_index<Args, E, Part, J>()>(parts);
    else
        return static_cast<const void*>(nullptr);
}

template <typename Tuple, typename Seq>
struct tuple_prefix;
template <typename Tuple, size_t... I>
struct tuple_prefix<Tuple, std::index_sequence<I...>> {
    using type = std::tuple<std::tuple_element_t<I, Tuple>...>;
};
/// The plain parameters a derived kernel has in place of its form's parameters Args, as
/// Param<A, E>::plain names them.
template <template <typename, typename> class Param, typename Args, typename E>
struct plain_params;
template <template <typename, typename> class Param, typename... A, typename E>
struct plain_params<Param, std::tuple<A...>, E> {
    using type = std::tuple<typename Param<std::remove_cvref_t<A>, E>::plain...>;
};

/// An output view that is also a differentiable input (the same first element) would be
/// differentiated as if the input were unchanged (See Note [derived kernels]): refused. Args: the
/// derived form's parameters, whose outputs have a derived part Out and whose differentiable
/// inputs one In; `plain` the derived kernel's plain arguments.
template <template <typename, typename> class Out, template <typename, typename> class In,
          typename Args, typename E, typename PT, size_t... I>
void refuse_aliases(const PT& plain, std::index_sequence<I...>) {
    const void* outs[sizeof...(I) + 1] = {};
    const void* ins[sizeof...(I) + 1] = {};
    size_t no = 0, ni = 0;
    auto note = [&]<size_t J>() {
        using A = std::remove_cvref_t<std::tuple_element_t<J, Args>>;
        if constexpr (std::tuple_size_v < Out < A, E >>> 0)
            outs[no++] = std::get<J>(plain).data();
        else if constexpr (requires { A::rank; } && std::tuple_size_v<In<A, E>> > 0)
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

// Note [derived backward on the GPU]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The backward derived from a generic kernel whose body runs on the GPU (a device kernel, Note
// [device kernels] in kernel_cuda.hpp) gets the CUDA launcher too, in a plugin nvcc compiles: the
// active numbers, their views, the tape and the sweep are __host__ __device__, and a position runs
// as on the CPU (See Note [derived kernels] in active_view.hpp) in one GPU thread, its tape in the
// thread's local memory and its leaves' gradients added with atomicAdd. A GPU thread's tape does
// not grow: it holds 64 nodes and 8 output writes (a 3x3 stencil records 8 nodes), and a position
// that needs more stops its thread and records the failure (Note [checked access on the GPU] in
// access.hpp), so every GPU launch of a derived backward waits for its record and raises a
// ValueError that says so; the same kernel on the CPU, whose tape grows, computes it. The gradient
// sums' order is the GPU's, as with any atomics; with_jvp's forward mode has no tape (See Note
// [derived forward mode on the GPU]).

// Note [derived forward mode on the GPU]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The forward mode of a generic kernel whose body runs on the GPU (a device kernel, Note [device
// kernels] in kernel_cuda.hpp) gets the CUDA launcher too, in a plugin nvcc compiles: dual
// numbers, their views, the write log and the code that runs a position are __host__ __device__,
// and a tangent added with `+=` is an atomicAdd there. The write log of a GPU thread holds 32
// writes (on the CPU it grows): a position that writes more output elements applies its earlier
// writes when the log fills, so an element it assigns again after that keeps both tangents (a
// kernel that assigns each element once, the usual case, is unaffected).

// Parameter J of a derived form at a position (See run_derived).
template <template <typename, typename> class Param, template <typename, typename> class First,
          template <typename, typename> class Second, typename Args, typename E, size_t J,
          typename PT, typename FT, typename ST, typename Rec>
ISTHMUS_HD auto derived_arg(const PT& plain, const FT& first, const ST& second, Rec& t) {
    using A = std::remove_cvref_t<std::tuple_element_t<J, Args>>;
    return Param<A, E>::make(std::get<J>(plain), part_of<First, Args, E, J>(first),
                             part_of<Second, Args, E, J>(second), t);
}

/// Runs the derived form `fa` (the body with active<E> or dual<E>) at `pos`: its parameter I is
/// Param<A_I, E>::make(the plain argument, its First part, its Second part, t), where First and
/// Second name the two groups of parameters the derived kernel adds (the output gradients and the
/// input gradients of a backward; the input and output tangents of a forward mode) and t is what
/// the position records on (a tape, a write log).
template <template <typename, typename> class Param, template <typename, typename> class First,
          template <typename, typename> class Second, typename Args, typename E, typename Fa,
          typename PT, typename FT, typename ST, typename P, typename Rec, size_t... I>
ISTHMUS_HD void run_derived(const Fa& fa, const PT& plain, const FT& first, const ST& second, P pos,
                            Rec& t, std::index_sequence<I...>) {
    fa(derived_arg<Param, First, Second, Args, E, I>(plain, first, second, t)..., pos);
}

/// Checks run_derived's derived parts once for a launch (See Note [launch checks] in
/// isthmus/plugin/arg_convert.hpp): Param<A_I, E>::check(the plain argument, its First part, its
/// Second part), which refuses a part not shaped like what it belongs to.
template <template <typename, typename> class Param, template <typename, typename> class First,
          template <typename, typename> class Second, typename Args, typename E, typename PT,
          typename FT, typename ST, size_t... I>
void check_derived(const PT& plain, const FT& first, const ST& second, std::index_sequence<I...>) {
    auto one = [&]<size_t J>() {
        using A = std::remove_cvref_t<std::tuple_element_t<J, Args>>;
        Param<A, E>::check(std::get<J>(plain), part_of<First, Args, E, J>(first),
                           part_of<Second, Args, E, J>(second));
    };
    (one.template operator()<I>(), ...);
}

template <typename E, typename Fa, typename Args, typename Plain, typename Dys, typename Grads,
          typename P>
struct derived_kernel;
/// A generic kernel's derived form (See Note [derived kernels]): Fa is the body instantiated
/// with active<E>, Args its parameters less the position P.
template <typename E, typename Fa, typename Args, typename... Plain, typename... Dy, typename... G,
          typename P>
struct derived_kernel<E, Fa, Args, std::tuple<Plain...>, std::tuple<Dy...>, std::tuple<G...>, P> {
    Fa fa;
    /// Once per launch (See Note [launch checks] in isthmus/plugin/arg_convert.hpp).
    [[gnu::noinline]] void check_launch(const Plain&... p, const Dy&... dy, const G&... g) const {
        const std::tuple<const Plain&...> plain(p...);
        refuse_aliases<dy_part, grad_part, Args, E>(plain, std::index_sequence_for<Plain...>{});
        check_derived<kernel_param, dy_part, grad_part, Args, E>(
            plain, std::tuple<const Dy*...>(&dy...), std::tuple<const G*...>(&g...),
            std::index_sequence_for<Plain...>{});
    }
    /// A launch on the GPU waits for its failure record (See Note [derived backward on the GPU]).
    static constexpr bool device_launch_waits = true;
    ISTHMUS_HD void operator()(Plain... p, Dy... dy, G... g, P pos) const {
        tape<E> t; // on the stack: a position's tape fits in its inline nodes
        t.shared = true;
        const std::tuple<const Plain&...> plain(p...);
        run_derived<kernel_param, dy_part, grad_part, Args, E>(
            fa, plain, std::tuple<const Dy*...>(&dy...), std::tuple<const G*...>(&g...), pos, t,
            std::index_sequence_for<Plain...>{});
        auto& adj = t.zero_adjoints();
        for (const auto& w : t.writes) t.add_gradient(adj, w.ref, w.scale * *w.at);
        t.sweep(adj);
    }
};

template <typename E, typename Fa>
struct derived_kernel_of {
    using all = typename fn_traits<std::decay_t<Fa>>::args;
    static constexpr size_t n = std::tuple_size_v<all> - 1;
    using args = typename tuple_prefix<all, std::make_index_sequence<n>>::type;
    using position = std::tuple_element_t<n, all>;
    using plain = typename plain_params<kernel_param, args, E>::type;
    using dys = typename kernel_parts_of<args, E, dy_part, std::make_index_sequence<n>>::type;
    using grads = typename kernel_parts_of<args, E, grad_part, std::make_index_sequence<n>>::type;
    using type = derived_kernel<E, std::decay_t<Fa>, args, plain, dys, grads, position>;
};
// ---- forward mode of kernels (Note [derived forward mode]) ----

/// How a parameter of a kernel's dual form takes part in its forward mode: `plain` is the
/// parameter the derived kernel has in its place; a differentiable input (a view of const
/// dual<E>, a dual<E>, a vec of them) adds its tangent `in` (read: a view shaped like it, a 0-d
/// tensor for a number, one of K elements for a vec<K>); an output (a view of dual<E>) adds its
/// tangent `out` (added to). Anything else passes through.
template <typename P, typename E>
struct kernel_tangent {
    using plain = P;
    using in = std::tuple<>;
    using out = std::tuple<>;
    static void check(const P&, const void*, const void*) {}
    ISTHMUS_HD static P make(const P& p, const void*, const void*, write_log<E>&) { return p; }
};
template <typename E, int N, access A>
struct kernel_tangent<view<const dual<E>, N, A>, E> {
    using plain = view<const E, N, A>;
    using in = std::tuple<view<const E, N>>;
    using out = std::tuple<>;
    static void check(const plain& x, const view<const E, N>* dx, const void*) {
        check_part_shape<N>(*dx, x, "a tangent", "its input");
    }
    ISTHMUS_HD static view<const dual<E>, N, A> make(const plain& x, const view<const E, N>* dx,
                                                     const void*, write_log<E>&) {
        return {x, *dx};
    }
};
template <typename E, int N, access A>
struct kernel_tangent<view<dual<E>, N, A>, E> {
    using plain = view<E, N, A>;
    using in = std::tuple<>;
    using out = std::tuple<view<E, N>>;
    static void check(const plain& y, const void*, const view<E, N>* dy) {
        check_part_shape<N>(*dy, y, "an output tangent", "its output");
    }
    ISTHMUS_HD static view<dual<E>, N, A> make(const plain& y, const void*, const view<E, N>* dy,
                                               write_log<E>& log) {
        return {y, *dy, log};
    }
};
template <typename E>
struct kernel_tangent<dual<E>, E> {
    using plain = E;
    using in = std::tuple<view<const E, 0>>;
    using out = std::tuple<>;
    static void check(E, const void*, const void*) {}
    ISTHMUS_HD static dual<E> make(E v, const view<const E, 0>* dx, const void*, write_log<E>&) {
        return {v, *dx->data()};
    }
};
template <typename E, int K>
struct kernel_tangent<vec<dual<E>, K>, E> {
    using plain = vec<E, K>;
    using in = std::tuple<view<const E, 1>>;
    using out = std::tuple<>;
    static void check(const plain&, const view<const E, 1>* dx, const void*) {
        if (dx->size(0) != K)
            throw value_error(cat("the tangent of a vec", K, " has ", dx->size(0), " elements"));
    }
    ISTHMUS_HD static vec<dual<E>, K> make(const plain& v, const view<const E, 1>* dx, const void*,
                                           write_log<E>&) {
        vec<dual<E>, K> r{};
        for (int k = 0; k < K; ++k) r[k] = dual<E>(v[k], dx->data()[k * dx->stride(0)]);
        return r;
    }
};
template <typename P, typename E>
using tangent_in_part = typename kernel_tangent<P, E>::in;
template <typename P, typename E>
using tangent_out_part = typename kernel_tangent<P, E>::out;

template <typename E, typename Fd, typename Args, typename Plain, typename Ins, typename Outs,
          typename P>
struct derived_kernel_jvp;
/// A generic kernel's forward mode (See Note [derived forward mode]): at each position, the body
/// with dual<E> (Fd), its writes logged and applied at the position's end (See
/// detail::write_log).
template <typename E, typename Fd, typename Args, typename... Plain, typename... Ti, typename... To,
          typename P>
struct derived_kernel_jvp<E, Fd, Args, std::tuple<Plain...>, std::tuple<Ti...>, std::tuple<To...>,
                          P> {
    Fd fd;
    /// Once per launch (See Note [launch checks] in isthmus/plugin/arg_convert.hpp).
    [[gnu::noinline]] void check_launch(const Plain&... p, const Ti&... ti, const To&... to) const {
        const std::tuple<const Plain&...> plain(p...);
        refuse_aliases<tangent_out_part, tangent_in_part, Args, E>(
            plain, std::index_sequence_for<Plain...>{});
        check_derived<kernel_tangent, tangent_in_part, tangent_out_part, Args, E>(
            plain, std::tuple<const Ti*...>(&ti...), std::tuple<const To*...>(&to...),
            std::index_sequence_for<Plain...>{});
    }
    ISTHMUS_HD void operator()(Plain... p, Ti... ti, To... to, P pos) const {
        write_log<E> log; // on the stack: a position's writes fit in its inline entries
        const std::tuple<const Plain&...> plain(p...);
        run_derived<kernel_tangent, tangent_in_part, tangent_out_part, Args, E>(
            fd, plain, std::tuple<const Ti*...>(&ti...), std::tuple<const To*...>(&to...), pos, log,
            std::index_sequence_for<Plain...>{});
        log.apply();
    }
};

} // namespace detail

#if defined(__CUDACC__)
/// The backward derived from a kernel whose body runs on the GPU runs there too (See Note
/// [derived backward on the GPU]).
template <typename E, typename Fa, typename Args, typename Plain, typename Dys, typename Grads,
          typename P>
struct is_device_kernel<detail::derived_kernel<E, Fa, Args, Plain, Dys, Grads, P>>
    : is_device_kernel<Fa> {};
/// The forward mode of a kernel whose body runs on the GPU runs there too (See Note [derived
/// forward mode on the GPU]).
template <typename E, typename Fd, typename Args, typename Plain, typename Ins, typename Outs,
          typename P>
struct is_device_kernel<detail::derived_kernel_jvp<E, Fd, Args, Plain, Ins, Outs, P>>
    : is_device_kernel<Fd> {};
#endif

namespace detail {

/// The forward mode of the generic kernel whose dual form is Fd.
template <typename E, typename Fd>
struct derived_kernel_jvp_of {
    using all = typename fn_traits<std::decay_t<Fd>>::args;
    static constexpr size_t n = std::tuple_size_v<all> - 1;
    using args = typename tuple_prefix<all, std::make_index_sequence<n>>::type;
    using position = std::tuple_element_t<n, all>;
    using plain = typename plain_params<kernel_tangent, args, E>::type;
    using ins =
        typename kernel_parts_of<args, E, tangent_in_part, std::make_index_sequence<n>>::type;
    using outs =
        typename kernel_parts_of<args, E, tangent_out_part, std::make_index_sequence<n>>::type;
    using type = derived_kernel_jvp<E, std::decay_t<Fd>, args, plain, ins, outs, position>;
};

} // namespace detail

} // namespace isthmus::plugin
