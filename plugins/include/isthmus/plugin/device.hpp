// What kernel bodies touch (vec, views; access.hpp and device_loop.hpp hold the modifiers and the
// device loop), for g++, nvcc and NVRTC.
#pragma once

// Note [device layer]
// ~~~~~~~~~~~~~~~~~~~
// A kernel body, and everything it can touch, is compiled by three compilers: g++ (the CPU
// launcher), nvcc (CMake-built and nvcc-compiled .cu plugins) and NVRTC (the device pass of
// compile_string(lang="cuda"), Note [NVRTC plugins] in plugins/src/nvrtc_compile.cpp). NVRTC
// compiles device code only and has no standard library, so this header uses neither: under NVRTC
// (__CUDACC_RTC__) it defines the fixed-width integer types itself and includes nothing but
// plugin_abi.h; elsewhere it is included by isthmus/plugin/base.hpp, after the declarations its
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

// Note [the body inlined under Clang]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The fast loop is flattened (See Note [the fast loop is hot]): GCC then inlines everything below
// it, the kernel's body first. Clang's flatten inlines only the calls written in the flattened
// function itself, so the body, called in the position loops that inline into it, stayed an
// out-of-line call per position whenever its size passed Clang's threshold (a 3x3 clamped blur:
// no vectorised loop), and so did the layer's helpers the body calls (ip::row_sum: Note [row sums
// under Clang]). Under Clang the position loops call the body under this attribute (on a statement
// it forces that one call inline) and those helpers are declared with it; GCC needs neither.
#if defined(__clang__) && !defined(__CUDACC__)
#define ISTHMUS_PLUGIN_CLANG_INLINE [[clang::always_inline]]
#else
#define ISTHMUS_PLUGIN_CLANG_INLINE
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

// Note [unchecked views in the quick build]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// An element access goes through the view's at(), which maps each index by the access modifier
// and checks it in checked mode or in a stencil's interior (Note [view checks], Note [stencil
// interiors]): with map_index, failed and interior_dims, functions for the compiler to optimise
// before it inlines them, a ninth of a small kernel's quick build. In the quick build (See Note
// [the quick build's launcher] in isthmus/plugin/kernel_cpu.hpp) an 'unchecked view's at() never
// does more than sum index times stride: the quick build has no checked loop (a checked launch
// waits for the optimised build) and no stencil interiors, so its views' checked bit and interior
// dimensions are always 0. There at() sums the offsets alone (for every access: operator(),
// operator[], load, store and the derived kernels' mapped indices); other modifiers, and every view
// of the optimised build, map and check.

// The build's tier (See Note [the quick build's launcher] in isthmus/plugin/kernel_cpu.hpp).
struct this_build;
template <typename Build>
struct tier_policy {
    static constexpr bool quick = false;
};
template <typename T, typename>
struct dependent_on {
    using type = T;
};
/// True in the quick build's translation unit (See Note [the quick build's launcher]); F only
/// defers the lookup to an instantiation that depends on it.
template <typename F>
ISTHMUS_HD constexpr bool quick_build() {
    return tier_policy<typename dependent_on<this_build, F>::type>::quick;
}
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
} // namespace isthmus::plugin

#include "isthmus/plugin/access.hpp"

namespace isthmus::plugin {

// ---- tensor views ------------------------------------------------------------------------

namespace detail {
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
    /// `mapped` (when given) receives the indices after the map, for a derived kernel's gradient
    /// (Note [derived kernels] in isthmus/plugin/active_view.hpp).
    ISTHMUS_HD T* at(const int64_t* ii, int64_t* mapped = nullptr) const {
        int64_t off = 0;
        if constexpr (A == access::unchecked && detail::quick_build<T>()) {
            for (int d = 0; d < N; ++d) { // See Note [unchecked views in the quick build]
                if (mapped) mapped[d] = ii[d];
                off += ii[d] * strides_[d];
            }
        } else {
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
                if (mapped) mapped[d] = j;
                off += j * strides_[d];
            }
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
#if !defined(__CUDACC_RTC__)
    /// A view V of `t`, whose dtype and rank were checked already (arg_view).
    template <typename V>
    static V adopt(const isthmus_tensor& t) {
        V v;
        v.data_ = static_cast<typename V::element_type*>(t.data);
        for (int d = 0; d < V::rank; ++d) {
            v.shape_[d] = t.shape[d];
            v.strides_[d] = t.strides[d];
        }
        return v;
    }
    /// The element of `v` at `ii` after its access modifier, and the mapped indices.
    template <typename T, int N, access A>
    ISTHMUS_HD static T* at(const view<T, N, A>& v, const int64_t* ii, int64_t* mapped) {
        return v.at(ii, mapped);
    }
#endif
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

} // namespace detail

} // namespace isthmus::plugin

#include "isthmus/plugin/device_loop.hpp"
#include "isthmus/plugin/reduce.hpp"
