// The header-only C++ layer for plugin authors: typed functions, kernels, views, object types.
#pragma once

// Note [author layer]: this header depends on plugin_abi.h and the standard library only, so a
// plugin links neither libisthmus nor Python. It turns typed C++ callables into the C
// descriptors of the ABI: argument conversion is generated per parameter type at compile time,
// kernels get a launcher whose per-element loop calls the body directly (inlined; the host
// never calls per element), and every C++ exception is caught at the boundary and reported as
// a message through the host's set_error, never propagated into the host.
//
//     #include <isthmus/plugin.hpp>
//     namespace ip = isthmus::plugin;
//     double add(double a, double b) { return a + b; }
//     ISTHMUS_PLUGIN(example, m) {
//         m.def("add", &add, {"a", "b"}, "Adds two numbers.");
//         m.kernel("scale", [](ip::view<const float, 1> x, ip::view<float, 1> y, float s,
//                              ip::ivec<1> pos) { y(pos[0]) = s * x(pos[0]); }, {"x", "y", "s"});
//     }

#include "isthmus/plugin_abi.h"

#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__CUDACC__)
#include <algorithm>
#include <mutex>

#include <cuda_runtime.h>
#endif

// Note [one kernel body for CPU and GPU]: what a kernel body touches (vec / ivec, view
// accessors, the access modifiers' index maps) is marked ISTHMUS_HD, which is
// `__host__ __device__` under nvcc and nothing for other compilers, so a plain C++ plugin is
// unchanged and a .cu plugin can call the same body on both sides. In a translation unit that
// nvcc compiles, m.kernel() also generates a CUDA launcher when the body is device-callable
// (see is_device_kernel below); the CPU launcher is always generated.
#if defined(__CUDACC__)
#define ISTHMUS_HD __host__ __device__
#else
#define ISTHMUS_HD
#endif

/// A branch hint for the failure paths of view accesses (GCC, Clang and nvcc's host and device
/// compilers all have __builtin_expect).
#if defined(__GNUC__) || defined(__clang__) || defined(__CUDACC__)
#define ISTHMUS_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define ISTHMUS_UNLIKELY(x) (x)
#endif

namespace isthmus::plugin {

// ---- errors ------------------------------------------------------------------------------

/// An error a plugin raises; reaches the caller as the typed error of `code` (RuntimeError,
/// ValueError, TypeError, IndexError, MemoryError in Python) with the message unchanged.
class error : public std::runtime_error {
public:
    explicit error(const std::string& msg, int32_t code = ISTHMUS_ERR_RUNTIME)
        : std::runtime_error(msg), code_(code) {}
    int32_t code() const noexcept { return code_; }

private:
    int32_t code_;
};
/// ValueError.
struct value_error : error {
    explicit value_error(const std::string& m) : error(m, ISTHMUS_ERR_VALUE) {}
};
/// TypeError.
struct type_error : error {
    explicit type_error(const std::string& m) : error(m, ISTHMUS_ERR_TYPE) {}
};
/// IndexError.
struct index_error : error {
    explicit index_error(const std::string& m) : error(m, ISTHMUS_ERR_INDEX) {}
};
/// OverflowError: a number does not fit the type it converts to (an int64 for an int8).
struct overflow_error : error {
    explicit overflow_error(const std::string& m) : error(m, ISTHMUS_ERR_OVERFLOW) {}
};

namespace detail {

/// What runs on this thread: the call context of the function or kernel chunk (for the host
/// callbacks), its parameter table (for argument names in messages) and how many leading C++
/// parameters the table leaves out (1 for a method's instance). One thread_local, so entering
/// and leaving a call costs one TLS address.
struct call_state {
    isthmus_call* call = nullptr;
    const isthmus_param* params = nullptr;
    int32_t nparams = 0;
    int32_t skip = 0;
};
inline thread_local call_state t_state;
/// The host table given to the entry point.
inline const isthmus_host* g_host = nullptr;

struct call_scope {
    call_state prev;
    explicit call_scope(isthmus_call* c, const isthmus_param* ps = nullptr, int32_t n = 0,
                        int32_t skip = 0)
        : prev(t_state) {
        t_state = {c, ps, n, skip};
    }
    ~call_scope() { t_state = prev; }
};

/// "argument 2 (y)" for C++ parameter `i` of the running function or kernel, counted as the
/// caller counts (a method's instance is not an argument).
inline std::string arg_label(int64_t i) {
    const call_state& st = t_state;
    if (i < st.skip) return "the instance";
    const int64_t k = i - st.skip;
    const char* name = st.params && k < st.nparams ? st.params[k].name : nullptr;
    return "argument " + std::to_string(k + 1) +
           (name && *name ? " (" + std::string(name) + ")" : std::string());
}

/// The ISTHMUS_CALL_* flags of `call`: 0 from a host without the call_flags slot (Note [checked
/// mode in the ABI]).
inline uint32_t call_flags(isthmus_call* call) noexcept {
    if (!call || !call->host) return 0;
    const isthmus_host* h = call->host;
    if (h->struct_size < offsetof(isthmus_host, call_flags) + sizeof(h->call_flags) ||
        !h->call_flags)
        return 0;
    return h->call_flags(call);
}

/// Reports the exception in flight to the host; returns the non-zero status to return.
inline int report(isthmus_call* call) noexcept {
    int32_t code = ISTHMUS_ERR_RUNTIME;
    std::string msg;
    try {
        throw;
    } catch (const error& e) {
        code = e.code();
        msg = e.what();
    } catch (const std::bad_alloc&) {
        code = ISTHMUS_ERR_MEMORY;
        msg = "out of memory";
    } catch (const std::out_of_range& e) {
        code = ISTHMUS_ERR_INDEX;
        msg = e.what();
    } catch (const std::invalid_argument& e) {
        code = ISTHMUS_ERR_VALUE;
        msg = e.what();
    } catch (const std::exception& e) {
        msg = e.what();
    } catch (...) {
        msg = "unknown C++ exception in plugin";
    }
    if (call && call->host && call->host->set_error) call->host->set_error(call, code, msg.c_str());
    return 1;
}

template <typename... A>
std::string cat(const A&... a) {
    std::string s;
    ((s +=
      [](const auto& x) {
          if constexpr (std::is_arithmetic_v<std::decay_t<decltype(x)>>)
              return std::to_string(x);
          else
              return std::string(x);
      }(a)),
     ...);
    return s;
}

} // namespace detail

/// The call context of the running function (for the host callbacks); throws outside a call.
inline isthmus_call* current_call() {
    isthmus_call* c = detail::t_state.call;
    if (!c) throw error("isthmus::plugin: no host call is running on this thread");
    return c;
}

/// Writes a message to the host's log.
inline void log(const std::string& msg, int32_t level = ISTHMUS_LOG_INFO) {
    isthmus_call* c = detail::t_state.call;
    if (c && c->host->log) c->host->log(c, level, msg.c_str());
}

// ---- dtypes ------------------------------------------------------------------------------

/// C++ element type -> ABI dtype code.
template <typename T>
struct dtype_code;
#define ISTHMUS_PLUGIN_DTYPE(CT, CODE)                                                             \
    template <>                                                                                    \
    struct dtype_code<CT> {                                                                        \
        static constexpr int32_t value = CODE;                                                     \
    };
ISTHMUS_PLUGIN_DTYPE(bool, ISTHMUS_DT_BOOL)
ISTHMUS_PLUGIN_DTYPE(int8_t, ISTHMUS_DT_INT8)
ISTHMUS_PLUGIN_DTYPE(int16_t, ISTHMUS_DT_INT16)
ISTHMUS_PLUGIN_DTYPE(int32_t, ISTHMUS_DT_INT32)
ISTHMUS_PLUGIN_DTYPE(int64_t, ISTHMUS_DT_INT64)
ISTHMUS_PLUGIN_DTYPE(uint8_t, ISTHMUS_DT_UINT8)
ISTHMUS_PLUGIN_DTYPE(uint16_t, ISTHMUS_DT_UINT16)
ISTHMUS_PLUGIN_DTYPE(uint32_t, ISTHMUS_DT_UINT32)
ISTHMUS_PLUGIN_DTYPE(uint64_t, ISTHMUS_DT_UINT64)
ISTHMUS_PLUGIN_DTYPE(float, ISTHMUS_DT_FLOAT32)
ISTHMUS_PLUGIN_DTYPE(double, ISTHMUS_DT_FLOAT64)
ISTHMUS_PLUGIN_DTYPE(std::complex<float>, ISTHMUS_DT_COMPLEX64)
ISTHMUS_PLUGIN_DTYPE(std::complex<double>, ISTHMUS_DT_COMPLEX128)
#undef ISTHMUS_PLUGIN_DTYPE

/// A dtype code's name, for messages.
inline const char* dtype_name(int32_t code) {
    static const char* const names[] = {
        "bool",   "int8",    "int16",    "int32",   "int64",   "uint8",     "uint16",    "uint32",
        "uint64", "float16", "bfloat16", "float32", "float64", "complex64", "complex128"};
    return code >= 0 && code <= ISTHMUS_DT_COMPLEX128 ? names[code] : "any";
}

namespace detail {
/// Element `i` (in memory order, already strided) of a tensor of any real dtype, as double.
inline double load_as_double(const void* data, int32_t dt, int64_t i) {
    switch (dt) {
    case ISTHMUS_DT_BOOL:
        return static_cast<const bool*>(data)[i];
    case ISTHMUS_DT_INT8:
        return static_cast<const int8_t*>(data)[i];
    case ISTHMUS_DT_INT16:
        return static_cast<const int16_t*>(data)[i];
    case ISTHMUS_DT_INT32:
        return static_cast<const int32_t*>(data)[i];
    case ISTHMUS_DT_INT64:
        return static_cast<double>(static_cast<const int64_t*>(data)[i]);
    case ISTHMUS_DT_UINT8:
        return static_cast<const uint8_t*>(data)[i];
    case ISTHMUS_DT_UINT16:
        return static_cast<const uint16_t*>(data)[i];
    case ISTHMUS_DT_UINT32:
        return static_cast<const uint32_t*>(data)[i];
    case ISTHMUS_DT_UINT64:
        return static_cast<double>(static_cast<const uint64_t*>(data)[i]);
    case ISTHMUS_DT_FLOAT32:
        return static_cast<const float*>(data)[i];
    case ISTHMUS_DT_FLOAT64:
        return static_cast<const double*>(data)[i];
    default:
        throw type_error(cat("isthmus::plugin: cannot read ", dtype_name(dt), " elements"));
    }
}
} // namespace detail

// ---- fixed vectors -----------------------------------------------------------------------

/// A fixed-size vector (Quasar's vec2..vec4): value semantics, elementwise arithmetic.
template <typename T, int N>
struct vec {
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

inline std::string tuple_text(const int64_t* v, int n) {
    std::string s = "(";
    for (int d = 0; d < n; ++d) s += (d ? ", " : "") + std::to_string(v[d]);
    return s + ")";
}

/// The message of a failed view access, the same on the CPU and the GPU: `modifier` is the
/// view's access (an 'unchecked view fails only in checked mode), `dim` the failing dimension,
/// `i` its index and `n` its size; `index` and `shape` the view's `rank` indices and sizes
/// (shown when not NULL), `arg` the argument position (0-based, -1 for a view that is no
/// argument) and `label` how to name it ("argument 2 (y)"; NULL: by its position).
inline std::string access_message(int modifier, int dim, int64_t i, int64_t n, const int64_t* index,
                                  const int64_t* shape, int rank, int arg, const char* label) {
    std::string s;
    if (modifier == static_cast<int>(access::unchecked) ||
        modifier == static_cast<int>(access::checked))
        s = cat("index ", i, " is out of bounds for dimension ", dim, " with size ", n,
                modifier == static_cast<int>(access::checked) ? " ('checked access)"
                                                              : " (unchecked view, checked mode)");
    else
        s = cat("index ", i, " has no element to map to: dimension ", dim, " has size ", n, " ('",
                access_name(modifier), " access)");
    if (arg >= 0) s += " in " + (label ? std::string(label) : cat("argument ", arg + 1));
    if (index) s += cat(arg >= 0 ? ": index " : " at index ", tuple_text(index, rank));
    if (shape) s += cat(index ? " into shape " : " of shape ", tuple_text(shape, rank));
    return s;
}

/// The CPU's failure path of a view access (cold: kept out of the kernels' loops).
[[noreturn, gnu::noinline, gnu::cold]] inline void throw_access_error(int modifier, int dim,
                                                                      const int64_t* index,
                                                                      const int64_t* shape,
                                                                      int rank, int arg) {
    const std::string label = arg >= 0 ? arg_label(arg) : std::string();
    throw index_error(access_message(modifier, dim, index[dim], shape[dim], index, shape, rank, arg,
                                     label.c_str()));
}

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
        if (t.dtype != dtype_code<value_type>::value)
            throw type_error(detail::cat("expected a tensor of ",
                                         dtype_name(dtype_code<value_type>::value), ", got ",
                                         dtype_name(t.dtype)));
        if (t.ndim != N)
            throw type_error(
                detail::cat("expected a tensor with ", N, " dimension(s), got ", t.ndim));
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

// ---- host callables and events -----------------------------------------------------------

/// An owned host callable (e.g. a Python function): call it with values, release on drop.
class callback {
public:
    callback() = default;
    explicit callback(isthmus_callback cb) : cb_(new isthmus_callback(cb), &drop) {}
    explicit operator bool() const { return cb_ != nullptr; }
    /// Calls the host function with already-marshalled arguments; throws the host's error.
    void invoke(const isthmus_value* args, int32_t nargs, isthmus_value* result) const;
    /// Calls it with C++ arguments and converts the result (see the definition below).
    template <typename R = void, typename... A>
    R call(const A&... args) const;

private:
    static void drop(isthmus_callback* cb) {
        if (cb->release) cb->release(cb->data);
        delete cb;
    }
    std::shared_ptr<isthmus_callback> cb_;
};

namespace detail {
template <typename T>
isthmus_value to_abi(const T& v);
} // namespace detail

/// A list of host callbacks an object type fires (Quasar's events: `button.onclick.add(f)`).
/// Callbacks receive the arguments of fire() (numbers, bools, strings).
template <typename... Args>
class event {
public:
    void add(callback cb) { cbs_.push_back(std::move(cb)); }
    void clear() { cbs_.clear(); }
    size_t size() const { return cbs_.size(); }
    /// Calls every callback in order; the first error stops and propagates as an exception.
    void fire(const Args&... args) const {
        isthmus_value vs[sizeof...(Args) > 0 ? sizeof...(Args) : 1] = {detail::to_abi(args)...};
        for (const callback& cb : std::vector<callback>(cbs_)) {
            isthmus_value r{};
            cb.invoke(vs, static_cast<int32_t>(sizeof...(Args)), &r);
        }
    }

private:
    std::vector<callback> cbs_;
};

namespace detail {

// ---- value conversion --------------------------------------------------------------------

template <typename T>
struct is_vec : std::false_type {};
template <typename T, int N>
struct is_vec<vec<T, N>> : std::true_type {};
template <typename T>
struct is_view : std::false_type {};
template <typename T, int N, access A>
struct is_view<view<T, N, A>> : std::true_type {};
template <typename T>
struct is_tensor : std::false_type {};
template <typename T, int N>
struct is_tensor<tensor<T, N>> : std::true_type {};
template <typename T>
struct is_complex : std::false_type {};
template <typename T>
struct is_complex<std::complex<T>> : std::true_type {};
template <typename T>
struct is_shared : std::false_type {};
template <typename T>
struct is_shared<std::shared_ptr<T>> : std::true_type {};

/// Per object type T: its descriptor, once registered.
template <typename T>
struct type_slot {
    static inline const isthmus_type* desc = nullptr;
};

inline const char* kind_name(int32_t k) {
    static const char* const names[] = {"none",   "bool",   "int",    "float",   "complex",
                                        "string", "tensor", "object", "callable"};
    return k >= 0 && k <= ISTHMUS_VALUE_CALLBACK ? names[k] : "unknown";
}

[[noreturn]] inline void bad_arg(const char* expected, const isthmus_value& v) {
    throw type_error(cat("expected ", expected, ", got ", kind_name(v.kind)));
}

inline double as_double(const isthmus_value& v) {
    switch (v.kind) {
    case ISTHMUS_VALUE_BOOL:
    case ISTHMUS_VALUE_INT:
        if (v.dtype == ISTHMUS_DT_UINT64) return static_cast<double>(static_cast<uint64_t>(v.u.i));
        return static_cast<double>(v.u.i);
    case ISTHMUS_VALUE_FLOAT:
        return v.u.f;
    default:
        bad_arg("a number", v);
    }
}

/// Converts one argument to the C++ parameter type P (by value; views alias the tensor).
template <typename P>
struct arg_caster {
    using T = std::remove_cvref_t<P>;
    static T get(const isthmus_value& v) {
        if constexpr (std::is_same_v<T, bool>) {
            if (v.kind != ISTHMUS_VALUE_BOOL && v.kind != ISTHMUS_VALUE_INT) bad_arg("a bool", v);
            return v.u.i != 0;
        } else if constexpr (std::is_integral_v<T>) {
            if (v.kind != ISTHMUS_VALUE_INT && v.kind != ISTHMUS_VALUE_BOOL)
                bad_arg("an integer", v);
            // Note [integer parameters]: an integer that does not fit T is an error (NumPy 2's
            // rule for Python integers), never a wrapped value. The host checks first, naming
            // the parameter; this is the check for hosts and callers that do not.
            if (v.dtype == ISTHMUS_DT_UINT64) {
                const auto u = static_cast<uint64_t>(v.u.i);
                if (!std::in_range<T>(u))
                    throw overflow_error(cat("integer ", u, " is out of bounds for ",
                                             dtype_name(dtype_code<T>::value)));
            } else if (!std::in_range<T>(v.u.i)) {
                throw overflow_error(cat("integer ", v.u.i, " is out of bounds for ",
                                         dtype_name(dtype_code<T>::value)));
            }
            return static_cast<T>(v.u.i);
        } else if constexpr (std::is_floating_point_v<T>) {
            return static_cast<T>(as_double(v));
        } else if constexpr (is_complex<T>::value) {
            if (v.kind == ISTHMUS_VALUE_COMPLEX) return T(v.u.c[0], v.u.c[1]);
            return T(static_cast<typename T::value_type>(as_double(v)));
        } else if constexpr (std::is_same_v<T, std::string> ||
                             std::is_same_v<T, std::string_view>) {
            if (v.kind != ISTHMUS_VALUE_STRING) bad_arg("a string", v);
            return T(v.u.s.data, static_cast<size_t>(v.u.s.size));
        } else if constexpr (is_view<T>::value) {
            if (v.kind != ISTHMUS_VALUE_TENSOR) bad_arg("a tensor", v);
            return T(v.u.t);
        } else if constexpr (is_vec<T>::value) {
            T r{};
            constexpr int n = T::size();
            if (v.kind == ISTHMUS_VALUE_TENSOR) {
                const isthmus_tensor& t = v.u.t;
                int64_t numel = 1;
                for (int d = 0; d < t.ndim; ++d) numel *= t.shape[d];
                if (numel != n || t.ndim > 1)
                    throw value_error(cat("expected a vector of ", n, " elements, got a tensor of ",
                                          numel, " element(s) and ", t.ndim, " dimension(s)"));
                const int64_t s = t.ndim == 1 ? t.strides[0] : 0;
                for (int i = 0; i < n; ++i)
                    r[i] = static_cast<std::remove_cvref_t<decltype(r[0])>>(
                        load_as_double(t.data, t.dtype, i * s));
                return r;
            }
            bad_arg(cat("a vector of ", n, " elements").c_str(), v);
        } else if constexpr (std::is_same_v<T, callback>) {
            if (v.kind != ISTHMUS_VALUE_CALLBACK) bad_arg("a callable", v);
            return callback(v.u.cb);
        } else if constexpr (std::is_same_v<T, isthmus_tensor>) {
            if (v.kind != ISTHMUS_VALUE_TENSOR) bad_arg("a tensor", v);
            return v.u.t;
        } else if constexpr (std::is_same_v<T, isthmus_value>) {
            return v;
        } else if constexpr (is_shared<T>::value) {
            using U = typename T::element_type;
            if (v.kind != ISTHMUS_VALUE_OBJECT) bad_arg("an object", v);
            if (v.u.o.type != type_slot<U>::desc)
                throw type_error(cat("expected an object of type ", type_slot<U>::desc->name,
                                     ", got one of type ", v.u.o.type ? v.u.o.type->name : "?"));
            return *static_cast<std::shared_ptr<U>*>(v.u.o.instance);
        } else {
            static_assert(sizeof(T) == 0, "isthmus::plugin: unsupported parameter type");
        }
    }
};

/// Converts argument `i` to parameter type P; a conversion error names the argument.
template <typename P>
std::remove_cvref_t<P> get_arg(const isthmus_value* args, size_t i) {
    try {
        return arg_caster<P>::get(args[i]);
    } catch (const error& e) {
        throw error(arg_label(static_cast<int64_t>(i)) + ": " + e.what(), e.code());
    }
}

/// Describes a parameter type for the host's checks and listings.
template <typename P>
isthmus_param describe_param(const char* name) {
    using T = std::remove_cvref_t<P>;
    isthmus_param p{name, ISTHMUS_PARAM_ANY, ISTHMUS_DT_ANY, -1, 0, 0, "any", nullptr};
    if constexpr (std::is_same_v<T, bool>) {
        p.kind = ISTHMUS_PARAM_BOOL, p.dtype = ISTHMUS_DT_BOOL, p.type_name = "bool";
    } else if constexpr (std::is_integral_v<T>) {
        p.kind = ISTHMUS_PARAM_INT, p.dtype = dtype_code<T>::value, p.type_name = "int";
    } else if constexpr (std::is_floating_point_v<T>) {
        p.kind = ISTHMUS_PARAM_FLOAT, p.dtype = dtype_code<T>::value;
        p.type_name = std::is_same_v<T, float> ? "scalar" : "float64";
    } else if constexpr (is_complex<T>::value) {
        p.kind = ISTHMUS_PARAM_COMPLEX, p.dtype = dtype_code<T>::value, p.type_name = "cscalar";
    } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::string_view>) {
        p.kind = ISTHMUS_PARAM_STRING, p.type_name = "string";
    } else if constexpr (is_view<T>::value) {
        using E = typename T::element_type;
        p.kind = ISTHMUS_PARAM_TENSOR;
        p.dtype = dtype_code<std::remove_const_t<E>>::value;
        p.ndim = T::rank;
        p.flags =
            std::is_const_v<E> ? ISTHMUS_PARAM_READ : (ISTHMUS_PARAM_READ | ISTHMUS_PARAM_WRITE);
        static const char* const names[] = {"scalar", "vec", "mat", "cube", "cube{4}"};
        p.type_name = T::rank <= 4 ? names[T::rank] : "cube{:}";
    } else if constexpr (is_vec<T>::value) {
        p.kind = ISTHMUS_PARAM_VEC;
        p.dtype = dtype_code<std::remove_cvref_t<decltype(T{}[0])>>::value;
        p.vec_len = T::size();
        static const char* const names[] = {"vec0", "vec1", "vec2", "vec3", "vec4"};
        p.type_name = T::size() <= 4 ? names[T::size()] : "vec";
    } else if constexpr (std::is_same_v<T, callback>) {
        p.kind = ISTHMUS_PARAM_CALLBACK, p.type_name = "function";
    } else if constexpr (std::is_same_v<T, isthmus_tensor>) {
        p.kind = ISTHMUS_PARAM_TENSOR, p.flags = ISTHMUS_PARAM_READ | ISTHMUS_PARAM_WRITE;
        p.type_name = "cube{:}";
    } else if constexpr (is_shared<T>::value) {
        p.kind = ISTHMUS_PARAM_OBJECT, p.type = type_slot<typename T::element_type>::desc;
        p.type_name = p.type ? p.type->name : "object";
    }
    return p;
}

/// Converts a C++ result to an ABI value (tensors and strings through the host).
template <typename T>
isthmus_value to_abi(const T& r) {
    isthmus_value v{};
    v.dtype = ISTHMUS_DT_ANY;
    if constexpr (std::is_same_v<T, bool>) {
        v.kind = ISTHMUS_VALUE_BOOL, v.dtype = ISTHMUS_DT_BOOL, v.u.i = r ? 1 : 0;
    } else if constexpr (std::is_integral_v<T>) {
        v.kind = ISTHMUS_VALUE_INT, v.dtype = dtype_code<T>::value, v.u.i = static_cast<int64_t>(r);
    } else if constexpr (std::is_floating_point_v<T>) {
        v.kind = ISTHMUS_VALUE_FLOAT, v.dtype = dtype_code<T>::value, v.u.f = r;
    } else if constexpr (is_complex<T>::value) {
        v.kind = ISTHMUS_VALUE_COMPLEX, v.dtype = dtype_code<T>::value;
        v.u.c[0] = r.real(), v.u.c[1] = r.imag();
    } else if constexpr (std::is_convertible_v<T, std::string_view>) {
        const std::string_view s(r);
        isthmus_call* c = current_call();
        if (c->host->new_string(c, s.data(), static_cast<int64_t>(s.size()), &v) != 0)
            throw error("the host could not allocate a string");
    } else if constexpr (is_tensor<T>::value) {
        v = r.raw();
    } else if constexpr (is_view<T>::value) {
        v.kind = ISTHMUS_VALUE_TENSOR, v.dtype = dtype_code<typename T::value_type>::value;
        v.u.t = r.abi();
    } else if constexpr (std::is_same_v<T, isthmus_value>) {
        v = r;
    } else if constexpr (is_vec<T>::value) {
        using E = std::remove_cvref_t<decltype(r[0])>;
        tensor<E, 1> t({static_cast<int64_t>(T::size())});
        for (int i = 0; i < T::size(); ++i) t(i) = r[i];
        v = t.raw();
    } else if constexpr (is_shared<T>::value) {
        using U = typename T::element_type;
        if (!type_slot<U>::desc) throw error("returning an object of an unregistered type");
        if (!r) return v; // none
        v.kind = ISTHMUS_VALUE_OBJECT;
        v.u.o.instance = new std::shared_ptr<U>(r);
        v.u.o.type = type_slot<U>::desc;
    } else {
        static_assert(sizeof(T) == 0, "isthmus::plugin: unsupported result type");
    }
    return v;
}

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
    const char* keep(std::string s) { return strings.emplace_back(std::move(s)).c_str(); }
};

inline std::string signature_of(const std::string& name, const std::vector<isthmus_param>& ps,
                                const char* result, size_t skip_front = 0) {
    std::string s = name + "(";
    for (size_t i = skip_front; i < ps.size(); ++i) {
        if (i > skip_front) s += ", ";
        s += std::string(ps[i].name) + ": " + ps[i].type_name;
    }
    s += ")";
    if (result && *result) s += std::string(" -> ") + result;
    return s;
}

template <typename R>
const char* result_name() {
    if constexpr (std::is_void_v<R>)
        return "";
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

/// A function's result as an ABI value. Note [view results]: a view borrows memory of the
/// call's arguments and keeps its shape and strides in itself, so handed to the host as it is
/// the descriptor would point into a dead object and at memory the result does not own. A view
/// result is therefore copied into a new tensor of the host's (what NumPy's functions return
/// for a computed array); other results convert as to_abi does.
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

/// The position (C order, the last dimension fastest) of linear index `i` of `r`'s dims, in an
/// ivec-like P of rank N (the CPU and CUDA launchers' one decomposition).
template <typename P>
ISTHMUS_HD inline void position_of(P& pos, int64_t i, const isthmus_range& r) {
    constexpr int N = P::size();
    for (int d = N - 1; d >= 0; --d) {
        pos[d] = static_cast<std::remove_cvref_t<decltype(pos[d])>>(i % r.dims[d]);
        i /= r.dims[d];
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
template <bool Checked, typename P, typename F, typename... V>
[[gnu::always_inline]] inline void run_positions(F& f, const isthmus_range& r, V... v) {
    ((v = view_binding::rebound<Checked>(v)), ...);
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

template <bool Checked, typename F, typename Tuple, size_t... I>
void kernel_loop(F& f, const isthmus_range& r, const isthmus_value* args,
                 std::index_sequence<I...>) {
    using P = std::remove_cvref_t<std::tuple_element_t<sizeof...(I), Tuple>>;
    auto converted = std::make_tuple(get_arg<std::tuple_element_t<I, Tuple>>(args, I)...);
    (view_binding::bind(std::get<I>(converted), static_cast<int32_t>(I), Checked), ...);
    run_positions<Checked, P>(f, r, std::get<I>(converted)...);
}

inline std::string device_text(int32_t type, int32_t id) {
    if (type == ISTHMUS_DEVICE_CPU) return "the CPU";
    if (type == ISTHMUS_DEVICE_CUDA) return cat("cuda:", id);
    return cat("device type ", type);
}

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
            kernel_loop<true, F, typename tr::args>(f, *range, args, std::make_index_sequence<n>{});
        else
            kernel_loop<false, F, typename tr::args>(f, *range, args,
                                                     std::make_index_sequence<n>{});
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

/// Note [device kernels]: whether m.kernel() also generates a CUDA launcher for a body of type
/// F. Only in a translation unit nvcc compiles (elsewhere always false), and then for
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

#if defined(__CUDACC__)
// Note [CUDA launcher]: one thread per position in a grid-stride loop over [begin, end) of the
// range; each thread turns its linear position into the ivec position (C order, the last
// dimension fastest) and calls the body, inlined. Arguments are converted once on the host
// and copied into the kernel's parameters by value (views carry pointer, shape and strides).
// Instantiated once per value of Checked, the launch's checked mode, which each view copy
// holds as a constant (Note [view checks]).
template <bool Checked, typename F, typename P, typename... V>
__global__ void device_loop(F f, isthmus_range r, V... v) {
    const int64_t count = r.end - r.begin;
    const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < count;
         t += step) {
        const int64_t i = r.begin + t;
        if constexpr (std::is_integral_v<P>) {
            f(view_binding::rebound<Checked>(v)..., static_cast<P>(i));
        } else {
            P pos{};
            position_of(pos, i, r);
            f(view_binding::rebound<Checked>(v)..., pos);
        }
    }
}

/// What a device kernel may take: views, numbers, fixed vectors (all copied by value).
template <typename T>
struct device_param
    : std::bool_constant<is_view<T>::value || is_vec<T>::value || std::is_arithmetic_v<T>> {};

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
    static_assert(
        (std::is_trivially_copyable_v<std::remove_cvref_t<std::tuple_element_t<I, Tuple>>> && ...),
        "isthmus::plugin: a kernel that runs on the GPU takes trivially copyable parameters only "
        "(views, numbers, vec / ivec)");
    static_assert((device_param<std::remove_cvref_t<std::tuple_element_t<I, Tuple>>>::value && ...),
                  "isthmus::plugin: a kernel that runs on the GPU takes views, numbers and vec / "
                  "ivec only (strings, isthmus_tensor and isthmus_value point to host memory)");
    constexpr bool has_checked_view =
        (is_checked_view<std::remove_cvref_t<std::tuple_element_t<I, Tuple>>>::value || ...);
    const int64_t count = r.end - r.begin;
    if (count <= 0) return;
    auto converted = std::make_tuple(get_arg<std::tuple_element_t<I, Tuple>>(args, I)...);
    (view_binding::bind(std::get<I>(converted), static_cast<int32_t>(I), checked_mode), ...);
    // See Note [checked access on the GPU]: the launches whose accesses can fail wait.
    const bool wait = has_checked_view || checked_mode ||
                      (view_binding::empty_modifier_view(std::get<I>(converted)) || ...);
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
        if (got.failed) {
            const int shown = got.rank < 8 ? got.rank : 8;
            int64_t index[8], shape[8];
            for (int d = 0; d < shown; ++d) index[d] = got.index[d], shape[d] = got.shape[d];
            const bool whole = got.rank <= 8; // the tuples are complete
            const std::string label = got.arg >= 0 ? arg_label(got.arg) : std::string();
            throw index_error(access_message(
                got.modifier, got.dim, got.failing_index, got.failing_size, whole ? index : nullptr,
                whole ? shape : nullptr, shown, got.arg, label.c_str()));
        }
    }
}

template <typename F>
int kernel_impl_cuda(const isthmus_kernel* self, isthmus_call* call, const isthmus_range* range,
                     const isthmus_value* args, int32_t nargs, int32_t device,
                     void* stream) noexcept {
    using tr = fn_traits<std::decay_t<F>>;
    constexpr size_t n = std::tuple_size_v<typename tr::args> - 1;
    call_scope scope(call, self->params, self->nparams);
    try {
        if (static_cast<size_t>(nargs) != n)
            throw type_error(cat(self->signature, ": expected ", n, " argument(s), got ", nargs));
        check_devices<typename tr::args>(self, args, ISTHMUS_DEVICE_CUDA, device,
                                         std::make_index_sequence<n>{});
        cuda_launch<F, typename tr::args>(self, *static_cast<F*>(self->data), *range, args, device,
                                          static_cast<cudaStream_t>(stream),
                                          (call_flags(call) & ISTHMUS_CALL_CHECKED) != 0,
                                          std::make_index_sequence<n>{});
        return 0;
    } catch (...) {
        return report(call);
    }
}
#endif

} // namespace detail

inline void callback::invoke(const isthmus_value* args, int32_t nargs,
                             isthmus_value* result) const {
    isthmus_call* c = detail::t_state.call;
    isthmus_call* own = nullptr;
    if (!c) {
        if (!detail::g_host || !detail::g_host->begin_call)
            throw error("isthmus::plugin: cannot call the host outside a call");
        own = c = detail::g_host->begin_call(detail::g_host);
    }
    const int rc = cb_->invoke(cb_->data, c, args, nargs, result);
    if (own) {
        char msg[1024] = {0};
        const int32_t code = c->host->end_call(own, msg, sizeof msg);
        if (rc != 0 || code != 0) throw error(msg, code ? code : ISTHMUS_ERR_RUNTIME);
    } else if (rc != 0) {
        // The host already recorded the error in this call; unwind to the plugin boundary, which
        // reports nothing new (the first error wins).
        throw error("a host callback failed");
    }
}

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

/// Note [call_python in plugins]: calls a Python function by its qualified name through the
/// host (isthmus_host.call_python), with no link to Python or libisthmus:
/// `double n = ip::call_python<double>("numpy.linalg.norm", x);` for a view `x`. The module is
/// imported ("numpy.linalg", else "numpy"), the host takes the GIL (so this works from
/// functions called by Python and from parallel_do bodies alike); arguments are numbers,
/// strings, views (copied for Python) and isthmus_values; the result converts to R as in
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

private:
    plugin::module& m_;
    size_t index_;
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
    plugin::module& m_;
    isthmus_type& t_;
};

/// The plugin being described: functions, kernels and object types.
// (No line of this class starts with the word `module`: nvcc's C++20 front end would read it as
// a module declaration; hence the `inline` and `plugin::` prefixes.)
class module {
public:
    explicit module(const char* name, const char* description = nullptr) {
        desc_.abi_version = ISTHMUS_PLUGIN_ABI_VERSION;
        desc_.struct_size = sizeof(isthmus_plugin);
        desc_.name = st_.keep(name);
        desc_.description = description ? st_.keep(description) : nullptr;
        desc_.features = ISTHMUS_FEATURE_CHECKED_MODE; // See Note [view checks]
    }
    inline module(const module&) = delete;
    inline module& operator=(const module&) = delete;

    /// A function; several with one name form an overload set (the host takes the first whose
    /// parameter types match, e.g. a float32 and a float64 version).
    template <typename F>
    inline module& def(const char* name, F f, names params = {}, const char* doc = nullptr) {
        using tr = detail::fn_traits<std::decay_t<F>>;
        add_function(functions_, name, std::move(f), params, doc,
                     detail::result_name<typename tr::result>(), 0);
        return *this;
    }
    /// A kernel: the last parameter is the position (ivec<N>, or int64_t for 1-d); run it with
    /// parallel_do(dims, args..., kernel). The result declares shape rules:
    /// `m.kernel("axpb", ..., {"x", "y", "a", "b"}).at_position({"x", "y"});`.
    template <typename F>
    inline kernel_def kernel(const char* name, F f, names params = {}, const char* doc = nullptr) {
        using tr = detail::fn_traits<std::decay_t<F>>;
        using A = typename tr::args;
        constexpr size_t n = std::tuple_size_v<A>;
        static_assert(n >= 1, "a kernel's last parameter is its position");
        using P = std::remove_cvref_t<std::tuple_element_t<n - 1, A>>;
        static_assert(std::is_void_v<typename tr::result>, "kernels return nothing");
        int32_t pos_ndim = 1;
        if constexpr (!std::is_integral_v<P>) pos_ndim = P::size();
        auto& ps = st_.params.emplace_back(params_of<A>(params, n - 1));
        isthmus_kernel k{};
        k.name = st_.keep(name);
        {
            std::string sig = detail::signature_of(name, ps, "");
            sig.insert(sig.size() - 1, detail::cat(ps.empty() ? "" : ", ", "pos: ivec", pos_ndim));
            k.signature = st_.keep(sig);
        }
        k.doc = doc ? st_.keep(doc) : nullptr;
        k.nparams = static_cast<int32_t>(ps.size());
        k.params = ps.data();
        k.pos_ndim = pos_ndim;
        k.device_types = 1 << ISTHMUS_DEVICE_CPU;
        k.launch_cpu = &detail::kernel_impl<F>;
#if defined(__CUDACC__)
        if constexpr (is_device_kernel<std::decay_t<F>>::value) {
            k.device_types |= 1 << ISTHMUS_DEVICE_CUDA;
            k.launch_cuda = &detail::kernel_impl_cuda<F>;
        }
#endif
        k.data = keep_callable(std::move(f));
        kernels_.push_back(k);
        return kernel_def(*this, kernels_.size() - 1);
    }
    /// An object type T (instances shared by the host and the plugin as shared_ptr<T>).
    template <typename T>
    type_builder<T> type(const char* name, const char* doc = nullptr) {
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
    const isthmus_plugin* descriptor() {
        for (auto& t : types_) {
            auto& tm = type_members_[&t];
            t.nfields = static_cast<int32_t>(tm.fields.size());
            t.fields = tm.fields.data();
            t.nmethods = static_cast<int32_t>(tm.methods.size());
            t.methods = tm.methods.data();
            t.nevents = static_cast<int32_t>(tm.events.size());
            t.events = tm.events.data();
        }
        flat_types_.assign(types_.begin(), types_.end());
        // Re-point the type slots and object parameters at the flat copies.
        for (size_t i = 0; i < types_.size(); ++i) retarget(&types_[i], &flat_types_[i]);
        desc_.nfunctions = static_cast<int32_t>(functions_.size());
        desc_.functions = functions_.data();
        desc_.nkernels = static_cast<int32_t>(kernels_.size());
        desc_.kernels = kernels_.data();
        desc_.ntypes = static_cast<int32_t>(flat_types_.size());
        desc_.types = flat_types_.data();
        return &desc_;
    }

private:
    template <typename T>
    friend class type_builder;
    friend class kernel_def;

    struct members {
        std::vector<isthmus_field> fields;
        std::vector<isthmus_function> methods;
        std::vector<isthmus_event> events;
    };

    template <typename F>
    void* keep_callable(F f) {
        auto p = std::make_shared<F>(std::move(f));
        callables_.push_back(p);
        return p.get();
    }

    template <typename A>
    std::vector<isthmus_param> params_of(const names& given, size_t n, size_t skip = 0) {
        std::vector<isthmus_param> ps;
        [&]<size_t... I>(std::index_sequence<I...>) {
            (..., [&] {
                if (I >= skip && I < n + skip) {
                    const size_t k = I - skip;
                    const char* nm = st_.keep(k < given.size() ? given[k] : detail::cat("arg", k));
                    ps.push_back(detail::describe_param<std::tuple_element_t<I, A>>(nm));
                }
            }());
        }
        (std::make_index_sequence<std::tuple_size_v<A>>{});
        return ps;
    }

    template <typename F>
    void add_function(std::vector<isthmus_function>& into, const char* name, F f,
                      const names& params, const char* doc, const char* result, size_t skip) {
        using tr = detail::fn_traits<std::decay_t<F>>;
        constexpr size_t n = std::tuple_size_v<typename tr::args>;
        auto& ps = st_.params.emplace_back(params_of<typename tr::args>(params, n - skip, skip));
        isthmus_function fn{};
        fn.name = st_.keep(name);
        fn.signature = st_.keep(detail::signature_of(name, ps, result));
        fn.doc = doc ? st_.keep(doc) : nullptr;
        fn.nparams = static_cast<int32_t>(ps.size());
        fn.params = ps.data();
        fn.impl = &detail::function_impl<F>;
        fn.data = keep_callable(std::move(f));
        into.push_back(fn);
    }

    void retarget(const isthmus_type* from, const isthmus_type* to) {
        auto fix = [&](const isthmus_param* ps, int32_t n) {
            for (int32_t i = 0; i < n; ++i)
                if (ps[i].type == from) const_cast<isthmus_param&>(ps[i]).type = to;
        };
        for (auto& f : functions_) fix(f.params, f.nparams);
        for (auto& k : kernels_) fix(k.params, k.nparams);
        for (auto& [t, tm] : type_members_)
            for (auto& f : tm.methods) fix(f.params, f.nparams);
        for (auto& fx : retargets_) fx(from, to);
    }

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
    std::vector<std::function<void(const isthmus_type*, const isthmus_type*)>> retargets_;
    std::vector<std::shared_ptr<void>> callables_;
};

inline kernel_def& kernel_def::at_position(std::initializer_list<std::string_view> params) {
    const isthmus_kernel& k = m_.kernels_[index_];
    auto* ps = const_cast<isthmus_param*>(k.params);
    for (std::string_view want : params) {
        int32_t i = 0;
        while (i < k.nparams && want != ps[i].name) ++i;
        if (i == k.nparams || ps[i].kind != ISTHMUS_PARAM_TENSOR)
            throw value_error(detail::cat("kernel ", k.name, ": at_position(\"", std::string(want),
                                          "\"): the kernel has no tensor parameter of that name"));
        ps[i].flags |= ISTHMUS_PARAM_AT_POSITION;
    }
    return *this;
}

template <typename T>
template <typename... A>
type_builder<T>& type_builder<T>::ctor(names params, const char* doc) {
    m_.def(
        t_.name, [](A... a) { return std::make_shared<T>(std::move(a)...); }, std::move(params),
        doc ? doc : t_.doc);
    return *this;
}

template <typename T>
template <typename V>
type_builder<T>& type_builder<T>::field(const char* name, V T::*member) {
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
template <typename R, typename... A>
type_builder<T>& type_builder<T>::method(const char* name, R (T::*fn)(A...), names params,
                                         const char* doc) {
    auto wrapped = [fn](std::shared_ptr<T> self, A... a) -> R {
        return ((*self).*fn)(std::forward<A>(a)...);
    };
    m_.add_function(m_.type_members_[&t_].methods, name, std::move(wrapped), params, doc,
                    detail::result_name<R>(), 1);
    return *this;
}

template <typename T>
template <typename R, typename... A>
type_builder<T>& type_builder<T>::method(const char* name, R (T::*fn)(A...) const, names params,
                                         const char* doc) {
    auto wrapped = [fn](std::shared_ptr<T> self, A... a) -> R {
        return ((*self).*fn)(std::forward<A>(a)...);
    };
    m_.add_function(m_.type_members_[&t_].methods, name, std::move(wrapped), params, doc,
                    detail::result_name<R>(), 1);
    return *this;
}

template <typename T>
template <typename... A>
type_builder<T>& type_builder<T>::event(const char* name, isthmus::plugin::event<A...> T::*member) {
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
/// Note [plugin definition errors]: an exception thrown while a plugin defines itself (a bad
/// at_position name, out of memory) must not cross the C entry point. The entry point then
/// returns a descriptor with an empty name and the message as its description, which the host
/// refuses with that message.
inline const isthmus_plugin* define_plugin(plugin::module& m, void (*define)(plugin::module&)) {
    try {
        define(m);
        return m.descriptor();
    } catch (...) {
        static std::string message;
        try {
            throw;
        } catch (const std::exception& e) {
            message = e.what();
        } catch (...) {
            message = "unknown C++ exception";
        }
        static isthmus_plugin failed{};
        failed.abi_version = ISTHMUS_PLUGIN_ABI_VERSION;
        failed.struct_size = sizeof(isthmus_plugin);
        failed.name = "";
        failed.description = message.c_str();
        return &failed;
    }
}
} // namespace detail

} // namespace isthmus::plugin

/// Defines a plugin named NAME: the body receives `isthmus::plugin::module& M` and registers
/// functions, kernels and types; the entry point is exported for the host's loader.
#define ISTHMUS_PLUGIN(NAME, M)                                                                    \
    static void isthmus_plugin_define_(::isthmus::plugin::module& M);                              \
    static const isthmus_plugin* isthmus_plugin_entry_impl_(uint32_t host_abi,                     \
                                                            const isthmus_host* host) {            \
        static ::isthmus::plugin::module mod_(#NAME);                                              \
        static const isthmus_plugin* desc_ =                                                       \
            ::isthmus::plugin::detail::define_plugin(mod_, &isthmus_plugin_define_);               \
        if (host_abi == ISTHMUS_PLUGIN_ABI_VERSION) ::isthmus::plugin::detail::g_host = host;      \
        return desc_;                                                                              \
    }                                                                                              \
    ISTHMUS_PLUGIN_ENTRY(isthmus_plugin_entry_impl_)                                               \
    static void isthmus_plugin_define_(::isthmus::plugin::module& M)
