// The plugin author layer's tensor views (access modifiers, checked indexing) and tensors.
#pragma once

#include "isthmus/plugin/core.hpp"

namespace isthmus::plugin {

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

/// Note [view checks]: every element access of a view goes through map_index, which maps one
/// index of one dimension by the view's access modifier and says whether there is an element
/// at all. It fails for a 'checked index outside [0, size), for any index into a dimension of
/// size 0 under 'clamped, 'circular and 'mirror (they have nothing to clamp, wrap or reflect
/// to), and, in checked mode only, for an 'unchecked index outside [0, size). A failure goes to
/// the view's cold path: on the CPU it throws index_error with the message below; on the GPU it
/// records the failure and ends the thread (Note [checked access on the GPU]). Either way a
/// failed access never touches memory.
///
/// Checked mode (ISTHMUS_CALL_CHECKED, see Note [checked mode in the ABI]) is bit 0 of each
/// view's tag, set by the launcher when it binds the arguments (the other bits hold the
/// argument's position, for messages). The launchers are instantiated twice, once with the bit
/// a compile-time 0 and once 1 (kernel_loop<Checked>, device_loop<Checked>), and pick one per
/// call. The loops run on by-value copies of the views (run_positions, the device kernel's
/// parameters) whose bit is that constant, so the compiler folds the test away: unchecked
/// kernels in normal mode compile to the loop they had before the flag existed
/// (docs/plugins.md has the measurements). Were the loop to read the views from memory whose
/// address escaped, it would lose vectorisation (a 60x slowdown measured on a scale kernel).
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
            j = i < 0 ? 0 : (i >= n ? n - 1 : i);
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

inline const char* access_name(int a) {
    static const char* const names[] = {"unchecked", "checked", "clamped", "circular", "mirror"};
    return a >= 0 && a <= 4 ? names[a] : "unknown";
}

/// "(1, 2, 3)": the first n values of v.
ISTHMUS_PLUGIN_SUPPORT std::string tuple_text(const int64_t* v, int n);

/// The message of a failed view access, the same on the CPU and the GPU: `modifier` is the
/// view's access (an 'unchecked view fails only in checked mode), `dim` the failing dimension,
/// `i` its index and `n` its size; `index` and `shape` the view's `rank` indices and sizes
/// (shown when not NULL), `arg` the argument position (0-based, -1 for a view that is no
/// argument) and `label` how to name it ("argument 2 (y)"; NULL: by its position).
ISTHMUS_PLUGIN_SUPPORT std::string access_message(int modifier, int dim, int64_t i, int64_t n,
                                                  const int64_t* index, const int64_t* shape,
                                                  int rank, int arg, const char* label);

/// The CPU's failure path of a view access (cold: kept out of the kernels' loops).
[[noreturn]] ISTHMUS_PLUGIN_SUPPORT void throw_access_error(int modifier, int dim,
                                                            const int64_t* index,
                                                            const int64_t* shape, int rank,
                                                            int arg);

#if defined(__CUDACC__)
/// Note [checked access on the GPU]: device code cannot throw, so a failed view access on the
/// GPU (Note [view checks]) records the first failure here (one record per plugin translation
/// unit and device, claimed with atomicCAS: the view's modifier, the argument, the dimension,
/// and up to 8 indices and sizes), and the thread then ends (PTX `exit`), so it reads and
/// writes nothing more: neither the element that is not there nor, with a value it never got,
/// any other. (The access returns a scratch element, which is never reached; the grid-stride
/// loop's other positions of that thread do not run, and the launch fails anyway.) Kernel
/// bodies must not use block barriers, which the grid-stride loop rules out already. Other
/// threads run on; what they write is written, as on the CPU where other blocks run on until
/// they see the first error. A launch that can fail this way waits: the
/// CUDA launcher clears the record, launches, reads the record back and syncs the stream, and
/// then raises index_error with the CPU's message. That is every launch of a kernel with a
/// 'checked view, every launch in checked mode, and a launch where a 'clamped, 'circular or
/// 'mirror view has an empty dimension; other launches return as soon as they are queued.
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
static __device__ device_index_error g_device_index_error;
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

namespace detail {
/// Throws type_error unless `t` has dtype code `dtype` and `rank` dimensions.
ISTHMUS_PLUGIN_SUPPORT void check_view_of(const isthmus_tensor& t, int32_t dtype, int rank);
} // namespace detail

/// A typed, strided N-d view of a tensor argument. `T` const: read-only (the host locks for
/// reading and may convert the dtype); non-const: read-write (exact dtype). `A` says what an
/// index outside the tensor does (see access; Note [view checks]).
template <typename T, int N, access A = access::unchecked>
class view {
public:
    using element_type = T;
    using value_type = std::remove_const_t<T>;
    static constexpr int rank = N;
    static constexpr access modifier = A;

    view() = default;
    /// Views a tensor descriptor; throws type_error when the dtype or rank differs.
    explicit view(const isthmus_tensor& t) {
        detail::check_view_of(t, dtype_code<value_type>::value, N);
        data_ = static_cast<T*>(t.data);
        for (int d = 0; d < N; ++d) {
            shape_[d] = t.shape[d];
            strides_[d] = t.strides[d];
        }
    }
    ISTHMUS_HD T* data() const { return data_; }
    ISTHMUS_HD int64_t size(int d) const { return shape_[d]; }
    ISTHMUS_HD int64_t stride(int d) const { return strides_[d]; }
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
    ISTHMUS_HD T& operator[](const ivec<N>& p) const { return *at(p.v); }
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
    ISTHMUS_HD T* at(const int64_t* ii) const {
        int64_t off = 0;
        for (int d = 0; d < N; ++d) {
            int64_t j;
            if (!detail::map_index<A>(ii[d], shape_[d], (tag_ & 1) != 0, j)) return failed(ii, d);
            off += j * strides_[d];
        }
        return data_ + off;
    }
    ISTHMUS_HD T* failed(const int64_t* ii, int d) const {
#if defined(__CUDA_ARCH__)
        detail::record_device_failure(static_cast<int>(A), d, ii, shape_, N,
                                      static_cast<int>((tag_ >> 1) - 1));
        asm volatile("exit;"); // the thread stops here: nothing more is read or written
        return reinterpret_cast<T*>(detail::g_device_scratch); // (not reached)
#else
        detail::throw_access_error(static_cast<int>(A), d, ii, shape_, N,
                                   static_cast<int>((tag_ >> 1) - 1));
#endif
    }

    T* data_ = nullptr;
    int64_t shape_[N > 0 ? N : 1] = {};
    int64_t strides_[N > 0 ? N : 1] = {};
    // Bit 0: checked mode (Note [view checks]); the rest: the argument position + 1, for
    // messages (0: not an argument). One 8-byte field, so that a view stays a struct of 8-byte
    // fields without padding, which compilers split into registers in the kernels' loops.
    int64_t tag_ = 0;
};

namespace detail {
/// How the launchers tell a view which argument it is and whether the call runs in checked
/// mode (Note [view checks]); anything that is no view is left alone.
struct view_binding {
    template <typename T, int N, access A>
    ISTHMUS_HD static void bind(view<T, N, A>& v, int32_t arg, bool checked_mode) {
        v.tag_ = (static_cast<int64_t>(arg) + 1) * 2 + (checked_mode ? 1 : 0);
    }
    template <typename V>
    ISTHMUS_HD static void bind(V&, int32_t, bool) {}
    /// A copy of `v` with checked mode a compile-time constant (what the loops run on).
    template <bool Checked, typename V>
    ISTHMUS_HD static V rebound(V v) {
        if constexpr (requires { V::modifier; })
            v.tag_ = (v.tag_ & ~int64_t{1}) | (Checked ? 1 : 0);
        return v;
    }
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
};
} // namespace detail

/// Quasar-style names: vec/mat/cube views of `scalar` (float32) data and their float64 forms.
template <access A = access::unchecked>
using vec_view = view<float, 1, A>;
template <access A = access::unchecked>
using mat_view = view<float, 2, A>;
template <access A = access::unchecked>
using cube_view = view<float, 3, A>;

/// A tensor the plugin allocates through the host (a result): C-contiguous, CPU, owned by the
/// host from the moment it exists, so nothing leaks when the function throws afterwards.
template <typename T, int N>
class tensor {
public:
    /// Allocates a new tensor of `shape` in the running call.
    explicit tensor(const int64_t (&shape)[N]) : tensor(shape, N) {}
    tensor(const int64_t* shape, int ndim) {
        isthmus_call* c = current_call();
        if (ndim != N) throw value_error("isthmus::plugin::tensor: rank mismatch");
        if (c->host->new_tensor(c, dtype_code<T>::value, N, shape, &v_) != 0)
            throw error("isthmus::plugin::tensor: the host could not allocate the tensor");
        view_ = view<T, N>(v_.u.t);
    }
    const view<T, N>& v() const { return view_; }
    template <typename... I>
    T& operator()(I... idx) const {
        return view_(idx...);
    }
    T* data() const { return view_.data(); }
    int64_t size(int d) const { return view_.size(d); }
    int64_t numel() const { return view_.numel(); }
    const isthmus_value& raw() const { return v_; }

private:
    isthmus_value v_{};
    view<T, N> view_;
};

} // namespace isthmus::plugin
