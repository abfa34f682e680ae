// The CPU kernel launcher: position loops (the unit-stride fast loop and the cold checked loop),
// argument device checks and kernel_impl.
#pragma once

#include "isthmus/plugin/arg_convert.hpp"

namespace isthmus::plugin {

namespace detail {

// Kernel launcher: converts the arguments once per chunk, then loops over the chunk's linear
// positions with the body called directly (inlined by the compiler). Instantiated once per
// value of Checked, the call's checked mode, which the views then hold as a constant (Note
// [view checks]).
// The loop over a chunk's positions, on by-value copies of the converted arguments: their
// addresses never escape (the conversions ran out of line), so the compiler keeps the views'
// fields in registers and vectorises the body as if the views were plain pointers, and the
// checked-mode bit it stores here is a constant it folds away (Note [view checks]).
template <typename P, typename F, typename... V>
[[gnu::always_inline]] inline void position_loop(F& f, const isthmus_range& r, V... v) {
    if constexpr (std::is_integral_v<P>) {
        // See Note [the body inlined under Clang]
        for (int64_t i = r.begin; i < r.end; ++i) {
            ISTHMUS_PLUGIN_CLANG_INLINE f(v..., static_cast<P>(i));
        }
    } else {
        constexpr int N = P::size();
        P pos{};
        position_of(pos, r.begin, r);
        const int64_t last = r.dims[N - 1];
        int64_t i = r.begin;
        while (i < r.end) {
            // Run along the last dimension without carries, then carry once.
            const int64_t run = std::min<int64_t>(last - pos[N - 1], r.end - i);
            for (int64_t k = 0; k < run; ++k) {
                ISTHMUS_PLUGIN_CLANG_INLINE f(v..., pos);
                ++pos[N - 1];
            }
            i += run;
            pos[N - 1] = 0;
            for (int d = N - 2; d >= 0; --d) {
                if (++pos[d] < r.dims[d]) break;
                pos[d] = 0;
            }
        }
    }
}

// Note [unit-stride loops]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// A view's strides are runtime values, so a loop over positions indexes memory with a
// multiply the vectoriser cannot turn into vector loads. Most launches pass views that step by
// one element along their last dimension (C-contiguous arrays, rows of a matrix): for those
// the unchecked loop runs on copies whose last stride is the literal 1, a second instance of
// the loop that the compiler vectorises as a loop over plain pointers; other layouts take the
// general loop. Both compute the same values in the same order per position. The same copy
// also knows that its 'clamped, 'circular and 'mirror views have no empty dimension (checked
// once per block): their index maps then lose the test and the failure path an empty
// dimension needs, which kept the compiler from optimising the accesses (a 3x3 clamped blur
// 1.8x slower than clamping the indices by hand). Checked mode keeps one loop (it checks every
// access and is not meant to be fast).
template <typename P, typename F, typename... V>
[[gnu::always_inline]] inline void fast_position_loop(F& f, const isthmus_range& r, V... v) {
    (view_binding::assume_nonempty(v), ...);
    position_loop<P>(f, r, v...);
}

// The rank of a kernel's position type: 1 for int64_t, N for ivec<N>.
template <typename P>
constexpr int position_rank() {
    if constexpr (std::is_integral_v<P>)
        return 1;
    else
        return P::size();
}

// The interior of a stencil launch (See Note [stencil interiors]): the positions p with
// lo[d] <= p[d] < hi[d] in every dimension d.
struct interior_box {
    int64_t lo[4];
    int64_t hi[4];
};

// Fills `box` from the declared radii (the kernel's parameters) when every mapping view among
// `v` declares one; false when some does not or the interior is empty.
template <int NP, typename... V>
[[gnu::always_inline]] inline bool stencil_box(interior_box& box, const isthmus_range& r,
                                               const isthmus_param* params, const V&... v) {
    for (int d = 0; d < NP; ++d) {
        box.lo[d] = 0;
        box.hi[d] = r.dims[d];
    }
    bool declared = true;
    int index = 0;
    auto one = [&](const auto& view) {
        using W = std::remove_cvref_t<decltype(view)>;
        const uint32_t flags = params[index++].flags;
        if constexpr (view_binding::maps_indices<W>()) {
            const int64_t rad = (flags & ISTHMUS_PARAM_STENCIL_MASK) >> ISTHMUS_PARAM_STENCIL_SHIFT;
            if constexpr (W::rank < NP) {
                declared = false;
            } else {
                declared = declared && rad > 0;
                for (int d = 0; d < NP; ++d) {
                    box.lo[d] = std::max(box.lo[d], rad);
                    box.hi[d] = std::min(box.hi[d], view_binding::extent(view, d) - rad);
                }
            }
        }
    };
    (one(v), ...);
    if (!declared) return false;
    for (int d = 0; d < NP; ++d)
        if (box.lo[d] >= box.hi[d]) return false;
    return true;
}

// Positions [a, b) along the last dimension (pos gives the others), on the views `v`.
template <typename P, typename F, typename... V>
[[gnu::always_inline]] inline void span_loop(F& f, P pos, int64_t a, int64_t b, V... v) {
    if constexpr (std::is_integral_v<P>) {
        for (int64_t i = a; i < b; ++i) {
            ISTHMUS_PLUGIN_CLANG_INLINE f(v..., static_cast<P>(i));
        }
    } else {
        constexpr int N = P::size();
        pos[N - 1] = static_cast<typename P::value_type>(a);
        for (int64_t k = a; k < b; ++k) {
            ISTHMUS_PLUGIN_CLANG_INLINE f(v..., pos);
            ++pos[N - 1];
        }
    }
}

// position_loop for a stencil (See Note [stencil interiors]): each run along the last dimension
// is cut into its edges, run by `edge(pos, a, b)` (the views as given), and its interior, run by
// `inner(pos, a, b)` (the same views with the map skipped).
template <typename P, typename Edge, typename Inner>
[[gnu::always_inline]] inline void
stencil_position_loop(const isthmus_range& r, const interior_box& box, Edge& edge, Inner& inner) {
    // One call site each for the edges and the interior: three would triple the body's code,
    // and the cold checked loop would no longer inline it (Note [checked loops are cold]).
    auto cut = [&](P pos, int64_t c, int64_t e, int64_t lo, int64_t hi) {
        const int64_t l = std::min(std::max(lo, c), e);
        const int64_t at[4] = {c, l, std::min(std::max(hi, l), e), e};
        for (int part = 0; part < 3; ++part) {
            if (part == 1)
                inner(pos, at[1], at[2]);
            else
                edge(pos, at[part], at[part + 1]);
        }
    };
    if constexpr (std::is_integral_v<P>) {
        cut(P{}, r.begin, r.end, box.lo[0], box.hi[0]);
    } else {
        constexpr int N = P::size();
        P pos{};
        position_of(pos, r.begin, r);
        int64_t i = r.begin;
        while (i < r.end) {
            const int64_t c = pos[N - 1];
            const int64_t e = c + std::min<int64_t>(r.dims[N - 1] - c, r.end - i);
            bool in = true;
            for (int d = 0; d < N - 1; ++d) in = in && pos[d] >= box.lo[d] && pos[d] < box.hi[d];
            cut(pos, c, e, in ? box.lo[N - 1] : e, in ? box.hi[N - 1] : e);
            i += e - c;
            pos[N - 1] = 0;
            for (int d = N - 2; d >= 0; --d) {
                if (++pos[d] < r.dims[d]) break;
                pos[d] = 0;
            }
        }
    }
}

template <bool Checked, typename P, typename F, typename... V>
[[gnu::always_inline]] inline void run_positions(F& f, const isthmus_range& r,
                                                 const isthmus_param* params, V... v) {
    ((v = view_binding::rebound<Checked>(v)), ...);
    if constexpr ((view_binding::maps_indices<V>() || ...)) {
        // See Note [stencil interiors].
        constexpr int NP = position_rank<P>();
        interior_box box;
        if (stencil_box<NP>(box, r, params, v...)) {
            if constexpr (!Checked) {
                if ((view_binding::unit_inner(v) && ...) &&
                    !(view_binding::empty_modifier_view(v) || ...)) {
                    (view_binding::assume_nonempty(v), ...);
                    auto edge = [&f, ... e = view_binding::with_unit_inner(v)](P pos, int64_t a,
                                                                               int64_t b) {
                        span_loop<P>(f, pos, a, b, e...);
                    };
                    auto inner =
                        [&f, ... w = view_binding::interior(view_binding::with_unit_inner(v), NP)](
                            P pos, int64_t a, int64_t b) { span_loop<P>(f, pos, a, b, w...); };
                    stencil_position_loop<P>(r, box, edge, inner);
                    return;
                }
            }
            auto edge = [&f, v...](P pos, int64_t a, int64_t b) {
                span_loop<P>(f, pos, a, b, v...);
            };
            auto inner = [&f, ... w = view_binding::interior(v, NP)](P pos, int64_t a, int64_t b) {
                span_loop<P>(f, pos, a, b, w...);
            };
            stencil_position_loop<P>(r, box, edge, inner);
            return;
        }
    }
    if constexpr (!Checked) {
        if ((view_binding::unit_inner(v) && ...) &&
            !(view_binding::empty_modifier_view(v) || ...)) {
            fast_position_loop<P>(f, r, view_binding::with_unit_inner(v)...);
            return;
        }
    }
    position_loop<P>(f, r, v...);
}

template <bool Checked, typename F, typename Tuple, size_t... I>
void kernel_loop(F& f, const isthmus_range& r, const isthmus_value* args,
                 const isthmus_param* params, std::index_sequence<I...>) {
    using P = std::remove_cvref_t<std::tuple_element_t<sizeof...(I), Tuple>>;
    // See Note [converted arguments without std::tuple]
    auto converted = convert_args<Tuple>(args, std::index_sequence<I...>{});
    (view_binding::bind(arg_at<I>(converted), static_cast<int32_t>(I), Checked), ...);
    check_launch(f, arg_at<I>(converted)...); // See Note [launch checks]
    if constexpr (quick_build<F>())
        position_loop<P>(f, r, arg_at<I>(converted)...); // See Note [the quick build's launcher]
    else
        run_positions<Checked, P>(f, r, params, arg_at<I>(converted)...);
}

// Note [checked loops are cold]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Checked mode is for finding a kernel's bad index (Note [view checks]), and its loop checks every
// access, so it never earns -O3's vectoriser, yet it was optimised like the fast loop in every
// plugin compile: a third of a small kernel's compile. Marked cold, it is optimised for size.
template <typename F, typename Tuple, size_t... I>
[[gnu::cold, gnu::noinline]] void
checked_kernel_loop(F& f, const isthmus_range& r, const isthmus_value* args,
                    const isthmus_param* params, std::index_sequence<I...> is) {
    kernel_loop<true, F, Tuple>(f, r, args, params, is);
}

// Note [the fast loop is hot]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// kernel_impl's unchecked loop once shared a function with its argument checks, its error
// paths and the cold checked loop, and GCC's partitioning moved it to kernel_impl's .cold part;
// GCC does not inline into cold code, so the body became an out-of-line call per position that
// copied every view (saxpy over 10M floats 40x NumPy's time). The loop is a function of its
// own, marked hot, and flattened: everything it calls, the body first, is inlined into it, so
// the loop is the one a hand-written loop over the views compiles to (unit strides vectorise
// where the body allows). tests/plugins_cpp/test_kernel_codegen.cpp checks the object code.
template <typename F, typename Tuple, size_t... I>
[[gnu::hot, gnu::noinline, gnu::flatten]] void
fast_kernel_loop(F& f, const isthmus_range& r, const isthmus_value* args,
                 const isthmus_param* params, std::index_sequence<I...> is) {
    kernel_loop<false, F, Tuple>(f, r, args, params, is);
}

/// Throws type_error unless a kernel call has `n` arguments (`nargs`).
ISTHMUS_PLUGIN_SUPPORT void check_arg_count(const isthmus_kernel* self, size_t n, int32_t nargs);
/// Throws value_error when argument `index`, a tensor, lives on another device than the launcher
/// (`type`, `id`): a host bug otherwise, since the host locks tensors on the launcher's device.
ISTHMUS_PLUGIN_SUPPORT_CALL void check_device(const isthmus_kernel* self, const isthmus_value& v,
                                              size_t index, int32_t type, int32_t id);

/// Checks that the tensors the body sees through its views and isthmus_tensor parameters live
/// where the launcher runs.
template <typename Tuple, size_t... I>
void check_devices(const isthmus_kernel* self, const isthmus_value* args, int32_t type, int32_t id,
                   std::index_sequence<I...>) {
    auto one = [&]<typename P>(size_t i) {
        using T = std::remove_cvref_t<P>;
        if constexpr (is_view<T>::value || std::is_same_v<T, isthmus_tensor>)
            check_device(self, args[i], i, type, id);
    };
    (one.template operator()<std::tuple_element_t<I, Tuple>>(I), ...);
    (void)one;
}

// Note [the quick build's launcher]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The quick build of a kernel-only plugin (Note [compile tiers] in plugins/src/compile_tiers.cpp)
// is compiled at -O1 for its first answer, and replaced by the optimised build as soon as that is
// ready, so it has no use for the loops that make the optimised launcher fast and cost compile
// time: the flattened loop on unit-stride copies, the stencil interiors and the cold checked loop.
// Its launcher is kernel_loop<false> running position_loop alone (the general loop over the views
// as given: the same values per position, Note [unit-stride loops]), which cut the saxpy plugin's
// -O1 compile by a seventh (126 -> 109 ms), and by another 15% of cc1plus's instructions once
// run_positions, which still instantiated the unit-stride copy of the loop, was left out too.
// Without the checked loop, the quick build does not declare ISTHMUS_FEATURE_CHECKED_MODE: a
// checked launch waits for the optimised build instead. It also leaves out check_devices (3% of
// its instructions): it guards against a host that passes a tensor on another device than the
// launcher's, and the quick build is only ever loaded by the host that compiled it, which locks
// every tensor on the CPU before a CPU launch. The compile_string driver marks the quick build's
// translation unit by including isthmus/plugin/quick_build.hpp after the precompiled layer, which
// specialises tier_policy for this_build; the layer's own text (and its precompiled header) is
// the same for both builds.

template <typename F>
int kernel_impl(const isthmus_kernel* self, isthmus_call* call, const isthmus_range* range,
                const isthmus_value* args, int32_t nargs) noexcept {
    using tr = fn_traits<std::decay_t<F>>;
    constexpr size_t n = std::tuple_size_v<typename tr::args> - 1;
    call_scope scope(call, self->params, self->nparams);
    try {
        if (ISTHMUS_UNLIKELY(static_cast<size_t>(nargs) != n)) check_arg_count(self, n, nargs);
        F& f = *static_cast<F*>(self->data);
        if constexpr (quick_build<F>()) { // See Note [the quick build's launcher]
            kernel_loop<false, F, typename tr::args>(f, *range, args, self->params,
                                                     std::make_index_sequence<n>{});
        } else {
            check_devices<typename tr::args>(self, args, ISTHMUS_DEVICE_CPU, 0,
                                             std::make_index_sequence<n>{});
            if (ISTHMUS_UNLIKELY(call_flags(call) & ISTHMUS_CALL_CHECKED))
                checked_kernel_loop<F, typename tr::args>(f, *range, args, self->params,
                                                          std::make_index_sequence<n>{});
            else
                fast_kernel_loop<F, typename tr::args>(f, *range, args, self->params,
                                                       std::make_index_sequence<n>{});
        }
        return 0;
    } catch (...) {
        return report(call);
    }
}

} // namespace detail

} // namespace isthmus::plugin
