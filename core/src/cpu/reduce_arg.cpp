// CPU argmin/argmax along one axis: first occurrence, NaN wins; blocked scans and column tiles.
#include "cpu/reduce.hpp"
#include "cpu/reduce_engine.hpp"

#include <cstring>
#include <limits>
#include <type_traits>

namespace isthmus::cpu {

namespace {

// Strictly better (later equal values never replace earlier ones: first occurrence wins).
template <bool Max, typename K>
bool better(K x, K best) {
    if constexpr (is_complex_v<K>)
        return Max ? (x.real() > best.real() || (x.real() == best.real() && x.imag() > best.imag()))
                   : (x.real() < best.real() ||
                      (x.real() == best.real() && x.imag() < best.imag()));
    else
        return Max ? x > best : x < best;
}

// The NaN-propagating extreme of a and x (branch-free for the vectoriser).
template <bool Max, typename K>
K pick(K a, K x) {
    return (better<Max>(x, a) || x != x) ? x : a;
}

// The result of scanning a stretch: the winning index, its value, whether it is a NaN.
template <typename K>
struct arg_result {
    int64_t index;
    K value;
    bool nan;
};

// The first index in [b, e) where `hit` holds (there is one): 16 elements at a time with a
// vectorised or-reduction, then element by element inside the 16 that hit.
template <typename K, typename F>
int64_t find_first(const K* x, int64_t b, int64_t e, F hit) {
    int64_t i = b;
    for (; i + 16 <= e; i += 16) {
        int any = 0;
        for (int j = 0; j < 16; ++j) any |= hit(x[i + j]) ? 1 : 0;
        if (any) break;
    }
    while (!hit(x[i])) ++i;
    return i;
}

// 16-byte vectors of K and of same-width integers (GCC/Clang vector extensions, lowered to
// SSE2, or to scalar code on targets without vectors).
template <typename K>
struct vec16;
template <>
struct vec16<float> {
    using index = int32_t;
    typedef float type __attribute__((vector_size(16)));
    typedef int32_t itype __attribute__((vector_size(16)));
};
template <>
struct vec16<double> {
    using index = int64_t;
    typedef double type __attribute__((vector_size(16)));
    typedef int64_t itype __attribute__((vector_size(16)));
};

// The first index in [b, e) holding `v` (there is one): 16 bytes x 4 compared per step.
template <typename K>
int64_t find_equal(const K* x, int64_t b, int64_t e, K v) {
    using V = typename vec16<K>::type;
    using IV = typename vec16<K>::itype;
    constexpr int L = 16 / sizeof(K);
    const V target = V{} + v;
    int64_t i = b;
    for (; i + 4 * L <= e; i += 4 * L) {
        IV hit = IV{};
        for (int u = 0; u < 4; ++u) {
            V xv;
            std::memcpy(&xv, x + i + u * L, sizeof(V));
            hit |= xv == target;
        }
        typename vec16<K>::index any = 0;
        for (int j = 0; j < L; ++j) any |= hit[j];
        if (any) break;
    }
    while (x[i] != v) ++i;
    return i;
}

// Note [argmin/argmax scans]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// A contiguous stretch is scanned in blocks of 2048 elements; each block's extreme comes from a
// vectorised lane reduction (for float and double with a separate NaN flag, so the lanes are plain
// max/min instructions), and only a block that improves on the best so far is searched again, in
// L1, for the first index of that value (a vectorised compare for float and double). A NaN ends the
// scan at the first NaN. Complex and half types scan element by element.
template <bool Max, typename K>
arg_result<K> scan_floating(const K* x, int64_t n, int64_t base) {
    using F = std::conditional_t<sizeof(K) == 4, uint32_t, uint64_t>;
    constexpr int W = lane_count<K>;
    constexpr int64_t block = 2048;
    arg_result<K> r{base, x[0], x[0] != x[0]};
    if (r.nan) return r;
    for (int64_t b = 0; b < n; b += block) {
        const int64_t e = std::min(n, b + block);
        // Pass 1: the block's extreme (one max/min instruction per vector) and a NaN flag.
        K m[W];
        F nan[W];
        for (int j = 0; j < W; ++j) {
            m[j] = r.value;
            nan[j] = 0;
        }
        int64_t i = b;
        for (; i + W <= e; i += W)
            for (int j = 0; j < W; ++j) {
                const K v = x[i + j];
                m[j] = (Max ? v > m[j] : v < m[j]) ? v : m[j];
                nan[j] |= v != v ? F(1) : F(0);
            }
        K v = r.value;
        F any_nan = 0;
        for (int j = 0; j < W; ++j) {
            v = (Max ? m[j] > v : m[j] < v) ? m[j] : v;
            any_nan |= nan[j];
        }
        for (int64_t k = i; k < e; ++k) {
            v = (Max ? x[k] > v : x[k] < v) ? x[k] : v;
            any_nan |= x[k] != x[k] ? F(1) : F(0);
        }
        if (any_nan)
            for (int64_t k = b;; ++k)
                if (x[k] != x[k]) return {base + k, x[k], true};
        // Pass 2, only for a block that improves: the first index of its extreme, in L1.
        if (better<Max>(v, r.value)) r = {base + find_equal(x, b, e, v), v, false};
    }
    return r;
}

template <typename T, bool Max>
arg_result<key_t<T>> scan_contiguous(const T* x, int64_t n, int64_t base) {
    using K = key_t<T>;
    if constexpr (std::is_floating_point_v<T>) {
        return scan_floating<Max>(x, n, base);
    } else {
        arg_result<K> r{base, static_cast<K>(x[0]), is_nan(static_cast<K>(x[0]))};
        if (r.nan) return r;
        if constexpr (is_complex_v<K> || is_half_v<T>) {
            for (int64_t i = 1; i < n; ++i) {
                const K v = static_cast<K>(x[i]);
                if (is_nan(v)) return {base + i, v, true};
                if (better<Max>(v, r.value)) r = {base + i, v, false};
            }
            return r;
        } else {
            constexpr int64_t block = 2048;
            constexpr int W = lane_count<K>;
            for (int64_t b = 0; b < n; b += block) {
                const int64_t e = std::min(n, b + block);
                K lane[W];
                for (int j = 0; j < W; ++j) lane[j] = r.value;
                int64_t i = b;
                for (; i + W <= e; i += W)
                    for (int j = 0; j < W; ++j) lane[j] = pick<Max>(lane[j], x[i + j]);
                K v = lane[0];
                for (int j = 1; j < W; ++j) v = pick<Max>(v, lane[j]);
                for (; i < e; ++i) v = pick<Max>(v, x[i]);
                if (better<Max>(v, r.value)) {
                    i = find_first(x, b, e, [v](K a) { return a == v; });
                    r = {base + i, v, false};
                }
            }
            return r;
        }
    }
}

template <typename T, bool Max>
arg_result<key_t<T>> scan(const char* p, int64_t stride, int64_t n, int64_t base) {
    using K = key_t<T>;
    if (stride == static_cast<int64_t>(sizeof(T)))
        return scan_contiguous<T, Max>(reinterpret_cast<const T*>(p), n, base);
    auto at = [&](int64_t i) {
        return static_cast<K>(*reinterpret_cast<const T*>(p + i * stride));
    };
    arg_result<K> r{base, at(0), is_nan(at(0))};
    if (r.nan) return r;
    for (int64_t i = 1; i < n; ++i) {
        const K v = at(i);
        if (is_nan(v)) return {base + i, v, true};
        if (better<Max>(v, r.value)) r = {base + i, v, false};
    }
    return r;
}

// One long row cut into pieces (Note [parallel pieces]); partial results combine in order.
template <typename T, bool Max>
int64_t scan_pieces(const char* p, int64_t stride, int64_t n, bool parallel) {
    using K = key_t<T>;
    const int64_t pieces = piece_count(n, n);
    if (pieces == 1) return scan<T, Max>(p, stride, n, 0).index;
    std::vector<arg_result<K>> part(static_cast<size_t>(pieces));
    for_pieces(pieces, parallel, [&](int64_t c) {
        const int64_t b = n * c / pieces, e = n * (c + 1) / pieces;
        part[static_cast<size_t>(c)] = scan<T, Max>(p + b * stride, stride, e - b, b);
    });
    arg_result<K> r = part[0];
    for (size_t c = 1; c < part.size() && !r.nan; ++c)
        if (part[c].nan || better<Max>(part[c].value, r.value)) r = part[c];
    return r.index;
}

// Kept dimensions of an axis reduction, coalesced (outermost input stride first).
struct arg_geometry {
    int nk = 0;
    int64_t kshape[max_rank]{}, kin[max_rank]{}, kout[max_rank]{};
    int64_t outputs = 1;
    int64_t len = 0, stride = 0; // the reduced axis, bytes (any sign)
};

arg_geometry make_arg_geometry(const tensor& x, const tensor& out, int64_t axis) {
    arg_geometry g;
    std::vector<bool> mask(x.shape().size(), false);
    mask[static_cast<size_t>(axis)] = true;
    // Reuse the reduction geometry for the kept dimensions (one reduced dimension: no flip
    // matters there, its stride is taken from x directly).
    const reduce_geometry rg = make_reduce_geometry(x, out, mask);
    g.nk = rg.nk;
    std::copy(rg.kshape, rg.kshape + rg.nk, g.kshape);
    std::copy(rg.kin, rg.kin + rg.nk, g.kin);
    std::copy(rg.kout, rg.kout + rg.nk, g.kout);
    g.outputs = rg.outputs;
    g.len = x.shape()[static_cast<size_t>(axis)];
    g.stride = x.strides()[static_cast<size_t>(axis)] * static_cast<int64_t>(x.itemsize());
    return g;
}

// Column tiles: the innermost kept dimension is innermost in memory; each tile keeps the best
// values and their indices (index type I as wide as the values where it fits, so that the
// branch-free update vectorises) and every row along the axis updates them.
template <typename T, bool Max, typename I>
void arg_columns(const arg_geometry& g, const char* in, char* o, bool parallel) {
    using K = key_t<T>;
    const std::array<const int64_t*, 2> kst{g.kin, g.kout};
    constexpr int64_t tile = 1024;
    const int nk = g.nk;
    const int64_t m = g.kshape[nk - 1], sk = g.kin[nk - 1], so = g.kout[nk - 1];
    const int64_t tiles = (m + tile - 1) / tile, items = g.outputs / m * tiles;
    auto run_items = [&](int64_t ib, int64_t ie) {
        K best[tile];
        I idx[tile];
        for (int64_t it = ib; it < ie; ++it) {
            const int64_t outer = it / tiles, t = it % tiles;
            int64_t oi = 0, oo = 0;
            for_each_run<2>(nk - 1, g.kshape, kst, outer, outer + 1,
                            [&](const std::array<int64_t, 2>& off, int64_t) {
                                oi = off[0];
                                oo = off[1];
                            });
            oi += t * tile * sk;
            oo += t * tile * so;
            const int64_t w = std::min(tile, m - t * tile);
            const char* p = in + oi;
            for (int64_t j = 0; j < w; ++j) {
                best[j] = static_cast<K>(*reinterpret_cast<const T*>(p + j * sk));
                idx[j] = 0;
            }
            for (int64_t i = 1; i < g.len; ++i) {
                const char* row = p + i * g.stride;
                const I ii = static_cast<I>(i);
                if (sk == static_cast<int64_t>(sizeof(T)) && !is_half_v<T> && !is_complex_v<K>) {
                    const T* x = reinterpret_cast<const T*>(row);
                    for (int64_t j = 0; j < w; ++j) {
                        const K v = static_cast<K>(x[j]);
                        // bitwise on 0/1 ints: no branch, so the column loop vectorises
                        const bool take = (int{better<Max>(v, best[j])} |
                                           (int{is_nan(v)} & int{!is_nan(best[j])})) != 0;
                        best[j] = take ? v : best[j];
                        idx[j] = take ? ii : idx[j];
                    }
                    continue;
                }
                for (int64_t j = 0; j < w; ++j) {
                    const K v = static_cast<K>(*reinterpret_cast<const T*>(row + j * sk));
                    const bool take = !is_nan(best[j]) && (is_nan(v) || better<Max>(v, best[j]));
                    best[j] = take ? v : best[j];
                    idx[j] = take ? ii : idx[j];
                }
            }
            for (int64_t j = 0; j < w; ++j) *reinterpret_cast<int64_t*>(o + oo + j * so) = idx[j];
        }
    };
    const int64_t pieces = piece_count(g.outputs * g.len, items);
    for_pieces(pieces, parallel,
               [&](int64_t c) { run_items(items * c / pieces, items * (c + 1) / pieces); });
}

template <typename T, bool Max>
void arg_reduce_as(const tensor& out, void* out_data, const tensor& x, const void* x_data,
                   int64_t axis) {
    using K = key_t<T>;
    const arg_geometry g = make_arg_geometry(x, out, axis);
    if (g.outputs == 0) return;
    const char* in = static_cast<const char*>(x_data);
    char* o = static_cast<char*>(out_data);
    const bool parallel = g.outputs * g.len >= parallel_grain;
    const std::array<const int64_t*, 2> kst{g.kin, g.kout};
    if (g.outputs == 1) {
        *reinterpret_cast<int64_t*>(o) = scan_pieces<T, Max>(in, g.stride, g.len, parallel);
        return;
    }
    const bool column = g.nk > 0 && std::abs(g.kin[g.nk - 1]) < std::abs(g.stride);
    if (!column) {
        auto rows = [&](int64_t ob, int64_t oe) {
            for_each_run<2>(
                g.nk, g.kshape, kst, ob, oe, [&](const std::array<int64_t, 2>& off, int64_t n) {
                    const int64_t si = g.kin[g.nk - 1], so = g.kout[g.nk - 1];
                    for (int64_t i = 0; i < n; ++i)
                        *reinterpret_cast<int64_t*>(o + off[1] + i * so) =
                            scan<T, Max>(in + off[0] + i * si, g.stride, g.len, 0).index;
                });
        };
        const int64_t pieces = piece_count(g.outputs * g.len, g.outputs);
        for_pieces(pieces, parallel,
                   [&](int64_t c) { rows(g.outputs * c / pieces, g.outputs * (c + 1) / pieces); });
        return;
    }
    if (g.len <= std::numeric_limits<int32_t>::max() && sizeof(K) <= 4)
        return arg_columns<T, Max, int32_t>(g, in, o, parallel);
    arg_columns<T, Max, int64_t>(g, in, o, parallel);
}

} // namespace

void arg_reduce(bool is_max, const tensor& out, void* out_data, const tensor& x, const void* x_data,
                int64_t axis) {
    ISTHMUS_ASSERT(out.dtype() == dtype::int64 && axis >= 0 && axis < x.dim() &&
                   x.shape()[static_cast<size_t>(axis)] > 0);
    ISTHMUS_DISPATCH(x.dtype(), T, {
        if (is_max)
            arg_reduce_as<T, true>(out, out_data, x, x_data, axis);
        else
            arg_reduce_as<T, false>(out, out_data, x, x_data, axis);
    });
}

} // namespace isthmus::cpu
