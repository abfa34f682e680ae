// The plugin author layer's calls: function launchers (result conversion, function_impl),
// callback::call and call_python; includes the CPU and CUDA kernel launchers.
#pragma once

#include "isthmus/plugin/values.hpp"

#include "isthmus/plugin/callables.hpp"
#include "isthmus/plugin/kernel_cpu.hpp"
#include "isthmus/plugin/kernel_cuda.hpp"

namespace isthmus::plugin {

namespace detail {

template <typename F, typename R, typename Tuple, size_t... I>
R apply_args(F& f, isthmus_call* call, const isthmus_value* args, std::index_sequence<I...>) {
    constexpr bool has_views =
        (is_view<std::remove_cvref_t<std::tuple_element_t<I, Tuple>>>::value || ...);
    if constexpr (has_views) {
        // Views learn their argument position and the call's checked mode (Note [view checks]).
        // See Note [converted arguments without std::tuple]
        auto converted = convert_args<Tuple>(args, std::index_sequence<I...>{});
        const bool checked_mode = (call_flags(call) & ISTHMUS_CALL_CHECKED) != 0;
        (view_binding::bind(arg_at<I>(converted), static_cast<int32_t>(I), checked_mode), ...);
        return f(std::move(arg_at<I>(converted))...);
    } else {
        (void)call;
        return f(get_arg<std::tuple_element_t<I, Tuple>>(args, I)...);
    }
}

/// A function's result as an ABI value.
///
/// Note [view results]
/// ~~~~~~~~~~~~~~~~~~~
/// A view borrows memory of the call's arguments and keeps its shape and strides in itself, so
/// handed to the host as it is the descriptor would point into a dead object and at memory the
/// result does not own. A view result is therefore copied into a new tensor of the host's (what
/// NumPy's functions return for a computed array); other results convert as to_abi does.
template <typename R>
isthmus_value result_to_abi(const R& r) {
    if constexpr (is_view<R>::value) {
        using E = typename R::value_type;
        constexpr int N = R::rank;
        int64_t shape[N > 0 ? N : 1] = {};
        for (int d = 0; d < N; ++d) shape[d] = r.size(d);
        tensor<E, N> out(shape, N);
        int64_t idx[N > 0 ? N : 1] = {};
        const int64_t n = out.numel();
        for (int64_t i = 0; i < n; ++i) {
            int64_t from = 0, to = 0;
            for (int d = 0; d < N; ++d) {
                from += idx[d] * r.stride(d);
                to += idx[d] * out.v().stride(d);
            }
            out.data()[to] = r.data()[from];
            for (int d = N - 1; d >= 0; --d) {
                if (++idx[d] < shape[d]) break;
                idx[d] = 0;
            }
        }
        return out.raw();
    } else if constexpr (is_tuple_like<R>::value) {
        // each element as a result of its own: views copied, tensors handed over
        return tuple_to_abi(
            r, [](const auto& e) { return result_to_abi<std::remove_cvref_t<decltype(e)>>(e); });
    } else {
        return to_abi<R>(r);
    }
}

template <typename F>
int function_impl(const isthmus_function* self, isthmus_call* call, const isthmus_value* args,
                  int32_t nargs, isthmus_value* result) noexcept {
    using tr = fn_traits<std::decay_t<F>>;
    using R = typename tr::result;
    constexpr size_t n = std::tuple_size_v<typename tr::args>;
    // (a method's parameter table leaves out the instance, which comes first)
    const auto skip = static_cast<int32_t>(n) - (self->nparams < 0 ? 0 : self->nparams);
    call_scope scope(call, self->params, self->nparams, skip);
    try {
        if (static_cast<size_t>(nargs) != n)
            throw type_error(cat(self->signature, ": expected ", n, " argument(s), got ", nargs));
        F& f = *static_cast<F*>(self->data);
        if constexpr (std::is_void_v<R>) {
            apply_args<F, R, typename tr::args>(f, call, args, std::make_index_sequence<n>{});
            result->kind = ISTHMUS_VALUE_NONE;
        } else {
            *result = result_to_abi<R>(
                apply_args<F, R, typename tr::args>(f, call, args, std::make_index_sequence<n>{}));
        }
        return 0;
    } catch (...) {
        return report(call);
    }
}

} // namespace detail

namespace detail {

/// Runs `fn(call)` with the running call's context, or a fresh one from begin_call when none
/// runs on this thread (a plugin thread); throws the recorded error when fn returns non-zero.
template <typename F>
void with_call(const char* what, F&& fn) {
    isthmus_call* c = t_state.call;
    isthmus_call* own = nullptr;
    if (!c) {
        if (!g_host || !g_host->begin_call)
            throw error(cat("isthmus::plugin: cannot ", what, " outside a host call"));
        own = c = g_host->begin_call(g_host);
        if (!c) throw error(cat("isthmus::plugin: the host gave no call context to ", what));
    }
    const int rc = fn(c);
    if (own) {
        char msg[1024] = {0};
        const int32_t code = c->host->end_call(own, msg, sizeof msg);
        if (rc != 0 || code != 0) throw error(msg, code ? code : ISTHMUS_ERR_RUNTIME);
    } else if (rc != 0) {
        // The host recorded the error (with the original Python exception) in this call; unwind
        // to the plugin boundary, whose report adds nothing (the first error wins).
        throw error(cat("isthmus::plugin: ", what, " failed"));
    }
}

/// Converts a host result to R: numbers, std::string, views (valid until the running call
/// returns), isthmus_value as it is, void to drop it.
template <typename R>
R result_as(const isthmus_value& v) {
    if constexpr (std::is_void_v<R>)
        return;
    else
        return arg_caster<R>::get(v);
}

} // namespace detail

/// Calls the host callable with C++ arguments (numbers, strings, views, isthmus_values) and
/// converts its result to R: `double y = cb.call<double>(x, 2.0);`. A Python exception raised by
/// the callable propagates as a C++ exception and reaches a Python caller as itself.
template <typename R, typename... A>
R callback::call(const A&... args) const {
    if (!cb_) throw value_error("isthmus::plugin::callback: calling an empty callback");
    const isthmus_value vs[sizeof...(A) + 1] = {detail::to_abi(args)..., isthmus_value{}};
    isthmus_value r{};
    invoke(vs, static_cast<int32_t>(sizeof...(A)), &r);
    return detail::result_as<R>(r);
}

/// Note [call_python in plugins]
/// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
/// Calls a Python function by its qualified name through the host (isthmus_host.call_python), with
/// no link to Python or libisthmus: `double n = ip::call_python<double>("numpy.linalg.norm", x);`
/// for a view `x`. The module is imported ("numpy.linalg", else "numpy"), the host takes the GIL
/// (so this works from functions called by Python and from parallel_do bodies alike); arguments are
/// numbers, strings, views (copied for Python) and isthmus_values; the result converts to R as in
/// callback::call (a tensor result as a read-only view, valid until the running call returns).
/// Throws when the host has no Python; a Python exception reaches a Python caller as itself.
template <typename R = void, typename... A>
R call_python(const char* qualified_name, const A&... args) {
    const isthmus_value vs[sizeof...(A) + 1] = {detail::to_abi(args)..., isthmus_value{}};
    isthmus_value r{};
    detail::with_call("call_python", [&](isthmus_call* c) {
        const isthmus_host* h = c->host;
        if (h->struct_size < offsetof(isthmus_host, call_python) + sizeof(h->call_python) ||
            !h->call_python)
            throw error("isthmus::plugin::call_python: this host does not offer Python");
        return h->call_python(c, qualified_name, vs, static_cast<int32_t>(sizeof...(A)), &r);
    });
    return detail::result_as<R>(r);
}

} // namespace isthmus::plugin
