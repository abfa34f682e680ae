// The CUDA kernel launchers: device-kernel detection, nvcc's launcher (cuda_launch, device_loop)
// and the NVRTC entry launcher (entry_launch, argument blocks). Part of the kernel half of the
// layer (the NVRTC launcher is what a CUDA plugin's host pass needs); nvcc's launcher is
// compiled by nvcc only, never in a kernel-only compile.
#pragma once

#if defined(ISTHMUS_PLUGIN_LEAN) && defined(__CUDACC__)
#error "a kernel-only compile (ISTHMUS_PLUGIN_LEAN) is C++: nvcc compiles the full layer"
#endif

#include "isthmus/plugin/kernel_cpu.hpp"

namespace isthmus::plugin {

namespace detail {

/// Blocks of `threads` threads for `count` positions of a grid-stride loop: enough for one
/// position per thread, at most 65536 (far below grid.x's 2^31 - 1; the loop covers the rest).
inline unsigned cuda_blocks(int64_t count, int64_t threads) {
    const int64_t b = (count + threads - 1) / threads;
    return static_cast<unsigned>(b < 1 ? 1 : (b > (int64_t{1} << 16) ? (int64_t{1} << 16) : b));
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
           (view_binding::empty_modifier_view(arg_at<I>(converted)) || ...);
}

/// Whether every GPU launch of kernel F waits for its failure record (F says so with a static
/// `device_launch_waits`).
template <typename F>
constexpr bool device_launch_waits() {
    if constexpr (requires { F::device_launch_waits; })
        return F::device_launch_waits;
    else
        return false;
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
        if (ISTHMUS_UNLIKELY(static_cast<size_t>(nargs) != n)) check_arg_count(self, n, nargs);
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
    auto converted = convert_args<Tuple>(args, std::index_sequence<I...>{});
    (view_binding::bind(arg_at<I>(converted), static_cast<int32_t>(I), checked_mode), ...);
    check_launch(f, arg_at<I>(converted)...); // See Note [launch checks]
    // See Note [checked access on the GPU]: the launches whose accesses can fail wait.
    // (a derived backward's thread records it when its tape is full: Note [derived backward on
    // the GPU])
    const bool wait = launch_waits<Tuple>(converted, checked_mode, std::index_sequence<I...>{}) ||
                      device_launch_waits<F>();
    device_guard dg(self, device);
    constexpr int64_t threads = 256;
    const unsigned blocks = cuda_blocks(count, threads);
    auto launch = [&] {
        (void)cudaGetLastError(); // clear an earlier, non-sticky error of this runtime
        if (checked_mode)
            device_loop<true, F, P, std::remove_cvref_t<std::tuple_element_t<I, Tuple>>...>
                <<<blocks, static_cast<unsigned>(threads), 0, stream>>>(f, r,
                                                                        arg_at<I>(converted)...);
        else
            device_loop<false, F, P, std::remove_cvref_t<std::tuple_element_t<I, Tuple>>...>
                <<<blocks, static_cast<unsigned>(threads), 0, stream>>>(f, r,
                                                                        arg_at<I>(converted)...);
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
    auto converted = convert_args<Tuple>(args, std::index_sequence<I...>{});
    (view_binding::bind(arg_at<I>(converted), static_cast<int32_t>(I), checked_mode), ...);
    const auto block = block_of(arg_at<I>(converted)...);
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

/// The CUDA launcher module_base::kernel registers for kernel F: nvcc's for a device kernel in a
/// .cu translation unit, NVRTC's entry for a kernel declared with ISTHMUS_KERNEL when the plugin
/// has device code (See Note [NVRTC launcher]), else none.
template <typename F>
isthmus_kernel_launch_cuda cuda_launcher() {
#if defined(__CUDACC__)
    if constexpr (is_device_kernel<std::decay_t<F>>::value) return &kernel_impl_cuda<F>;
#else
    if constexpr (has_device_entry<std::decay_t<F>>)
        if (has_device_code()) return &kernel_impl_entry<F>;
#endif
    return nullptr;
}

} // namespace detail

} // namespace isthmus::plugin
