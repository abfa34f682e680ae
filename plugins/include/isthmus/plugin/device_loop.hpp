// The device loop: positions from linear indices, the CUDA grid loop, argument blocks and the
// NVRTC kernel entries (ISTHMUS_KERNEL). Part of the device layer: included at the end of
// isthmus/plugin/device.hpp, after views.
#pragma once

namespace isthmus::plugin {

namespace detail {

/// The position (C order, the last dimension fastest) of linear index `i` of `r`'s dims, in an
/// ivec-like P of rank N (the CPU and CUDA launchers' one decomposition).
template <typename P>
ISTHMUS_HD inline void position_of(P& pos, int64_t i, const isthmus_range& r) {
    constexpr int N = P::size();
    for (int d = N - 1; d >= 0; --d) {
        pos[d] = static_cast<typename P::value_type>(i % r.dims[d]);
        i /= r.dims[d];
    }
}

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
// Note [CUDA launcher]
// ~~~~~~~~~~~~~~~~~~~~
// One thread per position in a grid-stride loop over [begin, end) of the range; each thread turns
// its linear position into the position P (an ivec in C order, the last dimension fastest, or an
// integer for 1-d) and calls the body, inlined. Arguments are converted once on the host and copied
// into the kernel's parameters by value (views carry pointer, shape and strides). Instantiated once
// per value of Checked, the launch's checked mode, which each view copy holds as a constant
// (Note [view checks]). The kernels nvcc generates (device_loop in calls.hpp) and NVRTC's entries
// (ISTHMUS_KERNEL) both run it.
template <bool Checked, typename P, typename F, typename... V>
__device__ inline void grid_loop(F f, const isthmus_range& r, const V&... v) {
    const int64_t count = r.end - r.begin;
    const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < count;
         t += step) {
        const int64_t i = r.begin + t;
        if constexpr (requires { P::size(); }) {
            P pos{};
            position_of(pos, i, r);
            f(view_binding::rebound<Checked>(v)..., pos);
        } else {
            f(view_binding::rebound<Checked>(v)..., static_cast<P>(i));
        }
    }
}
#endif

// ---- kernels declared with ISTHMUS_KERNEL -------------------------------------------------

/// Note [argument blocks]
/// ~~~~~~~~~~~~~~~~~~~~~~
/// An NVRTC kernel entry is `extern "C"` (so the host names it without a mangled name) and so
/// cannot be a template; it takes its arguments as one by-value block, the kernel's parameters but
/// the position, in order. The block is a chain of {head, tail} structs of the parameters' own
/// types (views, numbers, vec), laid out the same by the host compiler and by NVRTC: the types are
/// defined once (this header) and the x86-64 and NVPTX ABIs give them the same sizes and alignments
/// (long double, which differs, is refused). The host builds it from the converted arguments and
/// passes its address as the launch's second parameter. tests/python/plugins/test_compile_nvrtc.py
/// compares the host's sizeof with the parameter size NVRTC writes in the PTX.
template <typename... V>
struct args_block {};
template <typename H, typename... T>
struct args_block<H, T...> {
    H head;
    args_block<T...> tail;
};

template <typename... A>
struct type_list {};
/// The argument block and the position type of a kernel whose parameters are A...
template <typename Done, typename... A>
struct split_position;
template <typename... D, typename P>
struct split_position<type_list<D...>, P> {
    using block = args_block<D...>;
    using position = P;
};
template <typename... D, typename H, typename N, typename... R>
struct split_position<type_list<D...>, H, N, R...> : split_position<type_list<D..., H>, N, R...> {};

/// kernel_parts<F>::block / ::position for a kernel functor F (its operator() const).
template <typename F>
struct kernel_parts : kernel_parts<decltype(&F::operator())> {};
template <typename C, typename... A>
struct kernel_parts<void (C::*)(A...) const>
    : split_position<type_list<>, typename bare<A>::type...> {};

#if defined(__CUDACC_RTC__)
template <bool Checked, typename P, typename F, typename... V>
__device__ inline void run_block(const F& f, const isthmus_range& r, const args_block<>&,
                                 const V&... v) {
    grid_loop<Checked, P>(f, r, v...);
}
template <bool Checked, typename P, typename F, typename H, typename... T, typename... V>
__device__ inline void run_block(const F& f, const isthmus_range& r, const args_block<H, T...>& b,
                                 const V&... v) {
    run_block<Checked, P>(f, r, b.tail, v..., b.head);
}
#endif

} // namespace detail

} // namespace isthmus::plugin

/// Note [NVRTC kernel entries]
/// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
/// Under NVRTC, ISTHMUS_KERNEL also emits the kernel's two device entries, `isthmus_kernel_NAME`
/// and `isthmus_kernel_NAME_checked` (the launch's checked mode as a constant, Note [view checks]);
/// elsewhere nothing.
#if defined(__CUDACC_RTC__)
#define ISTHMUS_KERNEL_ENTRIES_(NAME)                                                              \
    extern "C" __global__ void isthmus_kernel_##NAME(                                              \
        isthmus_range r, ::isthmus::plugin::detail::kernel_parts<NAME>::block b) {                 \
        ::isthmus::plugin::detail::run_block<                                                      \
            false, ::isthmus::plugin::detail::kernel_parts<NAME>::position>(NAME{}, r, b);         \
    }                                                                                              \
    extern "C" __global__ void isthmus_kernel_##NAME##_checked(                                    \
        isthmus_range r, ::isthmus::plugin::detail::kernel_parts<NAME>::block b) {                 \
        ::isthmus::plugin::detail::run_block<                                                      \
            true, ::isthmus::plugin::detail::kernel_parts<NAME>::position>(NAME{}, r, b);          \
    }
#else
#define ISTHMUS_KERNEL_ENTRIES_(NAME)
#endif

/// Declares a kernel as a function object type NAME whose body follows, for the CPU and the GPU:
///
///     ISTHMUS_KERNEL(scale, ip::view<const float, 1> x, ip::view<float, 1> y, float s,
///                    int64_t i) {
///         y(i) = s * x(i);
///     }
///     ISTHMUS_PLUGIN(example, m) { m.kernel("scale", scale{}, {"x", "y", "s"}); }
///
/// The parameters are a kernel's (the position last). Written at namespace scope, the body is
/// what compile_string(lang="cuda") compiles with NVRTC (Note [NVRTC plugins]); nvcc and g++
/// see an ordinary device-callable function object (`using device_kernel = void`), so the same
/// source also builds with nvcc or as a C++ plugin.
#define ISTHMUS_KERNEL(NAME, ...)                                                                  \
    struct NAME {                                                                                  \
        using device_kernel = void;                                                                \
        static constexpr const char* device_entry = "isthmus_kernel_" #NAME;                       \
        ISTHMUS_HD void operator()(__VA_ARGS__) const;                                             \
    };                                                                                             \
    ISTHMUS_KERNEL_ENTRIES_(NAME)                                                                  \
    ISTHMUS_HD inline void NAME::operator()(__VA_ARGS__) const
