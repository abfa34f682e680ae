// The plugin host API for C++ programs: load plugins, call functions, launch kernels, compile.
#pragma once

#include "isthmus/error.hpp"
#include "isthmus/export.hpp"
#include "isthmus/plugin_abi.h"
#include "isthmus/tensor.hpp"
#include "isthmus/value.hpp"

#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace isthmus::plugin_host {

class library;

/// A compiler failure from compile_string / compile_file; what() starts with a summary and
/// diagnostics() holds the compiler's messages (line numbers relative to the user's source).
class ISTHMUS_API compile_error : public runtime_error {
public:
    compile_error(const std::string& summary, std::string diagnostics);
    ~compile_error() override;
    const std::string& diagnostics() const noexcept { return diagnostics_; }

private:
    std::string diagnostics_;
};

/// Note [checked mode]
/// ~~~~~~~~~~~~~~~~~~~
/// In checked mode every 'unchecked view of a plugin kernel or function bounds-checks each access,
/// and an access outside the tensor raises index_error naming the kernel, the argument (position
/// and name), the index and the shape, instead of reading or writing outside the tensor (on the GPU
/// too: Note [checked access on the GPU] in plugin.hpp). It is meant for debugging: it costs a test
/// per access while on, and nothing while off (Note [view checks]). A checked parallel_do on the
/// CPU runs its positions in order on the calling thread, so the error names the first bad position
/// whatever the thread count (with threads, which of two failing blocks reported first depended
/// on timing). It is on for a call when the calling thread is inside a checked_scope (the innermost
/// decides), else when the environment variable ISTHMUS_CHECKED is 1 (read once, when first
/// needed). Plugins honour it without recompiling when they were built with this version's
/// plugin.hpp; older plugins and plugins written against the C ABI alone run unchecked
/// (library::features() says which; parallel_do logs it once per library).

/// Whether plugin calls made from this thread run in checked mode now (Note [checked mode]).
ISTHMUS_API bool checked();
/// Whether ISTHMUS_CHECKED asks for checked mode: "1", "true", "yes" or "on" (any case) turn it
/// on; unset, "", "0", "false", "no" and "off" leave it off. Read once; another value raises
/// value_error naming it, at every call that asks.
ISTHMUS_API bool checked_by_environment();

/// Turns checked mode on (or, with `false`, off) for plugin calls made from this thread until
/// the scope ends; scopes nest (Note [checked mode]).
///
///     { isthmus::plugin_host::checked_scope on; isthmus::plugin_host::parallel_do(dims, args, k);
///     }
class ISTHMUS_API checked_scope {
public:
    explicit checked_scope(bool on = true) noexcept;
    ~checked_scope();
    checked_scope(const checked_scope&) = delete;
    checked_scope& operator=(const checked_scope&) = delete;

private:
    int previous_;
};

/// Note [deterministic launches]
/// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
/// Kernels whose positions add into shared elements (a derived kernel's gradients, Note [derived
/// kernels] in isthmus/plugin/active_view.hpp; any scatter-add) give sums whose rounding depends
/// on the order the threads reach them, so their last bits vary between runs and thread counts. In
/// deterministic mode, parallel_do on the CPU runs the positions on the calling thread, in C order,
/// in the same blocks whatever the thread count: the sums are bit-identical across runs and
/// thread counts, at the price of one thread. It is on for launches made from this thread inside
/// a deterministic_scope (the innermost decides).

/// Whether parallel_do calls made from this thread run deterministically now (Note
/// [deterministic launches]).
ISTHMUS_API bool deterministic();

/// Turns deterministic launches on (or, with `false`, off) for this thread until the scope ends;
/// scopes nest (See Note [deterministic launches]).
class ISTHMUS_API deterministic_scope {
public:
    explicit deterministic_scope(bool on = true) noexcept;
    ~deterministic_scope();
    deterministic_scope(const deterministic_scope&) = delete;
    deterministic_scope& operator=(const deterministic_scope&) = delete;

private:
    bool previous_;
};

/// A host function a plugin may call back (a Python callable added to an event, ...).
using host_callable = std::function<value(std::span<const value>)>;

/// A value holding a host callable, for passing as a callback argument.
class ISTHMUS_API callable_object : public object {
public:
    explicit callable_object(host_callable fn, std::string name = "callable")
        : fn_(std::move(fn)), name_(std::move(name)) {}
    ~callable_object() override;
    std::string kind() const override { return "callable"; }
    std::string to_string() const override { return "<callable " + name_ + ">"; }
    const host_callable& fn() const noexcept { return fn_; }

private:
    host_callable fn_;
    std::string name_;
};

/// A plugin function (all overloads of one name). Calls convert runtime values to the ABI:
/// scalars and strings by value, tensors locked on the CPU for the duration of the call
/// (read-only parameters of another dtype are converted first; written ones must match).
class ISTHMUS_API function : public object {
public:
    function(std::shared_ptr<const library> lib, std::vector<const isthmus_function*> overloads,
             bool is_method = false);
    ~function() override;
    std::string kind() const override { return "function"; }
    std::string to_string() const override;
    const std::string& name() const noexcept { return name_; }
    /// Every overload's signature, one per line.
    std::string signature() const;
    const std::vector<const isthmus_function*>& overloads() const noexcept { return overloads_; }
    const std::shared_ptr<const library>& owner() const noexcept { return lib_; }
    /// Calls the function; throws the typed error the plugin reported (type_error for arguments
    /// no overload accepts, before anything runs).
    value call(std::span<const value> args) const;
    /// Note [scalar fast path]
    /// ~~~~~~~~~~~~~~~~~~~~~~~
    /// The overload a call whose arguments are all plain numbers goes straight to (one overload,
    /// every parameter a bool, integer or real number); NULL when the function has no such
    /// overload. Callers marshal numbers themselves and use call_abi, skipping runtime values,
    /// overload resolution and argument slots.
    const isthmus_function* scalar_overload() const noexcept { return scalar_; }
    /// Calls overload `f` with already-marshalled ABI arguments (numbers only: nothing is
    /// locked); throws the typed error the plugin reported.
    value call_abi(const isthmus_function* f, const isthmus_value* args, int32_t nargs) const;
    template <typename... A>
    value operator()(A&&... a) const {
        const value vs[] = {value(std::forward<A>(a))..., value()};
        return call(std::span<const value>(vs, sizeof...(A)));
    }

private:
    std::shared_ptr<const library> lib_;
    std::vector<const isthmus_function*> overloads_;
    std::string name_;
    bool is_method_;
    const isthmus_function* scalar_ = nullptr;
};

/// A plugin kernel; run it with parallel_do. A kernel of a quick build (Note [compile tiers] in
/// plugins/src/compile_tiers.cpp) runs the optimised build's code once that replaced it: abi()
/// and owner() then answer for the optimised library.
class ISTHMUS_API kernel : public object {
public:
    kernel(std::shared_ptr<const library> lib, const isthmus_kernel* k);
    ~kernel() override;
    std::string kind() const override { return "kernel"; }
    std::string to_string() const override;
    const std::string& name() const noexcept { return name_; }
    std::string signature() const { return abi()->signature; }
    /// The kernel's ABI record: that of the library it runs from now.
    const isthmus_kernel* abi() const noexcept;
    /// The library it runs from now: its own, or the optimised build that replaced it.
    const std::shared_ptr<const library>& owner() const noexcept;
    /// What one position of the body cost on one CPU thread in the last launch (nanoseconds; 0
    /// before the first), which parallel_do plans the next launch with (Note [CPU launch plan]).
    std::atomic<float>& cpu_cost_hint() const noexcept { return cost_hint_; }

private:
    void follow() const noexcept;
    std::shared_ptr<const library> lib_;
    mutable std::atomic<const isthmus_kernel*> k_;
    mutable std::atomic<bool> followed_{false}; ///< k_ is the optimised build's
    std::string name_;
    mutable std::atomic<float> cost_hint_{0.0f};
};

/// An instance of a plugin object type; destroyed through the plugin when the last reference
/// goes.
class ISTHMUS_API plugin_object : public object,
                                  public std::enable_shared_from_this<plugin_object> {
public:
    plugin_object(std::shared_ptr<const library> lib, const isthmus_type* type, void* instance);
    ~plugin_object() override;
    std::string kind() const override;
    std::string to_string() const override;
    const isthmus_type* type() const noexcept { return type_; }
    void* instance() const noexcept { return instance_; }
    /// Names of fields, methods and events.
    std::vector<std::string> fields() const;
    std::vector<std::string> methods() const;
    std::vector<std::string> events() const;
    bool has_field(const std::string& name) const;
    bool has_method(const std::string& name) const;
    bool has_event(const std::string& name) const;
    /// Reads / writes a field; throws value_error naming the type for an unknown field.
    value get(const std::string& field) const;
    void set(const std::string& field, const value& v) const;
    /// Calls a method with the instance as its receiver.
    value call(const std::string& method, std::span<const value> args) const;
    /// Adds a host callable to an event; clears it; counts its callbacks.
    void add_listener(const std::string& event, host_callable fn,
                      std::string name = "callable") const;
    void clear_listeners(const std::string& event) const;
    int64_t listener_count(const std::string& event) const;

private:
    const isthmus_event& find_event(const std::string& name) const;
    std::shared_ptr<const library> lib_;
    const isthmus_type* type_;
    void* instance_;
};

/// A loaded plugin. Libraries are never unloaded (see Note [no unload]); the object stays valid
/// for the life of the process.
class ISTHMUS_API library : public std::enable_shared_from_this<library> {
public:
    ~library();
    /// The plugin's declared name.
    const std::string& name() const noexcept { return name_; }
    /// The file it was loaded from (absolute).
    const std::string& path() const noexcept { return path_; }
    const isthmus_plugin& descriptor() const noexcept { return *desc_; }
    /// The plugin's ISTHMUS_FEATURE_* bits (0 for a descriptor that predates the field):
    /// ISTHMUS_FEATURE_CHECKED_MODE when its views honour checked mode.
    uint32_t features() const noexcept;
    /// Function names (each may have several overloads), kernel names, type names.
    std::vector<std::string> function_names() const;
    std::vector<std::string> kernel_names() const;
    std::vector<std::string> type_names() const;
    /// "name(a: cube, ...) -> cube" lines of every function, kernel and type, for listings.
    std::string describe() const;
    bool has_function(const std::string& n) const;
    bool has_kernel(const std::string& n) const;
    /// The function / kernel of that name; throws value_error listing what the plugin has.
    std::shared_ptr<function> get_function(const std::string& n) const;
    std::shared_ptr<kernel> get_kernel(const std::string& n) const;

    /// Which build this library's kernels run (See Note [compile tiers]): "optimised" for every
    /// library but a quick build; a quick build says "quick" until its optimised build replaces
    /// it, then "optimised" (its kernels run the optimised library), or "quick" for good when
    /// that build failed (the failure was reported as a compile notice).
    std::string tier() const;
    /// Blocks until this library's optimised build, if one is under way, has finished; returns
    /// tier() then.
    std::string wait_optimised() const;
    /// The optimised library that replaced this quick build (nullptr before, and for every
    /// library that is not a quick build).
    const library* successor() const noexcept { return successor_.load(std::memory_order_acquire); }

    struct impl;
    library(std::unique_ptr<impl> p, const isthmus_plugin* desc, std::string path);

private:
    friend class kernel;
    friend struct library_tiers; // plugins/src/compile_tiers.cpp
    std::unique_ptr<impl> impl_;
    const isthmus_plugin* desc_;
    std::string name_;
    std::string path_;
    std::atomic<const library*> successor_{nullptr};
    std::shared_ptr<const library> successor_owner_; ///< written before successor_ is published
};

/// Loads a plugin by path (anything with a '/' or ending in ".so"), or by name: `name`,
/// `lib<name>.so` and `<name>.so` in each directory of ISTHMUS_PLUGIN_PATH (':'-separated),
/// then in the working directory. Loading the same file again returns the same library.
/// Throws runtime_error for a missing file, a library that is not a plugin, or an ABI version
/// mismatch (naming both versions).
ISTHMUS_API std::shared_ptr<library> load(const std::string& path_or_name);

/// Runs `k` over the iteration space `dims` (1 to 4 dimensions, matching the kernel's position
/// rank) with `args` on the device the scheduling rule picks for its tensor arguments
/// (choose_resource): on a CUDA device when the kernel has a CUDA launcher (enqueued on the
/// device's stream, not waited for), else in parallel on the CPU (OpenMP threads, each running
/// a block of positions through the kernel's own loop). Tensor arguments are locked on that
/// device for the duration. Before anything runs it checks the argument count and types, the
/// integer arguments' ranges (overflow_error), dims (value_error), and the shape rules the
/// kernel declares (value_error; Note [kernel shape rules]); an error raised inside the kernel
/// is rethrown here as its typed error with the kernel's message. In checked mode (Note
/// [checked mode]) unchecked views check every access. A kernel with only a CUDA launcher
/// raises runtime_error when CUDA is not initialised.
ISTHMUS_API void parallel_do(const shape_t& dims, std::span<const value> args, const kernel& k);

/// Options for the compiler driver.
struct compile_options {
    /// Extra compiler flags (part of the cache key).
    std::vector<std::string> flags;
    /// Cache directory; empty: $ISTHMUS_CACHE_DIR, else $XDG_CACHE_HOME/isthmus, else
    /// ~/.cache/isthmus.
    std::string cache_dir;
    /// The source language: "c++" (also "cpp", "cxx"), or "cuda" (also "cu"; compiled with
    /// nvcc, see docs/plugins.md "CUDA kernels"). Empty: C++ for compile_string; for
    /// compile_file, CUDA when the file ends in ".cu", else C++. Anything else: value_error.
    std::string language;
    /// Which compiler CUDA source gets (Note [NVRTC plugins], docs/plugins.md): "auto" (or empty:
    /// $ISTHMUS_CUDA_COMPILER, else auto) takes NVRTC for source whose kernels are declared with
    /// ISTHMUS_KERNEL when NVRTC is found, else nvcc; "nvrtc" insists (compile_error when it
    /// cannot); "nvcc" always uses nvcc. Anything else: value_error.
    std::string cuda_compiler;
    /// Whether a kernel-only C++ plugin may come back as a quick build first, its optimised
    /// build replacing it in the background (Note [compile tiers]; docs/plugins.md "Compile
    /// speed"). Python's compile_string turns it on (tiered=True) and hands the builds left at
    /// exit to a detached process; a C++ host that turns it on calls wait_for_compiles() before
    /// it exits, else the build under way stops at exit. $ISTHMUS_COMPILE_TIERS=0 turns it off
    /// for every compile.
    bool tiered = false;
};

/// Compiles C++ or CUDA source (opts.language; it uses isthmus/plugin.hpp, included for it, and
/// defines the plugin with ISTHMUS_PLUGIN(name, m)) into a cached plugin and loads it. Throws
/// compile_error with the compiler's diagnostics when the source does not compile, and when
/// CUDA source finds no nvcc (naming where it looked).
ISTHMUS_API std::shared_ptr<library> compile_string(const std::string& name,
                                                    const std::string& source,
                                                    const compile_options& opts = {});
/// Blocks until every optimised build under way in the background has finished and replaced its
/// quick build (See Note [compile tiers]). A C++ host that compiles with `tiered` calls it before
/// it exits, so that the cache holds the optimised builds for the next run (at exit, the build
/// under way stops and the queued ones are dropped).
ISTHMUS_API void wait_for_compiles();
/// An optimised build that had not finished (See Note [compile tiers]): what compile_string
/// needs to build it again, untiered.
struct pending_build {
    std::string name;               ///< the plugin's name
    std::string source;             ///< its source
    std::vector<std::string> flags; ///< compile_options::flags
    std::string cache_dir;          ///< the cache directory it was compiled into
};
/// Stops the background builds for good: the one under way is stopped (its compiler killed, its
/// files removed) and the queued ones are dropped; returns them all, for another process to
/// build. The Python module calls it at exit and hands them to a detached process.
ISTHMUS_API std::vector<pending_build> stop_background_builds();
/// compile_string on a file's contents; the plugin is named after the file's stem, and a ".cu"
/// file is CUDA unless opts.language says otherwise.
ISTHMUS_API std::shared_ptr<library> compile_file(const std::string& path,
                                                  const compile_options& opts = {});
/// Adds a directory to NVRTC's search (before the loader's path; the Python package adds PyPI's
/// nvidia-cuda-nvrtc). Takes effect for searches after a failed one.
ISTHMUS_API void add_nvrtc_search_dir(const std::string& dir);
/// The NVRTC library compile_string uses for CUDA source ("" when none is found).
ISTHMUS_API std::string nvrtc_library();
/// The cache directory compile_string would use with `opts`.
ISTHMUS_API std::string cache_dir(const compile_options& opts = {});
/// The compiler command the driver uses ($CXX, else "g++").
ISTHMUS_API std::string compiler();
/// The directory holding isthmus/plugin.hpp that compiled plugins include.
ISTHMUS_API std::string plugin_include_dir();

/// What a slow compile_string / compile_file reports, once, while it runs (Note [compile
/// notices] in plugins/src/compile_notice.cpp): a cold compile takes seconds, and without a
/// word a user cannot tell it from a hang.
struct compile_notice {
    std::string plugin;   ///< the plugin's name
    std::string language; ///< "C++" or "CUDA"
    std::string compiler; ///< the compiler command that runs
    std::string library;  ///< the cache entry it writes: <cache dir>/<name>-<key>.so
    bool waiting = false; ///< true: another process holds the entry's lock and compiles it
    std::string message;  ///< all of the above as one line
};
/// Receives compile notices, on the compiling thread; it must not throw.
using compile_notice_handler = std::function<void(const compile_notice&)>;
/// Installs `handler` for later notices and returns the previous one. An empty handler restores
/// the default, which writes the message as one line to stderr unless ISTHMUS_VERBOSE=0. The
/// Python module installs one that logs to the "isthmus.compile" logger. A compile reports
/// after ISTHMUS_COMPILE_NOTICE_SECONDS (default 0.5) of compiling or of waiting for the lock.
ISTHMUS_API compile_notice_handler set_compile_notice_handler(compile_notice_handler handler);

namespace detail {
template <typename T>
struct is_tuple_result : std::false_type {};
template <typename... E>
struct is_tuple_result<std::tuple<E...>> : std::true_type {};
template <typename A, typename B>
struct is_tuple_result<std::pair<A, B>> : std::true_type {};

template <typename R>
R result_as(const value& r);

template <typename R, size_t... I>
R tuple_result_as(const cell& c, std::index_sequence<I...>) {
    ISTHMUS_CHECK(c.items.size() == sizeof...(I), type_error, "expected ", sizeof...(I),
                  " results, got ", c.items.size());
    return R(result_as<std::tuple_element_t<I, R>>(c.items[I])...);
}

/// A call's result as R: value, std::string, tensor, a number, or for a plugin returning several
/// values (a 1-d cell: Note [tuple results in the ABI]) a std::tuple / std::pair of those.
template <typename R>
R result_as(const value& r) {
    if constexpr (std::is_same_v<R, value>) {
        return r;
    } else if constexpr (std::is_same_v<R, std::string>) {
        return r.as_string();
    } else if constexpr (std::is_same_v<R, tensor>) {
        return r.as_tensor();
    } else if constexpr (is_tuple_result<R>::value) {
        return tuple_result_as<R>(r.as_cell(), std::make_index_sequence<std::tuple_size_v<R>>{});
    } else {
        return r.as_scalar().template to<R>();
    }
}
} // namespace detail

/// A typed view of a plugin function: `auto add = typed<double(double, double)>(lib, "add");`.
/// Several results: `typed<std::tuple<tensor, tensor>(tensor)>(lib, "split")`.
template <typename Sig>
class typed_function;
template <typename R, typename... A>
class typed_function<R(A...)> {
public:
    explicit typed_function(std::shared_ptr<function> f) : f_(std::move(f)) {}
    R operator()(A... a) const {
        value r = f_->call(std::span<const value>(
            std::array<value, sizeof...(A) + 1>{value(a)..., value()}.data(), sizeof...(A)));
        if constexpr (std::is_void_v<R>)
            return;
        else
            return detail::result_as<R>(r);
    }
    const function& get() const { return *f_; }

private:
    std::shared_ptr<function> f_;
};

/// Looks up a function and wraps it with a C++ signature.
template <typename Sig>
typed_function<Sig> typed(const library& lib, const std::string& name) {
    return typed_function<Sig>(lib.get_function(name));
}

namespace detail {
/// Note [call_python bridge]
/// ~~~~~~~~~~~~~~~~~~~~~~~~~
/// The host table's call_python slot converts ABI values and hands the call to this bridge, which
/// the Python module installs when it initialises (libisthmus with Python); without it, call_python
/// reports that Python is unavailable.
using python_bridge = value (*)(const std::string& qualified_name, std::span<const value> args);
void set_python_bridge(python_bridge fn) noexcept;
} // namespace detail

} // namespace isthmus::plugin_host
