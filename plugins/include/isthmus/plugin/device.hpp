// What kernel bodies touch (vec, views, access modifiers, the device loop), for g++, nvcc and
// NVRTC.
#pragma once

// Note [device layer]
// ~~~~~~~~~~~~~~~~~~~
// A kernel body, and everything it can touch, is compiled by three compilers: g++ (the CPU
// launcher), nvcc (CMake-built and nvcc-compiled .cu plugins) and NVRTC (the device pass of
// compile_string(lang="cuda"), Note [NVRTC plugins] in plugins/src/nvrtc_compile.cpp). NVRTC
// compiles device code only and has no standard library, so this header uses neither: under NVRTC
// (__CUDACC_RTC__) it defines the fixed-width integer types itself and includes nothing but
// plugin_abi.h; elsewhere it is included by isthmus/plugin/core.hpp, after the declarations its
// host-side members call. Each type here has one definition for all three compilers, so a view or
// an argument block laid out by the host compiler is the same bytes the device code reads.

#if defined(__CUDACC_RTC__)
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#include "isthmus/plugin_abi.h"
#endif

// Note [one kernel body for CPU and GPU]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// What a kernel body touches (vec / ivec, view accessors, the access modifiers' index maps) is
// marked ISTHMUS_HD, which is `__host__ __device__` under nvcc and NVRTC and nothing for other
// compilers, so a plain C++ plugin is unchanged and a .cu plugin can call the same body on both
// sides. In a translation unit that nvcc compiles, m.kernel() also generates a CUDA launcher when
// the body is device-callable (see is_device_kernel in calls.hpp); a kernel declared with
// ISTHMUS_KERNEL gets one from NVRTC's device code (Note [NVRTC plugins]); the CPU launcher is
// always generated.
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define ISTHMUS_HD __host__ __device__
#else
#define ISTHMUS_HD
#endif

/// A branch hint for the failure paths of view accesses (GCC, Clang and nvcc's host and device
/// compilers all have __builtin_expect).
#if defined(__GNUC__) || defined(__clang__) || defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define ISTHMUS_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define ISTHMUS_UNLIKELY(x) (x)
#endif

namespace isthmus::plugin {

namespace detail {
/// T without const (the standard library's remove_const, which NVRTC does not have).
template <typename T>
struct unconst {
    using type = T;
};
template <typename T>
struct unconst<const T> {
    using type = T;
};
/// T without reference and const: a parameter's type as the launchers copy it.
template <typename T>
struct bare : unconst<T> {};
template <typename T>
struct bare<T&> : unconst<T> {};
template <typename T>
struct bare<T&&> : unconst<T> {};
} // namespace detail

// ---- fixed vectors -----------------------------------------------------------------------

/// A fixed-size vector (Quasar's vec2..vec4): value semantics, elementwise arithmetic.
template <typename T, int N>
struct vec {
    using value_type = T;
    T v[N];
    ISTHMUS_HD constexpr T& operator[](int i) { return v[i]; }
    ISTHMUS_HD constexpr const T& operator[](int i) const { return v[i]; }
    ISTHMUS_HD static constexpr int size() { return N; }
#define ISTHMUS_VEC_OP(OP)                                                                         \
    ISTHMUS_HD friend constexpr vec operator OP(const vec& a, const vec& b) {                      \
        vec r{};                                                                                   \
        for (int i = 0; i < N; ++i) r.v[i] = a.v[i] OP b.v[i];                                     \
        return r;                                                                                  \
    }                                                                                              \
    ISTHMUS_HD friend constexpr vec operator OP(const vec& a, T s) {                               \
        vec r{};                                                                                   \
        for (int i = 0; i < N; ++i) r.v[i] = a.v[i] OP s;                                          \
        return r;                                                                                  \
    }                                                                                              \
    ISTHMUS_HD friend constexpr vec operator OP(T s, const vec& a) {                               \
        vec r{};                                                                                   \
        for (int i = 0; i < N; ++i) r.v[i] = s OP a.v[i];                                          \
        return r;                                                                                  \
    }
    ISTHMUS_VEC_OP(+)
    ISTHMUS_VEC_OP(-)
    ISTHMUS_VEC_OP(*)
    ISTHMUS_VEC_OP(/)
#undef ISTHMUS_VEC_OP
    ISTHMUS_HD friend constexpr bool operator==(const vec& a, const vec& b) {
        for (int i = 0; i < N; ++i)
            if (!(a.v[i] == b.v[i])) return false;
        return true;
    }
};
using vec2 = vec<float, 2>;
using vec3 = vec<float, 3>;
using vec4 = vec<float, 4>;
using dvec2 = vec<double, 2>;
using dvec3 = vec<double, 3>;
using dvec4 = vec<double, 4>;
/// Integer positions: the last parameter of a kernel of rank N.
template <int N>
using ivec = vec<int64_t, N>;
using ivec2 = ivec<2>;
using ivec3 = ivec<3>;

// ---- tensor views ------------------------------------------------------------------------

/// Quasar's access modifiers: what an index outside [0, size) does.
///
/// A dimension of size 0 has no element to map to, whatever the modifier: an access into it is
/// an error, never a read or write of memory. On the CPU it raises index_error naming the
/// argument, the index and the shape; on the GPU it is recorded like a 'checked failure (Note
/// [checked access on the GPU]) and raised when the launch completes. 'unchecked views check
/// nothing unless the call runs in checked mode (Note [view checks]).
enum class access {
    unchecked, ///< no check (fastest; out of range is undefined behaviour outside checked mode)
    checked,   ///< raises index_error naming the index, the size, the argument and its shape
    clamped,   ///< clamps to the nearest edge element
    circular,  ///< wraps around (periodic)
    mirror     ///< reflects at the edges (..., 1, 0, 0, 1, ... ; half-sample symmetric)
};

namespace detail {

/// Note [view checks]
/// ~~~~~~~~~~~~~~~~~~
/// Every element access of a view goes through map_index, which maps one index of one dimension by
/// the view's access modifier and says whether there is an element at all. It fails for a 'checked
/// index outside [0, size), for any index into a dimension of size 0 under 'clamped, 'circular and
/// 'mirror (they have nothing to clamp, wrap or reflect to), and, in checked mode only, for an
/// 'unchecked index outside [0, size). A failure goes to the view's cold path: on the CPU it throws
/// index_error with the message below; on the GPU it records the failure and ends the thread
/// (Note [checked access on the GPU]). Either way a failed access never touches memory.
///
/// Checked mode (ISTHMUS_CALL_CHECKED, see Note [checked mode in the ABI]) is bit 0 of each
/// view's tag, set by the launcher when it binds the arguments (the other bits hold the
/// argument's position, for messages). The launchers are instantiated twice, once with the bit
/// a compile-time 0 and once 1 (kernel_loop<Checked>, grid_loop<Checked>), and pick one per
/// call. The loops run on by-value copies of the views (run_positions, the device kernel's
/// parameters) whose bit is that constant, so the compiler folds the test away: unchecked
/// kernels in normal mode compile to the loop they had before the flag existed
/// (docs/plugins.md has the measurements). Were the loop to read the views from memory whose
/// address escaped, it would lose vectorisation (a 60x slowdown measured on a scale kernel).
/// Note [stencil interiors]
/// ~~~~~~~~~~~~~~~~~~~~~~~~
/// A 'clamped, 'circular or 'mirror view maps every index, which costs little in itself but
/// hides from the compiler that neighbouring positions read neighbouring elements: a 3x3 blur's
/// nine reads become scalar loads (or gathers) where an unmodified view's become vector loads,
/// about 15x apart on an AVX-512 machine. The mapping changes nothing for an index inside the
/// tensor, so where every read is inside, it can be skipped. The launcher cannot see where a
/// body reads; the kernel says it: `.stencil({"x"}, r)` (ISTHMUS_PARAM_STENCIL in the ABI)
/// declares that the body reads x only within r elements of the position along its leading
/// dimensions. The CPU launcher then cuts each run of positions into the edges and the
/// interior, the positions at least r from every edge of every declared view, and runs the
/// interior on copies whose interior_dims() (tag bits 1-3, a constant in that loop, like the
/// checked bit) take indices as they are: the body compiles to the loop over plain strided
/// memory. The declaration only says where reads stay; a read beyond it in the interior that
/// still lands inside the tensor reads what the mapping would have given. Only one that lands
/// outside would differ, undefined behaviour in normal mode like an unchecked view's; checked
/// mode keeps the split and checks those reads, raising index_error that names the declaration
/// (k_access_stencil). Only kernels whose every mapping view declares a radius take the split;
/// the GPU launcher maps every index (its threads do not run along rows).
inline constexpr int k_access_stencil = 8; // or-ed into the modifier code of an access error

template <access A>
ISTHMUS_HD inline bool map_index(int64_t i, int64_t n, bool checked_mode, int64_t& j) {
    if constexpr (A == access::unchecked) {
        j = i;
        if (ISTHMUS_UNLIKELY(checked_mode))
            return static_cast<uint64_t>(i) < static_cast<uint64_t>(n);
        return true;
    } else if constexpr (A == access::checked) {
        (void)checked_mode;
        j = i;
        return static_cast<uint64_t>(i) < static_cast<uint64_t>(n);
    } else {
        (void)checked_mode;
        if (ISTHMUS_UNLIKELY(n <= 0)) { // nothing to clamp, wrap or reflect to
            j = 0;
            return false;
        }
        if constexpr (A == access::clamped) {
            j = i < n ? i : n - 1; // (two selects, no branch: the loop stays straight)
            j = j < 0 ? 0 : j;
        } else if constexpr (A == access::circular) {
            const int64_t r = i % n;
            j = r < 0 ? r + n : r;
        } else {
            const int64_t p = 2 * n;
            int64_t r = i % p;
            if (r < 0) r += p;
            j = r < n ? r : p - 1 - r;
        }
        return true;
    }
}

/// Note [checked access on the GPU]
/// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
/// Device code cannot throw, so a failed view access on the GPU (Note [view checks]) records the
/// first failure here (one record per plugin module and device, claimed with atomicCAS: the view's
/// modifier, the argument, the dimension, and up to 8 indices and sizes), and the thread then ends
/// (PTX `exit`), so it reads and writes nothing more: neither the element that is not there nor,
/// with a value it never got, any other. (The access returns a scratch element, which is never
/// reached; the grid-stride loop's other positions of that thread do not run, and the launch fails
/// anyway.) Kernel bodies must not use block barriers, which the grid-stride loop rules out
/// already. Other threads run on; what they write is written, as on the CPU where other blocks run
/// on until they see the first error. A launch that can fail this way waits: the CUDA launcher
/// clears the record, launches, reads the record back and syncs the stream, and then raises
/// index_error with the CPU's message. That is every launch of a kernel with a 'checked view, every
/// launch in checked mode, and a launch where a 'clamped, 'circular or 'mirror view has an empty
/// dimension; other launches return as soon as they are queued.
struct device_index_error {
    unsigned int failed;
    int modifier;
    int dim;
    int arg;
    int rank; ///< the view's rank; index and shape hold the first min(rank, 8)
    int unused;
    long long failing_index;
    long long failing_size;
    long long index[8];
    long long shape[8];
};

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
// Under NVRTC the record has external linkage, so the host finds it in the module by its
// mangled name (k_device_error_symbol in driver_launch.hpp); under nvcc it is per translation
// unit and reached through the runtime's symbol API.
#if defined(__CUDACC_RTC__)
__device__ device_index_error g_device_index_error;
#else
static __device__ device_index_error g_device_index_error;
#endif
/// Where failed accesses on the GPU go (room for the largest element, complex128).
alignas(16) static __device__ unsigned char g_device_scratch[16];

__device__ __noinline__ inline void record_device_failure(int modifier, int dim,
                                                          const int64_t* index,
                                                          const int64_t* shape, int rank, int arg) {
    if (atomicCAS(&g_device_index_error.failed, 0u, 1u) == 0u) {
        g_device_index_error.modifier = modifier;
        g_device_index_error.dim = dim;
        g_device_index_error.arg = arg;
        g_device_index_error.rank = rank;
        g_device_index_error.failing_index = index[dim];
        g_device_index_error.failing_size = shape[dim];
        for (int d = 0; d < rank && d < 8; ++d) {
            g_device_index_error.index[d] = index[d];
            g_device_index_error.shape[d] = shape[d];
        }
        __threadfence();
    }
}
#endif

struct view_binding;

} // namespace detail

/// A typed, strided N-d view of a tensor argument. `T` const: read-only (the host locks for
/// reading and may convert the dtype); non-const: read-write (exact dtype). `A` says what an
/// index outside the tensor does (see access; Note [view checks]).
template <typename T, int N, access A = access::unchecked>
class view {
public:
    using element_type = T;
    using value_type = typename detail::unconst<T>::type;
    static constexpr int rank = N;
    static constexpr access modifier = A;

    view() = default;
#if !defined(__CUDACC_RTC__)
    /// Views a tensor descriptor; throws type_error when the dtype or rank differs.
    explicit view(const isthmus_tensor& t) {
        detail::check_view_of(t, dtype_code<value_type>::value, N);
        data_ = static_cast<T*>(t.data);
        for (int d = 0; d < N; ++d) {
            shape_[d] = t.shape[d];
            strides_[d] = t.strides[d];
        }
    }
    /// The view as an ABI tensor (borrowing this view's shape and strides: keep the view alive
    /// while the descriptor is used), e.g. to pass it to call_python or a callback.
    isthmus_tensor abi() const {
        return {const_cast<value_type*>(data_),
                ISTHMUS_DEVICE_CPU,
                0,
                dtype_code<value_type>::value,
                N,
                shape_,
                strides_};
    }
#endif
    ISTHMUS_HD T* data() const {
        return data_;
    }
    ISTHMUS_HD int64_t size(int d) const {
        return shape_[d];
    }
    ISTHMUS_HD int64_t stride(int d) const {
        return strides_[d];
    }
    ISTHMUS_HD int64_t numel() const {
        int64_t n = 1;
        for (int d = 0; d < N; ++d) n *= shape_[d];
        return n;
    }
    /// Element at the given indices (one per dimension), after the access modifier.
    template <typename... I>
    ISTHMUS_HD T& operator()(I... idx) const {
        static_assert(sizeof...(I) == N, "one index per dimension");
        const int64_t ii[] = {static_cast<int64_t>(idx)...};
        return *at(ii);
    }
    /// Element at a position vector.
    ISTHMUS_HD T& operator[](const ivec<N>& p) const {
        return *at(p.v);
    }
    /// K consecutive elements along the last dimension, from `idx...` (Quasar's x[i, j, 0..2]).
    template <int K, typename... I>
    ISTHMUS_HD vec<value_type, K> load(I... idx) const {
        static_assert(sizeof...(I) == N, "one index per dimension");
        int64_t ii[] = {static_cast<int64_t>(idx)...};
        vec<value_type, K> r{};
        for (int k = 0; k < K; ++k, ++ii[N - 1]) r[k] = *at(ii);
        return r;
    }
    /// Stores K consecutive elements along the last dimension, from `idx...`.
    template <int K, typename... I>
    ISTHMUS_HD void store(const vec<value_type, K>& v, I... idx) const {
        static_assert(sizeof...(I) == N, "one index per dimension");
        int64_t ii[] = {static_cast<int64_t>(idx)...};
        for (int k = 0; k < K; ++k, ++ii[N - 1]) *at(ii) = v[k];
    }

private:
    friend struct detail::view_binding;

    /// The address of the element at `ii` after the access modifier (Note [view checks]).
    /// The leading dimensions that take an index as it is, in a stencil's interior (See Note
    /// [stencil interiors]); 0 elsewhere.
    ISTHMUS_HD int interior_dims() const {
        return static_cast<int>((tag_ >> 1) & 7);
    }
    ISTHMUS_HD T* at(const int64_t* ii) const {
        int64_t off = 0;
        for (int d = 0; d < N; ++d) {
            int64_t j;
            if (d < interior_dims()) {
                j = ii[d];
                if (ISTHMUS_UNLIKELY((tag_ & 1) != 0) &&
                    static_cast<uint64_t>(j) >= static_cast<uint64_t>(shape_[d]))
                    return failed(ii, d, detail::k_access_stencil);
            } else if (!detail::map_index<A>(ii[d], shape_[d], (tag_ & 1) != 0, j)) {
                return failed(ii, d, 0);
            }
            off += j * strides_[d];
        }
        return data_ + off;
    }
    ISTHMUS_HD T* failed(const int64_t* ii, int d, int how) const {
#if defined(__CUDA_ARCH__)
        detail::record_device_failure(static_cast<int>(A) | how, d, ii, shape_, N,
                                      static_cast<int>((tag_ >> 4) - 1));
        asm volatile("exit;"); // the thread stops here: nothing more is read or written
        return reinterpret_cast<T*>(detail::g_device_scratch); // (not reached)
#else
        detail::throw_access_error(static_cast<int>(A) | how, d, ii, shape_, N,
                                   static_cast<int>((tag_ >> 4) - 1));
#endif
    }

    T* data_ = nullptr;
    int64_t shape_[N > 0 ? N : 1] = {};
    int64_t strides_[N > 0 ? N : 1] = {};
    // Bit 0: checked mode (Note [view checks]); bits 1-3: interior_dims(); the rest: the
    // argument position + 1, for messages (0: not an argument). One 8-byte field, so that a view
    // stays a struct of 8-byte fields without padding, which compilers split into registers in the
    // kernels' loops.
    int64_t tag_ = 0;
};

namespace detail {
/// How the launchers tell a view which argument it is and whether the call runs in checked
/// mode (Note [view checks]); anything that is no view is left alone.
struct view_binding {
    template <typename T, int N, access A>
    ISTHMUS_HD static void bind(view<T, N, A>& v, int32_t arg, bool checked_mode) {
        v.tag_ = (static_cast<int64_t>(arg) + 1) * 16 + (checked_mode ? 1 : 0);
    }
    template <typename V>
    ISTHMUS_HD static void bind(V&, int32_t, bool) {}
    /// A copy of `v` with checked mode a compile-time constant and no interior dimensions
    /// (what the loops run on).
    template <bool Checked, typename V>
    ISTHMUS_HD static V rebound(V v) {
        if constexpr (requires { V::modifier; })
            v.tag_ = (v.tag_ & ~int64_t{15}) | (Checked ? 1 : 0);
        return v;
    }
    /// Whether V is a 'clamped, 'circular or 'mirror view, whose accesses map their indices.
    template <typename V>
    ISTHMUS_HD static constexpr bool maps_indices() {
        if constexpr (requires { V::modifier; })
            return V::modifier != access::unchecked && V::modifier != access::checked;
        else
            return false;
    }
    /// `v` in a stencil's interior: its first `dims` dimensions take indices as they are
    /// (See Note [stencil interiors]); anything but a mapping view is left alone.
    template <typename V>
    ISTHMUS_HD static V interior(V v, int dims) {
        if constexpr (maps_indices<V>())
            v.tag_ = (v.tag_ & ~int64_t{14}) | (static_cast<int64_t>(dims) << 1);
        (void)dims;
        return v;
    }
    /// A view's shape along dimension d (anything else: 0).
    template <typename V>
    ISTHMUS_HD static int64_t extent(const V& v, int d) {
        if constexpr (requires { V::modifier; }) return v.shape_[d];
        (void)v, (void)d;
        return 0;
    }
    /// Whether `v` (a view of rank 1 or more) steps by one element along its last dimension;
    /// true for anything else. See Note [unit-stride loops].
    template <typename V>
    ISTHMUS_HD static bool unit_inner(const V& v) {
        if constexpr (requires { V::modifier; }) {
            if constexpr (V::rank > 0) return v.strides_[V::rank - 1] == 1;
        }
        return true;
    }
    /// Tells the compiler that a 'clamped, 'circular or 'mirror view `v` has no empty
    /// dimension, for a view where empty_modifier_view(v) is false: its index maps then need no
    /// test for an empty dimension, and the access no failure path. See Note [unit-stride
    /// loops].
    template <typename V>
    ISTHMUS_HD static void assume_nonempty(const V& v) {
        if constexpr (requires { V::modifier; }) {
            if constexpr (V::modifier != access::unchecked && V::modifier != access::checked)
                for (int d = 0; d < V::rank; ++d)
                    if (v.shape_[d] <= 0) __builtin_unreachable();
        }
        (void)v;
    }
    /// `v` with the literal 1 as its last stride, for a view where unit_inner(v) holds: the
    /// compiler then sees the constant and vectorises along it. See Note [unit-stride loops].
    template <typename V>
    ISTHMUS_HD static V with_unit_inner(V v) {
        if constexpr (requires { V::modifier; }) {
            if constexpr (V::rank > 0) v.strides_[V::rank - 1] = 1;
        }
        return v;
    }
#if !defined(__CUDACC_RTC__)
    /// Whether `v` is a 'clamped, 'circular or 'mirror view with an empty dimension, whose
    /// accesses all fail.
    template <typename V>
    static bool empty_modifier_view(const V& v) {
        if constexpr (requires { V::modifier; }) {
            if constexpr (V::modifier != access::unchecked && V::modifier != access::checked)
                for (int d = 0; d < V::rank; ++d)
                    if (v.shape_[d] == 0) return true;
        }
        (void)v;
        return false;
    }
#endif
};

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
/// passes its address as the launch's second parameter. tests/python/test_compile_nvrtc.py compares
/// the host's sizeof with the parameter size NVRTC writes in the PTX.
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
