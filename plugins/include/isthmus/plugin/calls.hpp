// The plugin author layer's calls: introspection of callables, function and kernel launchers
// (CPU and CUDA), callback::call and call_python.
#pragma once

#include "isthmus/plugin/values.hpp"

namespace isthmus::plugin {

namespace detail {

// ---- callable introspection --------------------------------------------------------------

template <typename F>
struct fn_traits : fn_traits<decltype(&F::operator())> {};
template <typename R, typename... A>
struct fn_traits<R (*)(A...)> {
    using result = R;
    using args = std::tuple<A...>;
};
template <typename R, typename... A>
struct fn_traits<R(A...)> : fn_traits<R (*)(A...)> {};
template <typename C, typename R, typename... A>
struct fn_traits<R (C::*)(A...) const> : fn_traits<R (*)(A...)> {};
template <typename C, typename R, typename... A>
struct fn_traits<R (C::*)(A...)> : fn_traits<R (*)(A...)> {};

/// Owned strings and tables backing the descriptors.
struct storage {
    std::deque<std::string> strings;
    std::deque<std::vector<isthmus_param>> params;
    /// Keeps a copy of `s` as long as the module; returns its text.
    ISTHMUS_PLUGIN_SUPPORT const char* keep(std::string s);
};

/// "name(a: float32, x: tensor) -> float64": a function's signature text.
ISTHMUS_PLUGIN_SUPPORT std::string signature_of(const std::string& name,
                                                const std::vector<isthmus_param>& ps,
                                                const char* result, size_t skip_front = 0);

/// "(tensor, scalar)": the result spelling of a tuple of `n` results named `names`.
ISTHMUS_PLUGIN_SUPPORT std::string tuple_result_name(const char* const* names, size_t n);

template <typename R>
const char* result_name();

template <typename R, size_t... I>
const char* tuple_result_name(std::index_sequence<I...>) {
    static const char* const names[] = {
        result_name<std::remove_cvref_t<std::tuple_element_t<I, R>>>()..., ""};
    static const std::string s = tuple_result_name(names, sizeof...(I));
    return s.c_str();
}

/// The result kind in a signature: "tensor", "scalar", "string", "object", "" (none), or a
/// tuple of them, "(tensor, tensor)".
template <typename R>
const char* result_name() {
    if constexpr (std::is_void_v<R>)
        return "";
    else if constexpr (is_tuple_like<R>::value)
        return tuple_result_name<R>(std::make_index_sequence<std::tuple_size_v<R>>{});
    else if constexpr (is_tensor<R>::value || is_vec<R>::value || is_view<R>::value)
        return "tensor";
    else if constexpr (std::is_convertible_v<R, std::string_view>)
        return "string";
    else if constexpr (is_shared<R>::value)
        return "object";
    else
        return "scalar";
}

template <typename F, typename R, typename Tuple, size_t... I>
R apply_args(F& f, isthmus_call* call, const isthmus_value* args, std::index_sequence<I...>) {
    constexpr bool has_views =
        (is_view<std::remove_cvref_t<std::tuple_element_t<I, Tuple>>>::value || ...);
    if constexpr (has_views) {
        // Views learn their argument position and the call's checked mode (Note [view checks]).
        auto converted = std::make_tuple(get_arg<std::tuple_element_t<I, Tuple>>(args, I)...);
        const bool checked_mode = (call_flags(call) & ISTHMUS_CALL_CHECKED) != 0;
        (view_binding::bind(std::get<I>(converted), static_cast<int32_t>(I), checked_mode), ...);
        return f(std::move(std::get<I>(converted))...);
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

/// Blocks of `threads` threads for `count` positions of a grid-stride loop: enough for one
/// position per thread, at most 65536 (far below grid.x's 2^31 - 1; the loop covers the rest).
inline unsigned cuda_blocks(int64_t count, int64_t threads) {
    const int64_t b = (count + threads - 1) / threads;
    return static_cast<unsigned>(b < 1 ? 1 : (b > (int64_t{1} << 16) ? (int64_t{1} << 16) : b));
}

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
        for (int64_t i = r.begin; i < r.end; ++i) f(v..., static_cast<P>(i));
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
                f(v..., pos);
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

template <bool Checked, typename P, typename F, typename... V>
[[gnu::always_inline]] inline void run_positions(F& f, const isthmus_range& r, V... v) {
    ((v = view_binding::rebound<Checked>(v)), ...);
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
                 std::index_sequence<I...>) {
    using P = std::remove_cvref_t<std::tuple_element_t<sizeof...(I), Tuple>>;
    auto converted = std::make_tuple(get_arg<std::tuple_element_t<I, Tuple>>(args, I)...);
    (view_binding::bind(std::get<I>(converted), static_cast<int32_t>(I), Checked), ...);
    run_positions<Checked, P>(f, r, std::get<I>(converted)...);
}

// Note [checked loops are cold]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Checked mode is for finding a kernel's bad index (Note [view checks]), and its loop checks every
// access, so it never earns -O3's vectoriser, yet it was optimised like the fast loop in every
// plugin compile: a third of a small kernel's compile. Marked cold, it is optimised for size.
template <typename F, typename Tuple, size_t... I>
[[gnu::cold, gnu::noinline]] void checked_kernel_loop(F& f, const isthmus_range& r,
                                                      const isthmus_value* args,
                                                      std::index_sequence<I...> is) {
    kernel_loop<true, F, Tuple>(f, r, args, is);
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
[[gnu::hot, gnu::noinline, gnu::flatten]] void fast_kernel_loop(F& f, const isthmus_range& r,
                                                                const isthmus_value* args,
                                                                std::index_sequence<I...> is) {
    kernel_loop<false, F, Tuple>(f, r, args, is);
}

/// "the CPU", "cuda:1": a device for messages.
ISTHMUS_PLUGIN_SUPPORT std::string device_text(int32_t type, int32_t id);

/// Checks that a tensor the body sees through parameter type P lives where the launcher runs
/// (a host bug otherwise: the host locks tensors on the launcher's device).
template <typename P>
void check_device(const isthmus_kernel* self, const isthmus_value& v, size_t index, int32_t type,
                  int32_t id) {
    using T = std::remove_cvref_t<P>;
    if constexpr (is_view<T>::value || std::is_same_v<T, isthmus_tensor>) {
        if (v.kind != ISTHMUS_VALUE_TENSOR) return;
        const isthmus_tensor& t = v.u.t;
        if (t.device_type != type || (type == ISTHMUS_DEVICE_CUDA && t.device_id != id))
            throw value_error(cat(self->signature, ": ", arg_label(static_cast<int64_t>(index)),
                                  " is a tensor on ", device_text(t.device_type, t.device_id),
                                  " but the kernel runs on ", device_text(type, id)));
    }
}

template <typename Tuple, size_t... I>
void check_devices(const isthmus_kernel* self, const isthmus_value* args, int32_t type, int32_t id,
                   std::index_sequence<I...>) {
    (check_device<std::tuple_element_t<I, Tuple>>(self, args[I], I, type, id), ...);
}

template <typename F>
int kernel_impl(const isthmus_kernel* self, isthmus_call* call, const isthmus_range* range,
                const isthmus_value* args, int32_t nargs) noexcept {
    using tr = fn_traits<std::decay_t<F>>;
    constexpr size_t n = std::tuple_size_v<typename tr::args> - 1;
    call_scope scope(call, self->params, self->nparams);
    try {
        if (static_cast<size_t>(nargs) != n)
            throw type_error(cat(self->signature, ": expected ", n, " argument(s), got ", nargs));
        check_devices<typename tr::args>(self, args, ISTHMUS_DEVICE_CPU, 0,
                                         std::make_index_sequence<n>{});
        F& f = *static_cast<F*>(self->data);
        if (ISTHMUS_UNLIKELY(call_flags(call) & ISTHMUS_CALL_CHECKED))
            checked_kernel_loop<F, typename tr::args>(f, *range, args,
                                                      std::make_index_sequence<n>{});
        else
            fast_kernel_loop<F, typename tr::args>(f, *range, args, std::make_index_sequence<n>{});
        return 0;
    } catch (...) {
        return report(call);
    }
}

template <typename T>
struct is_checked_view : std::false_type {};
template <typename T, int N>
struct is_checked_view<view<T, N, access::checked>> : std::true_type {};

} // namespace detail

/// Note [device kernels]
/// ~~~~~~~~~~~~~~~~~~~~~
/// Whether m.kernel() also generates a CUDA launcher for a body of type F. Only in a translation
/// unit nvcc compiles (elsewhere always false), and then for
///  - an extended `[] __host__ __device__ (...) {...}` lambda (nvcc's --extended-lambda; a
///    plain lambda is host-only and gets the CPU launcher alone), and
///  - a function object type that says so with a member `using device_kernel = void;` (its
///    operator() must be `__host__ __device__`, i.e. ISTHMUS_HD).
/// Specialise it (derive from std::true_type) to opt a type in from outside. Function pointers
/// are host-only. A device kernel takes views, numbers and vec / ivec only: they are copied by
/// value into the kernel's parameters (strings and raw isthmus_tensor / isthmus_value point to
/// host memory and are refused at compile time).
template <typename F, typename = void>
struct is_device_kernel : std::false_type {};
#if defined(__CUDACC__)
template <typename F>
struct is_device_kernel<F, std::enable_if_t<__nv_is_extended_host_device_lambda_closure_type(F)>>
    : std::true_type {};
namespace detail {
// (a concept, not std::void_t: nvcc's front end does not treat void_t's unused argument as a
// substitution failure)
template <typename F>
concept has_device_kernel_tag = requires {
    typename F::device_kernel;
};
} // namespace detail
template <typename F>
struct is_device_kernel<F, std::enable_if_t<!__nv_is_extended_host_device_lambda_closure_type(F) &&
                                            detail::has_device_kernel_tag<F>>> : std::true_type {};
#endif

namespace detail {

/// What a device kernel may take: views, numbers, fixed vectors (all copied by value; long
/// double, whose size differs between the host and the GPU, is none of them).
template <typename T>
struct device_param
    : std::bool_constant<is_view<T>::value || is_vec<T>::value ||
                         (std::is_arithmetic_v<T> && !std::is_same_v<T, long double>)> {};

/// Checks a device launch's parameter types at compile time (Tuple: the kernel's parameters).
template <typename Tuple, size_t... I>
constexpr void check_device_params(std::index_sequence<I...>) {
    static_assert(
        (std::is_trivially_copyable_v<std::remove_cvref_t<std::tuple_element_t<I, Tuple>>> && ...),
        "isthmus::plugin: a kernel that runs on the GPU takes trivially copyable parameters only "
        "(views, numbers, vec / ivec)");
    static_assert((device_param<std::remove_cvref_t<std::tuple_element_t<I, Tuple>>>::value && ...),
                  "isthmus::plugin: a kernel that runs on the GPU takes views, numbers and vec / "
                  "ivec only (strings, isthmus_tensor and isthmus_value point to host memory)");
}

/// Whether a device launch must wait for the kernel and read the failure record (Note
/// [checked access on the GPU]): a kernel with a 'checked view, checked mode, or a view whose
/// modifier has no element in an empty dimension.
template <typename Tuple, typename Converted, size_t... I>
bool launch_waits(const Converted& converted, bool checked_mode, std::index_sequence<I...>) {
    constexpr bool has_checked_view =
        (is_checked_view<std::remove_cvref_t<std::tuple_element_t<I, Tuple>>>::value || ...);
    return has_checked_view || checked_mode ||
           (view_binding::empty_modifier_view(std::get<I>(converted)) || ...);
}

/// Raises the failure a device launch recorded (Note [checked access on the GPU]) as the
/// index_error the CPU raises for it.
[[noreturn]] ISTHMUS_PLUGIN_SUPPORT void throw_device_index_error(const device_index_error& e);

/// The CUDA launchers' frame around `launch(type_identity<parameter tuple>, checked_mode,
/// index_sequence)`: the running call, the argument count, the arguments' devices, and errors
/// reported to the host.
template <typename F, typename Launch>
int device_kernel_call(const isthmus_kernel* self, isthmus_call* call, const isthmus_value* args,
                       int32_t nargs, int32_t device, Launch&& launch) noexcept {
    using tr = fn_traits<std::decay_t<F>>;
    constexpr size_t n = std::tuple_size_v<typename tr::args> - 1;
    call_scope scope(call, self->params, self->nparams);
    try {
        if (static_cast<size_t>(nargs) != n)
            throw type_error(cat(self->signature, ": expected ", n, " argument(s), got ", nargs));
        check_devices<typename tr::args>(self, args, ISTHMUS_DEVICE_CUDA, device,
                                         std::make_index_sequence<n>{});
        launch(std::type_identity<typename tr::args>{},
               (call_flags(call) & ISTHMUS_CALL_CHECKED) != 0, std::make_index_sequence<n>{});
        return 0;
    } catch (...) {
        return report(call);
    }
}

#if defined(__CUDACC__)
// The kernel nvcc generates for a device kernel body: Note [CUDA launcher] in device.hpp.
template <bool Checked, typename F, typename P, typename... V>
__global__ void device_loop(F f, isthmus_range r, V... v) {
    grid_loop<Checked, P>(f, r, v...);
}

/// Serialises the launch-and-check sequence of kernels with checked views (they share the
/// error record of Note [checked access on the GPU]).
inline std::mutex& checked_launch_mutex() {
    static std::mutex m;
    return m;
}

inline void cuda_check(cudaError_t e, const isthmus_kernel* self, int32_t device,
                       const char* what) {
    if (e != cudaSuccess)
        throw error(cat("CUDA ", what, " for kernel ", self->name, " on cuda:", device,
                        " failed: ", cudaGetErrorName(e), ": ", cudaGetErrorString(e)));
}

/// Restores the calling thread's current device (of the plugin's CUDA runtime) on exit.
struct device_guard {
    int previous = -1;
    device_guard(const isthmus_kernel* self, int32_t device) {
        if (cudaGetDevice(&previous) != cudaSuccess) previous = -1;
        cuda_check(cudaSetDevice(device), self, device, "cudaSetDevice");
    }
    ~device_guard() {
        if (previous >= 0) cudaSetDevice(previous);
    }
};

template <typename F, typename Tuple, size_t... I>
void cuda_launch(const isthmus_kernel* self, F& f, const isthmus_range& r,
                 const isthmus_value* args, int32_t device, cudaStream_t stream, bool checked_mode,
                 std::index_sequence<I...>) {
    using P = std::remove_cvref_t<std::tuple_element_t<sizeof...(I), Tuple>>;
    check_device_params<Tuple>(std::index_sequence<I...>{});
    const int64_t count = r.end - r.begin;
    if (count <= 0) return;
    auto converted = std::make_tuple(get_arg<std::tuple_element_t<I, Tuple>>(args, I)...);
    (view_binding::bind(std::get<I>(converted), static_cast<int32_t>(I), checked_mode), ...);
    // See Note [checked access on the GPU]: the launches whose accesses can fail wait.
    const bool wait = launch_waits<Tuple>(converted, checked_mode, std::index_sequence<I...>{});
    device_guard dg(self, device);
    constexpr int64_t threads = 256;
    const unsigned blocks = cuda_blocks(count, threads);
    auto launch = [&] {
        (void)cudaGetLastError(); // clear an earlier, non-sticky error of this runtime
        if (checked_mode)
            device_loop<true, F, P, std::remove_cvref_t<std::tuple_element_t<I, Tuple>>...>
                <<<blocks, static_cast<unsigned>(threads), 0, stream>>>(f, r,
                                                                        std::get<I>(converted)...);
        else
            device_loop<false, F, P, std::remove_cvref_t<std::tuple_element_t<I, Tuple>>...>
                <<<blocks, static_cast<unsigned>(threads), 0, stream>>>(f, r,
                                                                        std::get<I>(converted)...);
        cuda_check(cudaGetLastError(), self, device, "kernel launch");
    };
    if (!wait) {
        launch();
    } else {
        std::lock_guard lk(checked_launch_mutex());
        const device_index_error clear{};
        cuda_check(cudaMemcpyToSymbolAsync(g_device_index_error, &clear, sizeof clear, 0,
                                           cudaMemcpyHostToDevice, stream),
                   self, device, "clearing the checked-access record");
        launch();
        device_index_error got{};
        cuda_check(cudaMemcpyFromSymbolAsync(&got, g_device_index_error, sizeof got, 0,
                                             cudaMemcpyDeviceToHost, stream),
                   self, device, "reading the checked-access record");
        cuda_check(cudaStreamSynchronize(stream), self, device, "kernel execution");
        if (got.failed) throw_device_index_error(got);
    }
}

template <typename F>
int kernel_impl_cuda(const isthmus_kernel* self, isthmus_call* call, const isthmus_range* range,
                     const isthmus_value* args, int32_t nargs, int32_t device,
                     void* stream) noexcept {
    return device_kernel_call<F>(self, call, args, nargs, device,
                                 [&](auto tuple, bool checked_mode, auto seq) {
                                     cuda_launch<F, typename decltype(tuple)::type>(
                                         self, *static_cast<F*>(self->data), *range, args, device,
                                         static_cast<cudaStream_t>(stream), checked_mode, seq);
                                 });
}
#endif

// Note [NVRTC launcher]
// ~~~~~~~~~~~~~~~~~~~~~
// A kernel declared with ISTHMUS_KERNEL in a plugin that compile_string built with NVRTC
// (Note [NVRTC plugins] in plugins/src/nvrtc_compile.cpp) has its device code beside the plugin's
// library in the cache (<entry>.sm_XY.cubin per architecture, <entry>.ptx), and its host side is
// ordinary C++ from g++. Its CUDA launcher converts and binds the arguments as the nvcc launcher
// does, packs them into the kernel's argument block (Note [argument blocks]) and hands the block to
// launch_device_entry, which loads the module through the CUDA driver (once per device) and
// launches the entry by name on the host's stream. Registered only when the library has device code
// beside it (a C++ plugin that uses ISTHMUS_KERNEL runs on the CPU).

template <typename F>
concept has_device_entry = requires {
    F::device_entry;
};

/// One launch of an NVRTC kernel entry.
struct entry_launch {
    const isthmus_kernel* self;
    const char* entry; ///< the entry's name, without "_checked"
    bool checked_mode; ///< launch the "_checked" entry
    bool wait;         ///< wait, and raise a recorded failure (Note [checked access on the GPU])
    const isthmus_range* range;
    const void* block; ///< the argument block and its size
    size_t block_size;
    int32_t device;
    void* stream; ///< a cudaStream_t / CUstream of the device's primary context
};
/// Whether this plugin's library has device code beside it (the .ptx NVRTC wrote).
ISTHMUS_PLUGIN_SUPPORT bool has_device_code();
/// Loads the device code (once per device) and launches an entry; throws error on failure.
ISTHMUS_PLUGIN_SUPPORT_CALL void launch_device_entry(const entry_launch& l);

inline args_block<> block_of() {
    return {};
}
template <typename H, typename... T>
args_block<H, T...> block_of(const H& h, const T&... t) {
    return {h, block_of(t...)};
}

template <typename F, typename Tuple, size_t... I>
void entry_launch_of(const isthmus_kernel* self, const isthmus_range& r, const isthmus_value* args,
                     int32_t device, void* stream, bool checked_mode, std::index_sequence<I...>) {
    check_device_params<Tuple>(std::index_sequence<I...>{});
    if (r.end - r.begin <= 0) return;
    auto converted = std::make_tuple(get_arg<std::tuple_element_t<I, Tuple>>(args, I)...);
    (view_binding::bind(std::get<I>(converted), static_cast<int32_t>(I), checked_mode), ...);
    const auto block = block_of(std::get<I>(converted)...);
    static_assert(
        std::is_same_v<std::remove_const_t<decltype(block)>, typename kernel_parts<F>::block>,
        "isthmus::plugin: the argument block differs from the kernel's parameters");
    launch_device_entry({self, F::device_entry, checked_mode,
                         launch_waits<Tuple>(converted, checked_mode, std::index_sequence<I...>{}),
                         &r, &block, sizeof block, device, stream});
}

template <typename F>
int kernel_impl_entry(const isthmus_kernel* self, isthmus_call* call, const isthmus_range* range,
                      const isthmus_value* args, int32_t nargs, int32_t device,
                      void* stream) noexcept {
    return device_kernel_call<F>(self, call, args, nargs, device,
                                 [&](auto tuple, bool checked_mode, auto seq) {
                                     entry_launch_of<F, typename decltype(tuple)::type>(
                                         self, *range, args, device, stream, checked_mode, seq);
                                 });
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
