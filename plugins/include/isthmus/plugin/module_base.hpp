// The module builder's kernel half: module_base (kernel registration, the descriptor), kernel_def
// and name_list. A kernel-only plugin's module (Note [kernel-only plugins]); the full module in
// isthmus/plugin.hpp adds functions, generic code and object types.
#pragma once

#include "isthmus/plugin/kernel_cuda.hpp"

namespace isthmus::plugin {

class module_base;

namespace detail {
// Note [stateless callables]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// A registered callable lives as long as the module: a heap copy, freed by a deleter the module
// keeps. Most kernels and functions are lambdas that capture nothing, and for them the copy, its
// deleter and their registration were three more functions to compile in every plugin. Such a
// callable (empty, trivially constructed and copied: every object of its type is the same) is
// one constant object of its type instead, which the launchers use as they used the copy.
template <typename F>
inline constexpr bool stateless = std::is_empty_v<F>&&
    std::is_trivially_default_constructible_v<F>&& std::is_trivially_copyable_v<F>;
/// The object a stateless callable's registrations share (See Note [stateless callables]).
/// (Not constexpr: nvcc's extended device lambdas are no literal types; a trivial default
/// constructor leaves nothing to run at load time anyway.)
template <typename F>
inline F stateless_instance{};

/// What a module has registered (functions, kernels, types, the strings they name); defined with
/// the full layer (isthmus/plugin.hpp), an incomplete type for a kernel-only compile.
struct module_state;
} // namespace detail

/// The parameter names of a registration, in order: `{"x", "y"}`, or a container of std::string
/// (ip::names). Refers to them: valid for the call it is passed to.
class name_list {
public:
    name_list() = default;
    name_list(std::initializer_list<const char*> l) : list_(l) {}
    template <typename C,
              typename = decltype(static_cast<const char*>(std::declval<const C&>()[0].c_str()))>
    name_list(const C& c) : obj_(&c), n_(c.size()), at_(&element<C>) {}
    size_t size() const { return at_ ? n_ : list_.size(); }
    bool empty() const { return size() == 0; }
    const char* operator[](size_t i) const { return at_ ? at_(obj_, i) : list_.begin()[i]; }

private:
    template <typename C>
    static const char* element(const void* c, size_t i) {
        return (*static_cast<const C*>(c))[i].c_str();
    }
    std::initializer_list<const char*> list_;
    const void* obj_ = nullptr;
    size_t n_ = 0;
    const char* (*at_)(const void*, size_t) = nullptr;
};

/// What module::kernel() returns: declarations about the kernel just registered.
class kernel_def {
public:
    kernel_def(module_base& m, size_t index) : m_(m), index_(index) {}
    /// Declares that the body indexes these arguments (views) at the position, `x[p]` or
    /// `x(p[0], p[1])`, so that parallel_do checks, before running, that each one's leading
    /// dimensions cover the iteration space (ISTHMUS_PARAM_AT_POSITION; Note [kernel shape
    /// rules] in plugins/src/host.cpp). Throws for a name that is no tensor parameter.
    ISTHMUS_PLUGIN_SUPPORT kernel_def& at_position(std::initializer_list<const char*> params);
    /// Declares that the body reads these arguments only within `radius` elements of the
    /// position along their leading dimensions (a 3x3 blur: 1), and indexes them at the
    /// position (at_position). The CPU launcher then skips their 'clamped, 'circular or 'mirror
    /// map where every read is inside, the interior, which vectorises like an unmodified view
    /// (Note [stencil interiors]); checked mode raises index_error for a read that breaks the
    /// declaration. Throws for a name that is no tensor parameter or a radius outside 1..255.
    ISTHMUS_PLUGIN_SUPPORT kernel_def& stencil(std::initializer_list<const char*> params,
                                               int radius);

private:
    friend class plugin::module_base;
    module_base& m_;
    size_t index_;
    size_t derived_ = static_cast<size_t>(-1); // the derived kernel's (See Note [derived kernels])
    size_t forward_ =
        static_cast<size_t>(-1); // its forward mode's (See Note [derived forward mode])
};

/// The plugin being described, as far as kernels go (isthmus/plugin.hpp's module adds the rest).
// (No line of this class starts with the word `module`: nvcc's C++20 front end would read it as
// a module declaration; hence the `inline` and `plugin::` prefixes.)
class module_base {
public:
    ISTHMUS_PLUGIN_SUPPORT explicit module_base(const char* name,
                                                const char* description = nullptr);
    ISTHMUS_PLUGIN_SUPPORT ~module_base();
    inline module_base(const module_base&) = delete;
    inline module_base& operator=(const module_base&) = delete;

    /// A kernel: the last parameter is the position (ivec<N>, or int64_t for 1-d); run it with
    /// parallel_do(dims, args..., kernel). The result declares shape rules:
    /// `m.kernel("axpb", ..., {"x", "y", "a", "b"}).at_position({"x", "y"});`.
    template <typename F>
    ISTHMUS_PLUGIN_SETUP inline kernel_def kernel(const char* name, F f, name_list params = {},
                                                  const char* doc = nullptr) {
        using tr = detail::fn_traits<std::decay_t<F>>;
        using A = typename tr::args;
        constexpr size_t n = std::tuple_size_v<A>;
        static_assert(n >= 1, "a kernel's last parameter is its position");
        using P = std::remove_cvref_t<std::tuple_element_t<n - 1, A>>;
        static_assert(std::is_void_v<typename tr::result>, "kernels return nothing");
        int32_t pos_ndim = 1;
        if constexpr (!std::is_integral_v<P>) pos_ndim = P::size();
        isthmus_param room[n];
        const isthmus_param* all = detail::describe_params<A>(room);
        if constexpr (detail::quick_build<F>())
            drop_checked_mode(); // See Note [the quick
                                 // build's launcher]
        return add_kernel(name, doc, all, n - 1, params, pos_ndim, &detail::kernel_impl<F>,
                          detail::cuda_launcher<F>(), keep_callable(std::move(f)));
    }

    /// The finished descriptor (tables are fixed from here on).
    ISTHMUS_PLUGIN_SUPPORT const isthmus_plugin* descriptor();
    /// Clears ISTHMUS_FEATURE_CHECKED_MODE: a kernel of the plugin has no checked loop.
    ISTHMUS_PLUGIN_SUPPORT void drop_checked_mode();

protected:
    friend class kernel_def;

    /// Makes `d`, the kernel derived from `k`, take `k`'s declarations too.
    static void set_derived(kernel_def& k, const kernel_def& d) { k.derived_ = d.index_; }
    /// Makes `f`, the forward mode derived from `k`, take `k`'s declarations too.
    static void set_forward(kernel_def& k, const kernel_def& f) { k.forward_ = f.index_; }
    /// Keeps a copy of `f` as long as the module; returns its address.
    template <typename F>
    void* keep_callable(F f) {
        if constexpr (detail::stateless<F>) // See Note [stateless callables]
            return &detail::stateless_instance<F>;
        else
            return keep(new F(std::move(f)), [](void* p) { delete static_cast<F*>(p); });
    }
    /// Keeps `p` as long as the module, which then frees it with `drop` (also when keep throws).
    ISTHMUS_PLUGIN_SUPPORT void* keep(void* p, void (*drop)(void*));
    /// Registers a kernel with parameters `all[0, n)` named from `given` (else arg<k>).
    ISTHMUS_PLUGIN_SUPPORT kernel_def add_kernel(const char* name, const char* doc,
                                                 const isthmus_param* all, size_t n,
                                                 const name_list& given, int32_t pos_ndim,
                                                 isthmus_kernel_launch launch_cpu,
                                                 isthmus_kernel_launch_cuda launch_cuda,
                                                 void* data);

    detail::module_state* s_;
};

namespace detail {
/// Note [plugin definition errors]
/// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
/// An exception thrown while a plugin defines itself (a bad at_position name, out of memory) must
/// not cross the C entry point. The entry point then returns a descriptor with an empty name and
/// the message as its description, which the host refuses with that message.
ISTHMUS_PLUGIN_SUPPORT const isthmus_plugin* define_plugin(module_base& m,
                                                           void (*define)(module_base&));

// Note [the plugin entry's statics]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// ISTHMUS_PLUGIN's entry point defines the plugin once and answers every later call with the same
// descriptor. It did so with two function-local statics (the module, the descriptor), whose
// thread-safe initialisation guards, exception cleanups and exit-time destructor were compiled in
// every plugin: 11 of the 95 million instructions cc1plus spends on an empty kernel-only plugin.
// The work is plugin_entry's now, compiled once in the support object (Note [support object]);
// the plugin keeps only a plugin_slot, constant-initialised data of its own translation unit, so
// that each plugin has its own module even where a header-only build leaves plugin_entry's
// symbols visible to other libraries. The first call builds the module under a lock (one lock
// for all plugins, recursive: a definition may load another plugin) and publishes the descriptor
// with a release store; later calls read it with one acquire load. The module is never
// destroyed, like the library it describes (Note [no unload] in plugins/src/loader.cpp).

/// A plugin's module and descriptor, once defined (See Note [the plugin entry's statics]).
// (Plain pointers, read and written through std::atomic_ref: <atomic> would bring C++20's
// atomic waits, <chrono> and std::string into every kernel-only compile, and their pending
// templates tripled an empty plugin's compile.)
struct plugin_slot {
    const isthmus_plugin* desc = nullptr;
    module_base* mod = nullptr;
};
/// ISTHMUS_PLUGIN's entry point: the descriptor of the plugin named `name` that `define`
/// describes, defined on the first call (See Note [the plugin entry's statics]); remembers the
/// host table when the host speaks this ABI version.
ISTHMUS_PLUGIN_SUPPORT const isthmus_plugin* plugin_entry(plugin_slot& slot, const char* name,
                                                          void (*define)(module_base&),
                                                          uint32_t host_abi,
                                                          const isthmus_host* host);
} // namespace detail

} // namespace isthmus::plugin
