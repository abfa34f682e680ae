// CPU min, max, any and all: the comparison and logical ops the reduction engine runs.
#include "cpu/reduce_engine.hpp"

#include <cstring>
#include <limits>
#include <type_traits>

namespace isthmus::cpu {

namespace {

// The extreme of `a` (the running value) and `x`. A NaN wins and stays (NumPy's minimum and
// maximum propagate NaN); complex values compare lexicographically. The real-float form is
// branch-free so that the lane kernel vectorises it.
template <bool Max, typename K>
K pick(K a, K x) {
    if constexpr (is_complex_v<K>) {
        if (is_nan(a)) return a;
        if (is_nan(x)) return x;
        const bool better =
            Max ? (x.real() > a.real() || (x.real() == a.real() && x.imag() > a.imag()))
                : (x.real() < a.real() || (x.real() == a.real() && x.imag() < a.imag()));
        return better ? x : a;
    } else if constexpr (std::is_floating_point_v<K>) {
        return ((Max ? x > a : x < a) || x != x) ? x : a;
    } else {
        return (Max ? x > a : x < a) ? x : a;
    }
}

// The end of the lanes of Note [NaN-propagating extrema]: m and z hold lane_count<T> lanes
// covering x[0, i); folds them and takes the tail x[i, n).
template <bool Max, typename T>
ISTHMUS_REDUCE_INLINE T extremum_finish(const T* m, const T* z, const T* x, int64_t i, int64_t n) {
    constexpr int W = lane_count<T>;
    constexpr T start =
        Max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    T acc = start, zs = 0;
    for (int j = 0; j < W; ++j) {
        acc = pick<Max>(acc, m[j]);
        zs += z[j];
    }
    if (zs != zs) { // a NaN or an infinity: the NaN-aware scan decides
        acc = start;
        for (int64_t k = 0; k < n; ++k) acc = pick<Max>(acc, x[k]);
        return acc;
    }
    for (; i < n; ++i) acc = pick<Max>(acc, x[i]);
    return acc;
}

// The lanes of Note [NaN-propagating extrema]; n >= the lane count.
template <bool Max, typename T>
ISTHMUS_REDUCE_INLINE T extremum_lanes(const T* x, int64_t n) {
    constexpr int W = lane_count<T>;
    constexpr T start =
        Max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    T m[W], z[W];
    for (int j = 0; j < W; ++j) {
        m[j] = start;
        z[j] = 0;
    }
    int64_t i = 0;
    for (; i + W <= n; i += W) {
        // Not unrolled before vectorisation: unrolled, GCC does not vectorise the selects.
#pragma GCC unroll 1
        for (int j = 0; j < W; ++j) {
            const T v = x[i + j];
            m[j] = (Max ? v > m[j] : v < m[j]) ? v : m[j];
            z[j] += v - v;
        }
    }
    return extremum_finish<Max>(m, z, x, i, n);
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__CUDACC__)
// The same lanes as four 32-byte vectors (lane k * VL + j is element j of vector k), which
// the AVX2 code keeps in registers; the portable loop above keeps its lanes in memory, which
// costs a third of the speed on data in the cache. Same lanes, same operations: the same
// result bit for bit.
template <bool Max, typename T>
__attribute__((target("avx2"))) T extremum_lanes_avx2(const T* x, int64_t n) {
    constexpr int W = lane_count<T>;
    constexpr int VL = 32 / static_cast<int>(sizeof(T));
    constexpr int NV = W / VL;
    static_assert(NV * VL == W);
    typedef T V __attribute__((vector_size(32)));
    constexpr T start =
        Max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    V m[NV], z[NV];
    for (int k = 0; k < NV; ++k)
        for (int j = 0; j < VL; ++j) {
            m[k][j] = start;
            z[k][j] = 0;
        }
    int64_t i = 0;
    for (; i + W <= n; i += W)
        for (int k = 0; k < NV; ++k) {
            V v;
            std::memcpy(&v, x + i + k * VL, sizeof(V));
            m[k] = (Max ? v > m[k] : v < m[k]) ? v : m[k];
            z[k] += v - v;
        }
    T ml[W], zl[W];
    std::memcpy(ml, m, sizeof(ml));
    std::memcpy(zl, z, sizeof(zl));
    return extremum_finish<Max>(ml, zl, x, i, n);
}

template <bool Max, typename T>
T extremum_lanes_simd(const T* x, int64_t n) {
    static const bool avx2 = __builtin_cpu_supports("avx2");
    return avx2 ? extremum_lanes_avx2<Max>(x, n) : extremum_lanes<Max>(x, n);
}
#else
template <bool Max, typename T>
T extremum_lanes_simd(const T* x, int64_t n) {
    return extremum_lanes<Max>(x, n);
}
#endif

template <typename T, bool Max>
struct extremum_op {
    using in_t = T;
    using acc_t = key_t<T>;
    using out_t = T;
    using K = key_t<T>;

    K identity() const {
        if constexpr (is_complex_v<K>) {
            using R = typename K::value_type;
            const R inf = std::numeric_limits<R>::infinity();
            return Max ? K(-inf, -inf) : K(inf, inf);
        } else if constexpr (std::is_floating_point_v<K>) {
            return Max ? -std::numeric_limits<K>::infinity() : std::numeric_limits<K>::infinity();
        } else {
            return Max ? std::numeric_limits<K>::lowest() : std::numeric_limits<K>::max();
        }
    }
    K step(K a, T x) const { return pick<Max>(a, static_cast<K>(x)); }
    K combine(K a, K b) const { return pick<Max>(a, b); }
    T finalize(K a) const { return static_cast<T>(a); }

    // Note [NaN-propagating extrema]
    // ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    // For float and double the lanes take the plain extreme (`x > m ? x : m`, one maxps/minps) and
    // add `x - x` into a second set of lanes, which stays exactly 0 unless an element is NaN or
    // infinite. Only then is the run scanned again with the NaN-aware pick(), so data without NaN
    // and inf costs two vector instructions an element. Both loops are fixed functions of the data:
    // any clone gives the same result.
    K run(const T* x, int64_t n) const requires std::is_floating_point_v<T> {
        if (n >= clone_min_run) return extremum_lanes_simd<Max>(x, n);
        K acc = identity();
        for (int64_t i = 0; i < n; ++i) acc = pick<Max>(acc, x[i]);
        return acc;
    }
};

// any/all accumulate 0/1 flags as wide as the input elements, so that the compare, the mask
// and the or/and stay in one vector width and the lane kernel vectorises.
template <typename T>
using flag_t =
    std::conditional_t<sizeof(T) == 1, uint8_t,
                       std::conditional_t<sizeof(T) == 2, uint16_t,
                                          std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;

template <typename T, bool All>
struct logical_op {
    using in_t = T;
    using acc_t = flag_t<T>;
    using out_t = bool;
    using F = flag_t<T>;

    F identity() const { return All ? F(1) : F(0); }
    F combine(F a, F b) const { return All ? F(a & b) : F(a | b); }
    F step(F a, T x) const { return combine(a, convert<bool>(x) ? F(1) : F(0)); }
    bool finalize(F a) const { return a != 0; }
};

template <typename T>
void reduce_extrema_as(bool is_max, const reduce_geometry& g, const void* in, void* out) {
    if (is_max)
        run_reduction(extremum_op<T, true>{}, g, in, out);
    else
        run_reduction(extremum_op<T, false>{}, g, in, out);
}

template <typename T>
void reduce_logical_as(bool is_all, const reduce_geometry& g, const void* in, void* out) {
    if (is_all)
        run_reduction(logical_op<T, true>{}, g, in, out);
    else
        run_reduction(logical_op<T, false>{}, g, in, out);
}

} // namespace

void reduce_extrema(bool is_max, dtype dt, const reduce_geometry& g, const void* in, void* out) {
    ISTHMUS_DISPATCH(dt, T, { reduce_extrema_as<T>(is_max, g, in, out); });
}

void reduce_logical(bool is_all, dtype dt, const reduce_geometry& g, const void* in, void* out) {
    ISTHMUS_DISPATCH(dt, T, { reduce_logical_as<T>(is_all, g, in, out); });
}

} // namespace isthmus::cpu
