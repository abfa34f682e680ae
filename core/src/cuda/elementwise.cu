// CUDA elementwise kernels: binary and unary ops with broadcasting, vectorised contiguous loads.
#include "cuda/elementwise_common.cuh"

#include <cmath>
#include <type_traits>

namespace isthmus::cudak {

namespace {

// ---- the ops ----

template <class T>
__device__ inline bool is_nan(T x) {
    return x != x;
}

template <bop OP, class T>
struct bfn;
#define ISTHMUS_BFN(OP, EXPR)                                                                      \
    template <class T>                                                                             \
    struct bfn<bop::OP, T> {                                                                       \
        __device__ auto operator()(T a, T b) const { return EXPR; }                                \
    };
ISTHMUS_BFN(add, static_cast<T>(a + b))
ISTHMUS_BFN(sub, static_cast<T>(a - b))
ISTHMUS_BFN(mul, static_cast<T>(a* b))
ISTHMUS_BFN(div, static_cast<T>(a / b))
// NaN propagates, as in NumPy's maximum/minimum.
ISTHMUS_BFN(maximum, is_nan(a) ? a : (is_nan(b) ? b : (a > b ? a : b)))
ISTHMUS_BFN(minimum, is_nan(a) ? a : (is_nan(b) ? b : (a < b ? a : b)))
ISTHMUS_BFN(pow, static_cast<T>(::pow(a, b)))
ISTHMUS_BFN(atan2, static_cast<T>(::atan2(a, b)))
ISTHMUS_BFN(eq, static_cast<unsigned char>(a == b))
ISTHMUS_BFN(ne, static_cast<unsigned char>(a != b))
ISTHMUS_BFN(lt, static_cast<unsigned char>(a < b))
ISTHMUS_BFN(le, static_cast<unsigned char>(a <= b))
ISTHMUS_BFN(gt, static_cast<unsigned char>(a > b))
ISTHMUS_BFN(ge, static_cast<unsigned char>(a >= b))
#undef ISTHMUS_BFN

template <uop OP, class T>
struct ufn;
#define ISTHMUS_UFN(OP, EXPR)                                                                      \
    template <class T>                                                                             \
    struct ufn<uop::OP, T> {                                                                       \
        __device__ auto operator()(T a) const { return EXPR; }                                     \
    };
ISTHMUS_UFN(neg, static_cast<T>(-a))
ISTHMUS_UFN(abs, static_cast<T>(a < T(0) ? -a : a))
ISTHMUS_UFN(sign, static_cast<T>(is_nan(a) ? a : (a > T(0) ? T(1) : (a < T(0) ? T(-1) : T(0)))))
ISTHMUS_UFN(exp, static_cast<T>(::exp(a)))
ISTHMUS_UFN(log, static_cast<T>(::log(a)))
ISTHMUS_UFN(log2, static_cast<T>(::log2(a)))
ISTHMUS_UFN(log10, static_cast<T>(::log10(a)))
ISTHMUS_UFN(expm1, static_cast<T>(::expm1(a)))
ISTHMUS_UFN(log1p, static_cast<T>(::log1p(a)))
ISTHMUS_UFN(sqrt, static_cast<T>(::sqrt(a)))
ISTHMUS_UFN(rsqrt, static_cast<T>(T(1) / ::sqrt(a)))
ISTHMUS_UFN(sin, static_cast<T>(::sin(a)))
ISTHMUS_UFN(cos, static_cast<T>(::cos(a)))
ISTHMUS_UFN(tan, static_cast<T>(::tan(a)))
ISTHMUS_UFN(asin, static_cast<T>(::asin(a)))
ISTHMUS_UFN(acos, static_cast<T>(::acos(a)))
ISTHMUS_UFN(atan, static_cast<T>(::atan(a)))
ISTHMUS_UFN(sinh, static_cast<T>(::sinh(a)))
ISTHMUS_UFN(cosh, static_cast<T>(::cosh(a)))
ISTHMUS_UFN(tanh, static_cast<T>(::tanh(a)))
ISTHMUS_UFN(floor, static_cast<T>(::floor(a)))
ISTHMUS_UFN(ceil, static_cast<T>(::ceil(a)))
ISTHMUS_UFN(round, static_cast<T>(::rint(a))) // half to even, as NumPy
ISTHMUS_UFN(square, static_cast<T>(a* a))
ISTHMUS_UFN(reciprocal, static_cast<T>(T(1) / a))
ISTHMUS_UFN(isnan, static_cast<unsigned char>(is_nan(a)))
ISTHMUS_UFN(isinf, static_cast<unsigned char>(::isinf(a)))
ISTHMUS_UFN(isfinite, static_cast<unsigned char>(::isfinite(a)))
#undef ISTHMUS_UFN

// ---- the kernels ----

// Note [elementwise kernel paths]: one kernel per (op, type) with three paths chosen at launch
// (uniform branches): vectorised 16-byte loads when every tensor operand is contiguous and
// aligned, a flat loop when contiguous but unaligned, and a strided loop (offsets from the
// coalesced shape) otherwise. Scalars are kernel parameters, broadcast operands have stride 0.
template <class F, class T, class O>
__global__ void binary_kernel(F f, space sp, arg out, arg a, arg b, bool vector_ok) {
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const T* pa = static_cast<const T*>(a.data);
    const T* pb = static_cast<const T*>(b.data);
    O* po = static_cast<O*>(const_cast<void*>(out.data));
    const T sa = pa ? T() : scalar_of<T>(a), sb = pb ? T() : scalar_of<T>(b);
    if (sp.contiguous) {
        int64_t start = 0;
        if (vector_ok) {
            constexpr int V = 16 / sizeof(T);
            const int64_t nv = sp.numel / V;
            for (int64_t v = tid; v < nv; v += stride) {
                vec<T, V> x, y;
                if (pa)
                    x = reinterpret_cast<const vec<T, V>*>(pa)[v];
                else
                    for (int j = 0; j < V; ++j) x.v[j] = sa;
                if (pb)
                    y = reinterpret_cast<const vec<T, V>*>(pb)[v];
                else
                    for (int j = 0; j < V; ++j) y.v[j] = sb;
                vec<O, V> r;
                for (int j = 0; j < V; ++j) r.v[j] = f(x.v[j], y.v[j]);
                reinterpret_cast<vec<O, V>*>(po)[v] = r;
            }
            start = nv * V;
        }
        for (int64_t i = start + tid; i < sp.numel; i += stride)
            po[i] = f(pa ? pa[i] : sa, pb ? pb[i] : sb);
        return;
    }
    const int64_t* const strides[3] = {out.strides, a.strides, b.strides};
    for (int64_t i = tid; i < sp.numel; i += stride) {
        int64_t off[3];
        offsets<3>(sp, i, strides, off);
        po[off[0]] = f(pa ? pa[off[1]] : sa, pb ? pb[off[2]] : sb);
    }
}

template <class F, class T, class O>
__global__ void unary_kernel(F f, space sp, arg out, arg a, bool vector_ok) {
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const T* pa = static_cast<const T*>(a.data);
    O* po = static_cast<O*>(const_cast<void*>(out.data));
    if (sp.contiguous) {
        int64_t start = 0;
        if (vector_ok) {
            constexpr int V = 16 / sizeof(T);
            const int64_t nv = sp.numel / V;
            for (int64_t v = tid; v < nv; v += stride) {
                const vec<T, V> x = reinterpret_cast<const vec<T, V>*>(pa)[v];
                vec<O, V> r;
                for (int j = 0; j < V; ++j) r.v[j] = f(x.v[j]);
                reinterpret_cast<vec<O, V>*>(po)[v] = r;
            }
            start = nv * V;
        }
        for (int64_t i = start + tid; i < sp.numel; i += stride) po[i] = f(pa[i]);
        return;
    }
    const int64_t* const strides[2] = {out.strides, a.strides};
    for (int64_t i = tid; i < sp.numel; i += stride) {
        int64_t off[2];
        offsets<2>(sp, i, strides, off);
        po[off[0]] = f(pa[off[1]]);
    }
}

constexpr int block = 256;

template <bop OP, class T>
void run_binary(cudaStream_t s, const space& sp, const arg& out, const arg& a, const arg& b) {
    using F = bfn<OP, T>;
    using O = decltype(F{}(T(), T()));
    const bool vok = aligned16(out.data, a.data, b.data);
    const int64_t work = vok && sp.contiguous ? sp.numel / (16 / sizeof(T)) + 1 : sp.numel;
    binary_kernel<F, T, O><<<grid_for(work, block), block, 0, s>>>(F{}, sp, out, a, b, vok);
}

template <uop OP, class T>
void run_unary(cudaStream_t s, const space& sp, const arg& out, const arg& a) {
    using F = ufn<OP, T>;
    using O = decltype(F{}(T()));
    const bool vok = aligned16(out.data, a.data);
    const int64_t work = vok && sp.contiguous ? sp.numel / (16 / sizeof(T)) + 1 : sp.numel;
    unary_kernel<F, T, O><<<grid_for(work, block), block, 0, s>>>(F{}, sp, out, a, vok);
}

template <class T>
void binary_of(cudaStream_t s, bop op, const space& sp, const arg& out, const arg& a,
               const arg& b) {
    constexpr bool fp = std::is_floating_point_v<T>;
    switch (op) {
#define ISTHMUS_CASE(OP)                                                                           \
    case bop::OP:                                                                                  \
        return run_binary<bop::OP, T>(s, sp, out, a, b);
        ISTHMUS_CASE(add)
        ISTHMUS_CASE(sub)
        ISTHMUS_CASE(mul)
        ISTHMUS_CASE(maximum)
        ISTHMUS_CASE(minimum)
        ISTHMUS_CASE(eq)
        ISTHMUS_CASE(ne)
        ISTHMUS_CASE(lt)
        ISTHMUS_CASE(le)
        ISTHMUS_CASE(gt)
        ISTHMUS_CASE(ge)
#undef ISTHMUS_CASE
    case bop::div:
        if constexpr (fp) return run_binary<bop::div, T>(s, sp, out, a, b);
        break;
    case bop::pow:
        if constexpr (fp) return run_binary<bop::pow, T>(s, sp, out, a, b);
        break;
    case bop::atan2:
        if constexpr (fp) return run_binary<bop::atan2, T>(s, sp, out, a, b);
        break;
    }
}

template <class T>
void unary_of(cudaStream_t s, uop op, const space& sp, const arg& out, const arg& a) {
    constexpr bool fp = std::is_floating_point_v<T>;
    switch (op) {
    case uop::neg:
        return run_unary<uop::neg, T>(s, sp, out, a);
    case uop::abs:
        return run_unary<uop::abs, T>(s, sp, out, a);
    case uop::sign:
        return run_unary<uop::sign, T>(s, sp, out, a);
    case uop::square:
        return run_unary<uop::square, T>(s, sp, out, a);
    default:
        break;
    }
    if constexpr (fp) {
        switch (op) {
#define ISTHMUS_CASE(OP)                                                                           \
    case uop::OP:                                                                                  \
        return run_unary<uop::OP, T>(s, sp, out, a);
            ISTHMUS_CASE(exp)
            ISTHMUS_CASE(log)
            ISTHMUS_CASE(log2)
            ISTHMUS_CASE(log10)
            ISTHMUS_CASE(expm1)
            ISTHMUS_CASE(log1p)
            ISTHMUS_CASE(sqrt)
            ISTHMUS_CASE(rsqrt)
            ISTHMUS_CASE(sin)
            ISTHMUS_CASE(cos)
            ISTHMUS_CASE(tan)
            ISTHMUS_CASE(asin)
            ISTHMUS_CASE(acos)
            ISTHMUS_CASE(atan)
            ISTHMUS_CASE(sinh)
            ISTHMUS_CASE(cosh)
            ISTHMUS_CASE(tanh)
            ISTHMUS_CASE(floor)
            ISTHMUS_CASE(ceil)
            ISTHMUS_CASE(round)
            ISTHMUS_CASE(reciprocal)
            ISTHMUS_CASE(isnan)
            ISTHMUS_CASE(isinf)
            ISTHMUS_CASE(isfinite)
#undef ISTHMUS_CASE
        default:
            break;
        }
    }
}

} // namespace

void launch_binary(cudaStream_t s, bop op, kdt t, kdt, const space& sp, const arg& out,
                   const arg& a, const arg& b) {
    switch (t) {
    case kdt::i32:
        return binary_of<int32_t>(s, op, sp, out, a, b);
    case kdt::i64:
        return binary_of<int64_t>(s, op, sp, out, a, b);
    case kdt::f32:
        return binary_of<float>(s, op, sp, out, a, b);
    case kdt::f64:
        return binary_of<double>(s, op, sp, out, a, b);
    default:
        return;
    }
}

void launch_unary(cudaStream_t s, uop op, kdt t, kdt, const space& sp, const arg& out,
                  const arg& a) {
    switch (t) {
    case kdt::i32:
        return unary_of<int32_t>(s, op, sp, out, a);
    case kdt::i64:
        return unary_of<int64_t>(s, op, sp, out, a);
    case kdt::f32:
        return unary_of<float>(s, op, sp, out, a);
    case kdt::f64:
        return unary_of<double>(s, op, sp, out, a);
    default:
        return;
    }
}

} // namespace isthmus::cudak
