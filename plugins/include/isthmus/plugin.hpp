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
#else

#include "isthmus/plugin/calls.hpp"
#include "isthmus/plugin/derive.hpp"

namespace isthmus::plugin {

/// Names of a function's parameters, in order: `{"a", "x"}`.
using names = std::vector<std::string>;

class module;

/// What module::kernel() returns: declarations about the kernel just registered.
class kernel_def {
public:
    kernel_def(module& m, size_t index) : m_(m), index_(index) {}
    /// Declares that the body indexes these arguments (views) at the position, `x[p]` or
    /// `x(p[0], p[1])`, so that parallel_do checks, before running, that each one's leading
    /// dimensions cover the iteration space (ISTHMUS_PARAM_AT_POSITION; Note [kernel shape
    /// rules] in plugins/src/host.cpp). Throws for a name that is no tensor parameter.
    kernel_def& at_position(std::initializer_list<std::string_view> params);
    /// Declares that the body reads these arguments only within `radius` elements of the
    /// position along their leading dimensions (a 3x3 blur: 1), and indexes them at the
    /// position (at_position). The CPU launcher then skips their 'clamped, 'circular or 'mirror
    /// map where every read is inside, the interior, which vectorises like an unmodified view
    /// (Note [stencil interiors]); checked mode raises index_error for a read that breaks the
    /// declaration. Throws for a name that is no tensor parameter or a radius outside 1..255.
    kernel_def& stencil(std::initializer_list<std::string_view> params, int radius);

private:
    friend class plugin::module;
    plugin::module& m_;
    size_t index_;
    size_t derived_ = static_cast<size_t>(-1); // the derived kernel's (See Note [derived kernels])
};

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

/// The plugin being described: functions, kernels and object types.
// (No line of this class starts with the word `module`: nvcc's C++20 front end would read it as
// a module declaration; hence the `inline` and `plugin::` prefixes.)
class module {
public:
    ISTHMUS_PLUGIN_SUPPORT explicit module(const char* name, const char* description = nullptr);
    ISTHMUS_PLUGIN_SUPPORT ~module();
    inline module(const module&) = delete;
    inline module& operator=(const module&) = delete;

    /// A function; several with one name form an overload set (the host takes the first whose
    /// parameter types match, e.g. a float32 and a float64 version).
    template <typename F>
    ISTHMUS_PLUGIN_SETUP inline module& def(const char* name, F f, names params = {},
                                            const char* doc = nullptr) {
        using tr = detail::fn_traits<std::decay_t<F>>;
        add_function(functions_, name, std::move(f), params, doc,
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
    /// A kernel: the last parameter is the position (ivec<N>, or int64_t for 1-d); run it with
    /// parallel_do(dims, args..., kernel). The result declares shape rules:
    /// `m.kernel("axpb", ..., {"x", "y", "a", "b"}).at_position({"x", "y"});`.
    template <typename F>
    ISTHMUS_PLUGIN_SETUP inline kernel_def kernel(const char* name, F f, names params = {},
                                                  const char* doc = nullptr) {
        using tr = detail::fn_traits<std::decay_t<F>>;
        using A = typename tr::args;
        constexpr size_t n = std::tuple_size_v<A>;
        static_assert(n >= 1, "a kernel's last parameter is its position");
        using P = std::remove_cvref_t<std::tuple_element_t<n - 1, A>>;
        static_assert(std::is_void_v<typename tr::result>, "kernels return nothing");
        int32_t pos_ndim = 1;
        if constexpr (!std::is_integral_v<P>) pos_ndim = P::size();
        isthmus_kernel_launch_cuda launch_cuda = nullptr;
#if defined(__CUDACC__)
        if constexpr (is_device_kernel<std::decay_t<F>>::value)
            launch_cuda = &detail::kernel_impl_cuda<F>;
#else
        // See Note [NVRTC launcher] (isthmus/plugin/calls.hpp)
        if constexpr (detail::has_device_entry<std::decay_t<F>>)
            if (detail::has_device_code()) launch_cuda = &detail::kernel_impl_entry<F>;
#endif
        return add_kernel(name, doc, params_of<A>(name, params, n - 1), pos_ndim,
                          &detail::kernel_impl<F>, launch_cuda, keep_callable(std::move(f)));
    }
    /// A generic kernel: `make` instantiated for the element type T, and for a floating T the
    /// kernel derived from it, `<name>_vjp`, with the same parameters followed by the gradient
    /// of each output view (grad_<name>, read) and of each differentiable input (grad_<name>,
    /// added to; a number's is a 0-d tensor, a vec's one of its length) (See Note [derived
    /// kernels] in isthmus/plugin/active_view.hpp). Declarations on the result apply to both.
    template <typename Make, bool Derive, typename... Ts>
    ISTHMUS_PLUGIN_SETUP inline kernel_def kernel(const char* name,
                                                  generic_def<Make, Derive, Ts...> g,
                                                  names params = {}, const char* doc = nullptr) {
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
                kernel(st_.keep(std::string(name) + "_vjp"),
                       typename D::type{g.make.template operator()<active<T>>()}, std::move(vp),
                       st_.keep("The kernel derived from " + std::string(name) +
                                ": adds the gradient of each input, given the "
                                "gradient of each output."));
            k.derived_ = d.index_;
        }
        return k;
    }
    template <typename Make, typename... Ts>
    kernel_def kernel(const char*, generic_jvp_def<Make, Ts...>, names = {},
                      const char* = nullptr) {
        static_assert(detail::dependent_false<Make>,
                      "isthmus::plugin: kernels get their backward derived (<name>_vjp), not the "
                      "forward mode: register the kernel with ip::generic<T>(...) without "
                      "ip::with_jvp (Note [derived forward mode])");
        return kernel_def(*this, 0);
    }
    /// An object type T (instances shared by the host and the plugin as shared_ptr<T>).
    template <typename T>
    ISTHMUS_PLUGIN_SETUP type_builder<T> type(const char* name, const char* doc = nullptr) {
        isthmus_type& t = types_.emplace_back();
        t.name = st_.keep(name);
        t.doc = doc ? st_.keep(doc) : nullptr;
        t.destroy = [](const isthmus_type*, void* inst) {
            delete static_cast<std::shared_ptr<T>*>(inst);
        };
        detail::type_slot<T>::desc = &t;
        retargets_.push_back([](const isthmus_type* from, const isthmus_type* to) {
            if (detail::type_slot<T>::desc == from) detail::type_slot<T>::desc = to;
        });
        return type_builder<T>(*this, t);
    }

    /// The finished descriptor (tables are fixed from here on).
    ISTHMUS_PLUGIN_SUPPORT const isthmus_plugin* descriptor();

private:
    template <typename T>
    friend class type_builder;
    friend class kernel_def;

    struct members {
        std::vector<isthmus_field> fields;
        std::vector<isthmus_function> methods;
        std::vector<isthmus_event> events;
    };

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
            def(st_.keep(std::string(name) + "_vjp"), V{make.template operator()<active<E>>()},
                std::move(vp),
                st_.keep("The vector-Jacobian product of " + std::string(name) +
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
                using J = detail::derived_jvp_of<E, Fa>;
                const names base = padded_names(params, std::tuple_size_v<typename J::args>);
                names jp = base;
                append_part_names<detail::jvp_part, typename J::args, E>(jp, base, "tangent_");
                def(st_.keep(std::string(name) + "_jvp"),
                    typename J::type{make.template operator()<active<E>>()}, std::move(jp),
                    st_.keep("The Jacobian-vector product of " + std::string(name) +
                             ", derived from it: its results, then their tangents given a "
                             "tangent of each differentiable parameter."));
            }
        }
    }

    /// `given` padded to n names, each missing one arg<i> (as named_params calls them).
    ISTHMUS_PLUGIN_SUPPORT static names padded_names(const names& given, size_t n);
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

    template <typename F>
    void* keep_callable(F f) {
        return keep(std::make_shared<F>(std::move(f)));
    }
    /// Keeps a callable alive as long as the module; returns its address.
    ISTHMUS_PLUGIN_SUPPORT void* keep(std::shared_ptr<void> p);

    /// The parameter table of a callable with parameter types A: C++ parameters [skip, skip + n)
    /// named from `given` (else "arg<k>"), kept as long as the module.
    template <typename A>
    ISTHMUS_PLUGIN_SETUP std::vector<isthmus_param>& params_of(const char* what, const names& given,
                                                               size_t n, size_t skip = 0) {
        return [&]<size_t... I>(std::index_sequence<I...>)->std::vector<isthmus_param>& {
            const std::array<isthmus_param, sizeof...(I)> all{
                detail::describe_param<std::tuple_element_t<I, A>>(nullptr)...};
            return named_params(what, all.data(), given, n, skip);
        }
        (std::make_index_sequence<std::tuple_size_v<A>>{});
    }
    ISTHMUS_PLUGIN_SUPPORT std::vector<isthmus_param>& named_params(const char* what,
                                                                    const isthmus_param* all,
                                                                    const names& given, size_t n,
                                                                    size_t skip);
    /// Registers a kernel whose parameter table is `ps` (kept by params_of).
    ISTHMUS_PLUGIN_SUPPORT kernel_def add_kernel(const char* name, const char* doc,
                                                 std::vector<isthmus_param>& ps, int32_t pos_ndim,
                                                 isthmus_kernel_launch launch_cpu,
                                                 isthmus_kernel_launch_cuda launch_cuda,
                                                 void* data);
    /// Adds a function entry to `into` (the module's functions or a type's methods).
    ISTHMUS_PLUGIN_SUPPORT void add_function_entry(std::vector<isthmus_function>& into,
                                                   const char* name, const char* doc,
                                                   const char* result,
                                                   std::vector<isthmus_param>& ps,
                                                   isthmus_function_impl impl, void* data);

    template <typename F>
    ISTHMUS_PLUGIN_SETUP void add_function(std::vector<isthmus_function>& into, const char* name,
                                           F f, const names& params, const char* doc,
                                           const char* result, size_t skip) {
        using tr = detail::fn_traits<std::decay_t<F>>;
        constexpr size_t n = std::tuple_size_v<typename tr::args>;
        add_function_entry(into, name, doc, result,
                           params_of<typename tr::args>(name, params, n - skip, skip),
                           &detail::function_impl<F>, keep_callable(std::move(f)));
    }

    ISTHMUS_PLUGIN_SUPPORT void retarget(const isthmus_type* from, const isthmus_type* to);

    detail::storage st_;
    isthmus_plugin desc_{};
    std::vector<isthmus_function> functions_;
    std::vector<isthmus_kernel> kernels_;
    std::deque<isthmus_type> types_;
    std::vector<isthmus_type> flat_types_;
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
    } type_members_;
    std::vector<void (*)(const isthmus_type*, const isthmus_type*)> retargets_;
    std::vector<std::shared_ptr<void>> callables_;
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
    f.name = m_.st_.keep(name);
    f.type_name = detail::describe_param<V>("").type_name;
    f.data = new auto(member);
    m_.callables_.push_back(
        std::shared_ptr<void>(f.data, [](void* p) { delete static_cast<V T::**>(p); }));
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
    m_.type_members_[&t_].fields.push_back(f);
    return *this;
}

template <typename T>
template <typename R, typename... A, typename F>
ISTHMUS_PLUGIN_SETUP type_builder<T>& type_builder<T>::add_method(const char* name, F fn,
                                                                  names params, const char* doc) {
    auto wrapped = [fn](std::shared_ptr<T> self, A... a) -> R {
        return ((*self).*fn)(std::forward<A>(a)...);
    };
    m_.add_function(m_.type_members_[&t_].methods, name, std::move(wrapped), params, doc,
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
    e.name = m_.st_.keep(name);
    std::string sig = "(";
    ((sig += std::string(sig.size() > 1 ? ", " : "") + detail::describe_param<A>("").type_name),
     ...);
    e.signature = m_.st_.keep(sig + ")");
    e.data = new auto(member);
    m_.callables_.push_back(
        std::shared_ptr<void>(e.data, [](void* p) { delete static_cast<E T::**>(p); }));
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
    m_.type_members_[&t_].events.push_back(e);
    return *this;
}

namespace detail {
/// Note [plugin definition errors]
/// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
/// An exception thrown while a plugin defines itself (a bad at_position name, out of memory) must
/// not cross the C entry point. The entry point then returns a descriptor with an empty name and
/// the message as its description, which the host refuses with that message.
ISTHMUS_PLUGIN_SUPPORT const isthmus_plugin* define_plugin(plugin::module& m,
                                                           void (*define)(plugin::module&));
} // namespace detail

} // namespace isthmus::plugin

#if !defined(ISTHMUS_PLUGIN_SEPARATE)
#include "isthmus/plugin/support_code.hpp"
#endif

/// Defines a plugin named NAME: the body receives `isthmus::plugin::module& M` and registers
/// functions, kernels and types; the entry point is exported for the host's loader.
#define ISTHMUS_PLUGIN(NAME, M)                                                                    \
    ISTHMUS_PLUGIN_SETUP static void isthmus_plugin_define_(::isthmus::plugin::module& M);         \
    ISTHMUS_PLUGIN_SETUP static const isthmus_plugin* isthmus_plugin_entry_impl_(                  \
        uint32_t host_abi, const isthmus_host* host) {                                             \
        static ::isthmus::plugin::module mod_(#NAME);                                              \
        static const isthmus_plugin* desc_ =                                                       \
            ::isthmus::plugin::detail::define_plugin(mod_, &isthmus_plugin_define_);               \
        if (host_abi == ISTHMUS_PLUGIN_ABI_VERSION) ::isthmus::plugin::detail::g_host = host;      \
        return desc_;                                                                              \
    }                                                                                              \
    ISTHMUS_PLUGIN_ENTRY(isthmus_plugin_entry_impl_)                                               \
    static void isthmus_plugin_define_(::isthmus::plugin::module& M)

#endif // !__CUDACC_RTC__
