// The header-only C++ layer for plugin authors: typed functions, kernels, views, object types.
#pragma once

// Note [author layer]
// ~~~~~~~~~~~~~~~~~~~
// This header depends on plugin_abi.h and the standard library only, so a plugin links neither
// libisthmus nor Python. It turns typed C++ callables into the C descriptors of the ABI: argument
// conversion is generated per parameter type at compile time, kernels get a launcher whose
// per-element loop calls the body directly (inlined; the host never calls per element), and every
// C++ exception is caught at the boundary and reported as a message through the host's set_error,
// never propagated into the host.
//
//     #include <isthmus/plugin.hpp>
//     namespace ip = isthmus::plugin;
//     double add(double a, double b) { return a + b; }
//     ISTHMUS_PLUGIN(example, m) {
//         m.def("add", &add, {"a", "b"}, "Adds two numbers.");
//         m.kernel("scale", [](ip::view<const float, 1> x, ip::view<float, 1> y, float s,
//                              ip::ivec<1> pos) { y(pos[0]) = s * x(pos[0]); }, {"x", "y", "s"});
//     }

#if defined(__CUDACC_RTC__)
// NVRTC's device pass compiles the kernels declared with ISTHMUS_KERNEL and nothing of the host
// side (Note [NVRTC plugins] in plugins/src/nvrtc_compile.cpp).
#include "isthmus/plugin/device.hpp"
#elif defined(ISTHMUS_PLUGIN_LEAN)
// A kernel-only compile (Note [kernel-only plugins]): the module is module_base.
#if !defined(ISTHMUS_PLUGIN_SEPARATE)
#error "ISTHMUS_PLUGIN_LEAN needs ISTHMUS_PLUGIN_SEPARATE (its support code is the support object)"
#endif
#include "isthmus/plugin/module_base.hpp"
namespace isthmus::plugin {
using module = module_base;
} // namespace isthmus::plugin
#else

#include "isthmus/plugin/calls.hpp"
#include "isthmus/plugin/derive_kernel.hpp"
#include "isthmus/plugin/module_base.hpp"

namespace isthmus::plugin {

/// Names of a function's parameters, in order: `{"a", "x"}`.
using names = std::vector<std::string>;

class module;

/// Registers an object type: constructor, fields, methods and events.
template <typename T>
class type_builder {
public:
    type_builder(module& m, isthmus_type& t) : m_(m), t_(t) {}
    /// The constructor, exposed as a function named like the type.
    template <typename... A>
    type_builder& ctor(names params = {}, const char* doc = nullptr);
    /// A field: a data member, readable and writable.
    template <typename V>
    type_builder& field(const char* name, V T::*member);
    /// A method: a member function (called on the instance).
    template <typename R, typename... A>
    type_builder& method(const char* name, R (T::*fn)(A...), names params = {},
                         const char* doc = nullptr);
    template <typename R, typename... A>
    type_builder& method(const char* name, R (T::*fn)(A...) const, names params = {},
                         const char* doc = nullptr);
    /// An event: a data member of type event<...>.
    template <typename... A>
    type_builder& event(const char* name, isthmus::plugin::event<A...> T::*member);

private:
    // Both method overloads: `fn` a member function pointer, const or not.
    template <typename R, typename... A, typename F>
    type_builder& add_method(const char* name, F fn, names params, const char* doc);

    plugin::module& m_;
    isthmus_type& t_;
};

namespace detail {
/// Everything a module registers, behind module_base's pointer (the support code owns it).
struct module_state {
    struct members {
        std::vector<isthmus_field> fields;
        std::vector<isthmus_function> methods;
        std::vector<isthmus_event> events;
    };
    struct members_map {
        std::vector<std::pair<const isthmus_type*, members>> v;
        members& operator[](const isthmus_type* t) {
            for (auto& [k, m] : v)
                if (k == t) return m;
            return v.emplace_back(t, members{}).second;
        }
        using iterator = std::vector<std::pair<const isthmus_type*, members>>::iterator;
        iterator begin() { return v.begin(); }
        iterator end() { return v.end(); }
    };
    /// A kept allocation and how to free it.
    struct kept {
        void* p;
        void (*drop)(void*);
    };

    storage st;
    isthmus_plugin desc{};
    std::vector<isthmus_function> functions;
    std::vector<isthmus_kernel> kernels;
    std::deque<isthmus_type> types;
    std::vector<isthmus_type> flat_types;
    members_map type_members;
    std::vector<void (*)(const isthmus_type*, const isthmus_type*)> retargets;
    std::vector<kept> kept_objects;
};
} // namespace detail

/// The plugin being described: functions, kernels and object types.
// (No line of this class starts with the word `module`: nvcc's C++20 front end would read it as
// a module declaration; hence the `inline` and `plugin::` prefixes.)
class module : public module_base {
public:
    using module_base::kernel;
    using module_base::module_base;

    /// A function; several with one name form an overload set (the host takes the first whose
    /// parameter types match, e.g. a float32 and a float64 version).
    template <typename F>
    ISTHMUS_PLUGIN_SETUP inline module& def(const char* name, F f, names params = {},
                                            const char* doc = nullptr) {
        using tr = detail::fn_traits<std::decay_t<F>>;
        add_function(s_->functions, name, std::move(f), params, doc,
                     detail::result_name<typename tr::result>(), 0);
        return *this;
    }
    /// A generic function: `make` instantiated for each element type, as overloads of `name`,
    /// and (ip::generic, not ip::overloads) for each floating one the backward pass derived from
    /// it, `<name>_vjp` (See Note [derived backward]): `m.def("f", ip::generic<float,
    /// double>(ISTHMUS_GENERIC(f)), {"a", "x"});`.
    template <typename Make, bool Derive, typename... Ts>
    ISTHMUS_PLUGIN_SETUP inline module& def(const char* name, generic_def<Make, Derive, Ts...> g,
                                            names params = {}, const char* doc = nullptr) {
        (def(name, g.make.template operator()<Ts>(), params, doc), ...);
        if constexpr (Derive) (def_derived<Ts>(name, g.make, params), ...);
        return *this;
    }
    /// A generic function with its backward and its forward mode derived, `<name>_vjp` and
    /// `<name>_jvp` (See Note [derived forward mode]): `m.def("f", ip::generic<float,
    /// double>(ISTHMUS_GENERIC(f), ip::with_jvp), {"a", "x"});`.
    template <typename Make, typename... Ts>
    ISTHMUS_PLUGIN_SETUP inline module& def(const char* name, generic_jvp_def<Make, Ts...> g,
                                            names params = {}, const char* doc = nullptr) {
        def(name, static_cast<generic_def<Make, true, Ts...>&>(g), params, doc);
        (def_jvp<Ts>(name, g.make, params), ...);
        return *this;
    }
    /// A generic kernel: `make` instantiated for the element type T, and for a floating T the
    /// kernel derived from it, `<name>_vjp`, with the same parameters followed by the gradient
    /// of each output view (grad_<name>, read) and of each differentiable input (grad_<name>,
    /// added to; a number's is a 0-d tensor, a vec's one of its length) (See Note [derived
    /// kernels] in isthmus/plugin/active_view.hpp). Declarations on the result apply to both.
    template <typename Make, bool Derive, typename... Ts>
    ISTHMUS_PLUGIN_SETUP inline kernel_def
    kernel(const char* name, generic_def<Make, Derive, Ts...> g, name_list params = {},
           const char* doc = nullptr) {
        static_assert(sizeof...(Ts) == 1, "kernels have no overloads: a generic kernel names "
                                          "one element type (register another name for another)");
        using T = std::tuple_element_t<0, std::tuple<Ts...>>;
        kernel_def k = kernel(name, g.make.template operator()<T>(), params, doc);
        if constexpr (Derive && std::is_floating_point_v<T>) {
            using D =
                detail::derived_kernel_of<T, decltype(g.make.template operator()<active<T>>())>;
            constexpr size_t n = D::n;
            // the gradients are named after their parameters (the host finds them by name,
            // Note [plugin calls in autograd]); unnamed parameters are arg<i>, as named_params
            // calls them
            const names base = padded_names(params, n);
            names vp = base;
            append_part_names<detail::dy_part, typename D::args, T>(vp, base, "grad_");
            append_part_names<detail::grad_part, typename D::args, T>(vp, base, "grad_");
            kernel_def d =
                kernel(s_->st.keep(std::string(name) + "_vjp"),
                       typename D::type{g.make.template operator()<active<T>>()}, std::move(vp),
                       s_->st.keep("The kernel derived from " + std::string(name) +
                                   ": adds the gradient of each input, given the "
                                   "gradient of each output."));
            set_derived(k, d);
        }
        return k;
    }
    /// A generic kernel with its forward mode derived too: `<name>_jvp`, with the same
    /// parameters followed by the tangent of each differentiable input (tangent_<name>, read; a
    /// number's is a 0-d tensor, a vec's one of its length) and of each output view
    /// (tangent_<name>, added to) (See Note [derived forward mode] in
    /// isthmus/plugin/derive.hpp). Declarations on the result apply to all three.
    template <typename Make, typename... Ts>
    ISTHMUS_PLUGIN_SETUP inline kernel_def kernel(const char* name, generic_jvp_def<Make, Ts...> g,
                                                  name_list params = {},
                                                  const char* doc = nullptr) {
        static_assert(sizeof...(Ts) == 1, "kernels have no overloads: a generic kernel names "
                                          "one element type (register another name for another)");
        using T = std::tuple_element_t<0, std::tuple<Ts...>>;
        static_assert(std::is_floating_point_v<T>,
                      "isthmus::plugin: a kernel's forward mode (ip::with_jvp) needs a floating "
                      "element type");
        kernel_def k = kernel(name, static_cast<generic_def<Make, true, Ts...>&>(g), params, doc);
        using J = detail::derived_kernel_jvp_of<T, decltype(g.make.template operator()<dual<T>>())>;
        const names base = padded_names(params, J::n);
        names jp = base;
        append_part_names<detail::tangent_in_part, typename J::args, T>(jp, base, "tangent_");
        append_part_names<detail::tangent_out_part, typename J::args, T>(jp, base, "tangent_");
        kernel_def f = kernel(
            s_->st.keep(std::string(name) + "_jvp"),
            typename J::type{g.make.template operator()<dual<T>>()}, std::move(jp),
            s_->st.keep("The forward mode derived from " + std::string(name) +
                        ": adds the tangent of each output, given the tangent of each input."));
        set_forward(k, f);
        return k;
    }
    /// An object type T (instances shared by the host and the plugin as shared_ptr<T>).
    template <typename T>
    ISTHMUS_PLUGIN_SETUP type_builder<T> type(const char* name, const char* doc = nullptr) {
        isthmus_type& t = s_->types.emplace_back();
        t.name = s_->st.keep(name);
        t.doc = doc ? s_->st.keep(doc) : nullptr;
        t.destroy = [](const isthmus_type*, void* inst) {
            delete static_cast<std::shared_ptr<T>*>(inst);
        };
        detail::type_slot<T>::desc = &t;
        s_->retargets.push_back([](const isthmus_type* from, const isthmus_type* to) {
            if (detail::type_slot<T>::desc == from) detail::type_slot<T>::desc = to;
        });
        return type_builder<T>(*this, t);
    }

private:
    template <typename T>
    friend class type_builder;

    /// Registers `<name>_vjp` for element type E (nothing for other types).
    template <typename E, typename Make>
    ISTHMUS_PLUGIN_SETUP void def_derived(const char* name, const Make& make, const names& params) {
        if constexpr (std::is_floating_point_v<E>)
            def_derived_for<E, decltype(make.template operator()<active<E>>())>(name, make, params);
    }
    template <typename E, typename Fa, typename Make>
    ISTHMUS_PLUGIN_SETUP void def_derived_for(const char* name, const Make& make,
                                              const names& params) {
        if constexpr (detail::derivable_function<E, Fa>) {
            using V = detail::derived_vjp_of<E, Fa>;
            constexpr size_t nin = std::tuple_size_v<typename detail::fn_traits<Fa>::args>;
            constexpr size_t nout = std::tuple_size_v<typename detail::fn_traits<V>::args> - nin;
            names vp = params;
            if (!vp.empty() || nin == 0) {
                vp = padded_names(params, nin);
                for (size_t k = 0; k < nout; ++k)
                    vp.push_back(nout == 1 ? "grad_output" : "grad_output" + std::to_string(k));
            }
            def(s_->st.keep(std::string(name) + "_vjp"), V{make.template operator()<active<E>>()},
                std::move(vp),
                s_->st.keep("The vector-Jacobian product of " + std::string(name) +
                            ", derived from it: the gradient of each parameter given the gradient "
                            "of each result (none for a parameter that is not differentiable)."));
        }
    }

    /// Registers `<name>_jvp` for element type E (nothing for other types, or for a function
    /// without a result to differentiate).
    template <typename E, typename Make>
    ISTHMUS_PLUGIN_SETUP void def_jvp(const char* name, const Make& make, const names& params) {
        if constexpr (std::is_floating_point_v<E>) {
            using Fa = decltype(make.template operator()<active<E>>());
            if constexpr (detail::derivable_function<E, Fa>) {
                using J = detail::derived_jvp_of<E, decltype(make.template operator()<dual<E>>())>;
                const names base = padded_names(params, std::tuple_size_v<typename J::args>);
                names jp = base;
                append_part_names<detail::jvp_part, typename J::args, E>(jp, base, "tangent_");
                def(s_->st.keep(std::string(name) + "_jvp"),
                    typename J::type{make.template operator()<dual<E>>()}, std::move(jp),
                    s_->st.keep("The Jacobian-vector product of " + std::string(name) +
                                ", derived from it: its results, then their tangents given a "
                                "tangent of each differentiable parameter."));
            }
        }
    }

    /// `given` padded to n names, each missing one arg<i> (as unnamed parameters are called).
    ISTHMUS_PLUGIN_SUPPORT static names padded_names(const name_list& given, size_t n);
    /// Appends prefix + base[i] for each parameter i of the tuple A whose Part<A_i, E> (the
    /// derived parameters it adds: a gradient, a tangent) is not empty.
    template <template <typename, typename> class Part, typename A, typename E>
    static void append_part_names(names& out, const names& base, const char* prefix) {
        [&]<size_t... I>(std::index_sequence<I...>) {
            ((std::tuple_size_v<Part<std::remove_cvref_t<std::tuple_element_t<I, A>>, E>> > 0
                  ? (void)out.push_back(prefix + base[I])
                  : (void)0),
             ...);
        }
        (std::make_index_sequence<std::tuple_size_v<A>>{});
    }

    /// Adds a function entry to `into` (the module's functions or a type's methods) with
    /// parameters `all[skip, skip + n)` named from `given` (else arg<k>).
    ISTHMUS_PLUGIN_SUPPORT void add_function_entry(std::vector<isthmus_function>& into,
                                                   const char* name, const char* doc,
                                                   const char* result, const isthmus_param* all,
                                                   const name_list& given, size_t n, size_t skip,
                                                   isthmus_function_impl impl, void* data);

    template <typename F>
    ISTHMUS_PLUGIN_SETUP void add_function(std::vector<isthmus_function>& into, const char* name,
                                           F f, const names& params, const char* doc,
                                           const char* result, size_t skip) {
        using tr = detail::fn_traits<std::decay_t<F>>;
        constexpr size_t n = std::tuple_size_v<typename tr::args>;
        isthmus_param room[n > 0 ? n : 1];
        const isthmus_param* all = detail::describe_params<typename tr::args>(room);
        add_function_entry(into, name, doc, result, all, params, n - skip, skip,
                           &detail::function_impl<F>, keep_callable(std::move(f)));
    }
};

template <typename T>
template <typename... A>
ISTHMUS_PLUGIN_SETUP type_builder<T>& type_builder<T>::ctor(names params, const char* doc) {
    m_.def(
        t_.name, [](A... a) { return std::make_shared<T>(std::move(a)...); }, std::move(params),
        doc ? doc : t_.doc);
    return *this;
}

template <typename T>
template <typename V>
ISTHMUS_PLUGIN_SETUP type_builder<T>& type_builder<T>::field(const char* name, V T::*member) {
    isthmus_field f{};
    f.name = m_.s_->st.keep(name);
    f.type_name = detail::describe_param<V>("").type_name;
    f.data = m_.keep(new auto(member), [](void* p) { delete static_cast<V T::**>(p); });
    f.get = [](const isthmus_field* self, isthmus_call* call, void* inst,
               isthmus_value* out) noexcept -> int {
        detail::call_scope scope(call);
        try {
            auto mp = *static_cast<V T::**>(self->data);
            *out = detail::to_abi<V>((*static_cast<std::shared_ptr<T>*>(inst)).get()->*mp);
            return 0;
        } catch (...) {
            return detail::report(call);
        }
    };
    f.set = [](const isthmus_field* self, isthmus_call* call, void* inst,
               const isthmus_value* v) noexcept -> int {
        detail::call_scope scope(call);
        try {
            auto mp = *static_cast<V T::**>(self->data);
            (*static_cast<std::shared_ptr<T>*>(inst)).get()->*mp = detail::arg_caster<V>::get(*v);
            return 0;
        } catch (...) {
            return detail::report(call);
        }
    };
    m_.s_->type_members[&t_].fields.push_back(f);
    return *this;
}

template <typename T>
template <typename R, typename... A, typename F>
ISTHMUS_PLUGIN_SETUP type_builder<T>& type_builder<T>::add_method(const char* name, F fn,
                                                                  names params, const char* doc) {
    auto wrapped = [fn](std::shared_ptr<T> self, A... a) -> R {
        return ((*self).*fn)(std::forward<A>(a)...);
    };
    m_.add_function(m_.s_->type_members[&t_].methods, name, std::move(wrapped), params, doc,
                    detail::result_name<R>(), 1);
    return *this;
}

template <typename T>
template <typename R, typename... A>
ISTHMUS_PLUGIN_SETUP type_builder<T>& type_builder<T>::method(const char* name, R (T::*fn)(A...),
                                                              names params, const char* doc) {
    return add_method<R, A...>(name, fn, params, doc);
}

template <typename T>
template <typename R, typename... A>
ISTHMUS_PLUGIN_SETUP type_builder<T>&
type_builder<T>::method(const char* name, R (T::*fn)(A...) const, names params, const char* doc) {
    return add_method<R, A...>(name, fn, params, doc);
}

template <typename T>
template <typename... A>
ISTHMUS_PLUGIN_SETUP type_builder<T>&
type_builder<T>::event(const char* name, isthmus::plugin::event<A...> T::*member) {
    using E = isthmus::plugin::event<A...>;
    isthmus_event e{};
    e.name = m_.s_->st.keep(name);
    std::string sig = "(";
    ((sig += std::string(sig.size() > 1 ? ", " : "") + detail::describe_param<A>("").type_name),
     ...);
    e.signature = m_.s_->st.keep(sig + ")");
    e.data = m_.keep(new auto(member), [](void* p) { delete static_cast<E T::**>(p); });
    e.add = [](const isthmus_event* self, isthmus_call* call, void* inst,
               isthmus_callback cb) noexcept -> int {
        detail::call_scope scope(call);
        callback owned(cb); // released even when add fails
        try {
            ((*static_cast<std::shared_ptr<T>*>(inst)).get()->**static_cast<E T::**>(self->data))
                .add(std::move(owned));
            return 0;
        } catch (...) {
            return detail::report(call);
        }
    };
    e.clear = [](const isthmus_event* self, isthmus_call* call, void* inst) noexcept -> int {
        detail::call_scope scope(call);
        try {
            ((*static_cast<std::shared_ptr<T>*>(inst)).get()->**static_cast<E T::**>(self->data))
                .clear();
            return 0;
        } catch (...) {
            return detail::report(call);
        }
    };
    e.count = [](const isthmus_event* self, void* inst) noexcept -> int64_t {
        return static_cast<int64_t>(
            ((*static_cast<std::shared_ptr<T>*>(inst)).get()->**static_cast<E T::**>(self->data))
                .size());
    };
    m_.s_->type_members[&t_].events.push_back(e);
    return *this;
}

} // namespace isthmus::plugin

#if !defined(ISTHMUS_PLUGIN_SEPARATE)
#include "isthmus/plugin/support_code.hpp"
#endif

#endif // the full layer

#if !defined(__CUDACC_RTC__)
/// Defines a plugin named NAME: the body receives `isthmus::plugin::module& M` and registers
/// functions, kernels and types; the entry point is exported for the host's loader.
#define ISTHMUS_PLUGIN(NAME, M)                                                                    \
    ISTHMUS_PLUGIN_SETUP static void isthmus_plugin_define_(::isthmus::plugin::module& M);         \
    ISTHMUS_PLUGIN_SETUP static void isthmus_plugin_run_(::isthmus::plugin::module_base& base_) {  \
        isthmus_plugin_define_(static_cast<::isthmus::plugin::module&>(base_));                    \
    }                                                                                              \
    static ::isthmus::plugin::detail::plugin_slot isthmus_plugin_slot_;                            \
    ISTHMUS_PLUGIN_SETUP static const isthmus_plugin* isthmus_plugin_entry_impl_(                  \
        uint32_t host_abi, const isthmus_host* host) {                                             \
        return ::isthmus::plugin::detail::plugin_entry(isthmus_plugin_slot_, #NAME,                \
                                                       &isthmus_plugin_run_, host_abi, host);      \
    }                                                                                              \
    ISTHMUS_PLUGIN_ENTRY(isthmus_plugin_entry_impl_)                                               \
    static void isthmus_plugin_define_(::isthmus::plugin::module& M)
#endif
