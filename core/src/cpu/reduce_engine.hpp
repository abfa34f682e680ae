// Internal: the CPU reduction engine shared by every associative reduction: the geometry
// (coalesced kept and reduced dimensions), the lane-parallel run kernel, the column kernel and
// their OpenMP splitting.
#pragma once

#include "cpu/convert.hpp"
#include "cpu/strided_loop.hpp"
#include "isthmus/openmp_region.hpp"
#include "isthmus/tensor.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <omp.h>
#include <type_traits>
#include <vector>

namespace isthmus::cpu {

/// Where the elements of a reduction are, after coalescing.
///
/// Note [reduction geometry]
/// ~~~~~~~~~~~~~~~~~~~~~~~~~
/// The kept dimensions (one per output element) and the reduced dimensions are coalesced
/// separately, size-1 dimensions dropped, both ordered outermost first by input stride. Reduced
/// dimensions with a negative stride are flipped (the ops are commutative), so a reversed view
/// reduces as fast as a forward one. Then one of two kernels runs, chosen by which dimension is
/// innermost in memory:
/// - inner (a reduced dimension is innermost, e.g. a full reduction or a sum over rows): each
///   output reduces runs along the innermost reduced dimension with the lane kernel
///   (Note [lane reduction]);
/// - column (a kept dimension is innermost, e.g. column sums): a tile of outputs keeps a
///   buffer of accumulators and every reduced "row" is added to it with a contiguous,
///   vectorised loop; memory is read in order, never strided down a column.
/// Work is split into pieces of whole outputs when there are enough of them, else into ranges
/// of the reduced elements with partials combined in a fixed order (Note [parallel pieces]).
struct reduce_geometry {
    int nk = 0; ///< kept dimensions (may be 0: a full reduction)
    int64_t kshape[max_rank]{}, kin[max_rank]{}, kout[max_rank]{}; ///< byte strides
    int nr = 0; ///< reduced dimensions (at least 1 after make_reduce_geometry)
    int64_t rshape[max_rank]{}, rin[max_rank]{}; ///< non-negative byte strides
    int64_t in_shift = 0; ///< bytes to add to x's element 0 (flipped reduced dimensions)
    int64_t outputs = 1;  ///< number of output elements
    int64_t reduced = 1;  ///< elements reduced into each output
    bool column = false;  ///< the column kernel applies
};

/// The geometry for reducing `x` over the dimensions flagged in `reduced` into `out` (which has
/// the kept dimensions, in order).
reduce_geometry make_reduce_geometry(const tensor& x, const tensor& out,
                                     const std::vector<bool>& reduced);

/// Calls f(offsets, n) for each run of the flat range [begin, end) of an `nd`-dimensional index
/// space (C order), where a run is a stretch along the innermost dimension; `offsets[i]` is the
/// byte offset of the run's first element for stride set i. An odometer: no per-element
/// division, one division per dimension at the start.
template <int N, typename F>
void for_each_run(int nd, const int64_t* shape, const std::array<const int64_t*, N>& strides,
                  int64_t begin, int64_t end, F&& f) {
    std::array<int64_t, N> off{};
    if (begin >= end) return;
    if (nd == 0) {
        f(off, end - begin);
        return;
    }
    if (nd == 1) { // one dimension: no odometer
        for (int i = 0; i < N; ++i)
            off[static_cast<size_t>(i)] = begin * strides[static_cast<size_t>(i)][0];
        f(off, end - begin);
        return;
    }
    int64_t idx[max_rank];
    int64_t rest = begin;
    for (int d = nd - 1; d >= 0; --d) {
        if (rest == 0) { // the common start at 0 needs no division
            idx[d] = 0;
            continue;
        }
        idx[d] = rest % shape[d];
        rest /= shape[d];
        for (int i = 0; i < N; ++i)
            off[static_cast<size_t>(i)] += idx[d] * strides[static_cast<size_t>(i)][d];
    }
    int64_t cur = begin;
    while (cur < end) {
        const int64_t n = std::min(shape[nd - 1] - idx[nd - 1], end - cur);
        f(off, n);
        cur += n;
        if (cur >= end) break;
        for (int i = 0; i < N; ++i)
            off[static_cast<size_t>(i)] -= idx[nd - 1] * strides[static_cast<size_t>(i)][nd - 1];
        idx[nd - 1] = 0;
        for (int d = nd - 2; d >= 0; --d) {
            for (int i = 0; i < N; ++i)
                off[static_cast<size_t>(i)] += strides[static_cast<size_t>(i)][d];
            if (++idx[d] < shape[d]) break;
            for (int i = 0; i < N; ++i)
                off[static_cast<size_t>(i)] -= idx[d] * strides[static_cast<size_t>(i)][d];
            idx[d] = 0;
        }
    }
}

/// Threads an op may use here (1 inside a parallel region).
inline int reduce_threads() {
    return omp_in_parallel() ? 1 : omp_get_max_threads();
}

/// Number of independent accumulators the lane kernel keeps for accumulator type A.
/// The type extrema compare in: float16/bfloat16 as float (exact, converted back at the end).
template <typename T>
using key_t = std::conditional_t<is_half_v<T>, float, T>;

/// NaN test for any key type (complex: either part; integers: never).
template <typename K>
bool is_nan(K v) {
    if constexpr (is_complex_v<K>)
        return v.real() != v.real() || v.imag() != v.imag();
    else if constexpr (std::is_floating_point_v<K>)
        return v != v;
    else
        return false;
}

template <typename A>
inline constexpr int lane_count = std::clamp<int>(static_cast<int>(128 / sizeof(A)), 4, 32);

// Note [reduction clones]
// ~~~~~~~~~~~~~~~~~~~~~~~
// The library is built for baseline x86-64 (SSE2); the contiguous reduction loops get AVX2 clones
// picked once at load time, as the elementwise loops do (Note [avx2 clones] in
// elementwise_loops.hpp). The lanes of the loops are explicit (Note [lane reduction]) and the
// vectoriser keeps each lane's order, so every clone adds the same numbers in the same order:
// results are bit-identical whichever clone runs. Loops with products (var's squares) are compiled
// without FMA contraction for the same reason (reduce_var.cpp). An AVX-512 clone ("arch=x86-64-v4")
// was measured too, on the AMD EPYC (Zen 4) development machine: as fast in the cache, but a
// 50M-element float32 sum streaming from memory took 7.0 ms against 6.2 ms with AVX2 (torch 6.2
// ms), so it is left out. A clone is a function call through a pointer, so short runs stay inline
// with the same lane algorithm. The loop bodies are ISTHMUS_REDUCE_INLINE: a clone that calls an
// out-of-line body would run the baseline code.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__CUDACC__)
#define ISTHMUS_REDUCE_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define ISTHMUS_REDUCE_CLONES
#endif
#if defined(__GNUC__)
#define ISTHMUS_REDUCE_INLINE __attribute__((always_inline)) inline
#else
#define ISTHMUS_REDUCE_INLINE inline
#endif

/// Reduces n contiguous elements with `lane_count` lanes (Note [lane reduction]).
template <class Op>
ISTHMUS_REDUCE_INLINE typename Op::acc_t lane_loop(const Op& op, const typename Op::in_t* x,
                                                   int64_t n) {
    using A = typename Op::acc_t;
    constexpr int W = lane_count<A>;
    A acc = op.identity();
    int64_t i = 0;
    if (n >= W) {
        A lane[W];
        for (int j = 0; j < W; ++j) lane[j] = op.identity();
        if constexpr (requires { op.step4(lane[0], x[0], x[0], x[0], x[0]); })
            for (; i + 4 * W <= n; i += 4 * W) // Note [four-element steps]
                for (int j = 0; j < W; ++j)
                    lane[j] = op.step4(lane[j], x[i + j], x[i + W + j], x[i + 2 * W + j],
                                       x[i + 3 * W + j]);
        for (; i + W <= n; i += W)
            for (int j = 0; j < W; ++j) lane[j] = op.step(lane[j], x[i + j]);
        for (int w = W / 2; w > 0; w /= 2)
            for (int j = 0; j < w; ++j) lane[j] = op.combine(lane[j], lane[j + w]);
        acc = lane[0];
    }
    for (; i < n; ++i) acc = op.step(acc, x[i]);
    return acc;
}

// Note [four-element steps]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// An op may fold four elements into an accumulator at once (step4), e.g. float32 sums add the four
// in float and convert one partial to double instead of four elements (Note [float32 summation]).
// The lane kernel then gives lane j the elements j, j+W, j+2W, j+3W of each 4W-element stretch, and
// the column kernel the same column of four consecutive rows: a fixed grouping, the same for every
// clone and thread count.

/// lane_loop in its SIMD clones (Note [reduction clones]).
template <class Op>
ISTHMUS_REDUCE_CLONES typename Op::acc_t lane_loop_simd(const Op& op, const typename Op::in_t* x,
                                                        int64_t n) {
    return lane_loop(op, x, n);
}

/// Runs shorter than this stay inline instead of calling a clone.
inline constexpr int64_t clone_min_run = 64;

/// Reduces n contiguous elements.
///
/// Note [lane reduction]
/// ~~~~~~~~~~~~~~~~~~~~~
/// A single accumulator serialises every addition on its latency and cannot be vectorised without
/// reassociating floating point. The kernel keeps `lane_count` independent accumulators (lane j
/// takes elements j, j+W, j+2W, ...), a fixed-size inner loop GCC turns into vector instructions,
/// and folds the lanes pairwise at the end.
template <class Op>
typename Op::acc_t run_contiguous(const Op& op, const typename Op::in_t* x, int64_t n) {
    return n >= clone_min_run ? lane_loop_simd(op, x, n) : lane_loop(op, x, n);
}

/// Reduces n elements `stride` bytes apart.
template <class Op>
typename Op::acc_t run_strided(const Op& op, const char* p, int64_t stride, int64_t n) {
    using T = typename Op::in_t;
    if (stride == static_cast<int64_t>(sizeof(T))) {
        const T* x = reinterpret_cast<const T*>(p);
        if constexpr (requires { op.run(x, n); })
            return op.run(x, n); // the op's own contiguous kernel
        else
            return run_contiguous(op, x, n);
    }
    if constexpr (requires { Op::gather_strided; }) {
        // Note [gathered runs]
        // ~~~~~~~~~~~~~~~~~~~~
        // Ops whose per-element step is slow (var's Welford update) copy strided elements into
        // blocks and run their contiguous kernel on each.
        constexpr int64_t B = 512;
        T blk[B];
        typename Op::acc_t acc = op.identity();
        for (int64_t i = 0; i < n; i += B) {
            const int64_t m = std::min(B, n - i);
            for (int64_t j = 0; j < m; ++j)
                blk[j] = *reinterpret_cast<const T*>(p + (i + j) * stride);
            acc = op.combine(acc, op.run(blk, m));
        }
        return acc;
    }
    typename Op::acc_t acc = op.identity();
    for (int64_t i = 0; i < n; ++i) acc = op.step(acc, *reinterpret_cast<const T*>(p + i * stride));
    return acc;
}

/// Reduces the flat range [rb, re) of the reduced index space of one output at `p`.
template <class Op>
typename Op::acc_t reduce_range(const Op& op, const reduce_geometry& g, const char* p, int64_t rb,
                                int64_t re) {
    const int64_t s0 = g.rin[g.nr - 1];
    if (g.nr == 1) return run_strided(op, p + rb * s0, s0, re - rb);
    typename Op::acc_t acc = op.identity();
    for_each_run<1>(g.nr, g.rshape, {g.rin}, rb, re,
                    [&](const std::array<int64_t, 1>& o, int64_t n) {
                        acc = op.combine(acc, run_strided(op, p + o[0], s0, n));
                    });
    return acc;
}

/// buf[j] = step(buf[j], x[j]) over w contiguous elements.
template <class Op>
ISTHMUS_REDUCE_INLINE void step_contig(const Op& op, typename Op::acc_t* __restrict buf,
                                       const typename Op::in_t* __restrict x, int64_t w) {
    for (int64_t j = 0; j < w; ++j) buf[j] = op.step(buf[j], x[j]);
}

template <class Op>
ISTHMUS_REDUCE_CLONES void step_contig_simd(const Op& op, typename Op::acc_t* __restrict buf,
                                            const typename Op::in_t* __restrict x, int64_t w) {
    step_contig(op, buf, x, w);
}

/// step_contig for four rows at once: the accumulators are loaded and stored once per four
/// rows.
template <class Op>
ISTHMUS_REDUCE_INLINE void step_contig4(const Op& op, typename Op::acc_t* __restrict buf,
                                        const typename Op::in_t* __restrict x0,
                                        const typename Op::in_t* __restrict x1,
                                        const typename Op::in_t* __restrict x2,
                                        const typename Op::in_t* __restrict x3, int64_t w) {
    if constexpr (requires { op.step4(buf[0], x0[0], x1[0], x2[0], x3[0]); })
        for (int64_t j = 0; j < w; ++j) buf[j] = op.step4(buf[j], x0[j], x1[j], x2[j], x3[j]);
    else
        for (int64_t j = 0; j < w; ++j)
            buf[j] = op.step(op.step(op.step(op.step(buf[j], x0[j]), x1[j]), x2[j]), x3[j]);
}

template <class Op>
ISTHMUS_REDUCE_CLONES void step_contig4_simd(const Op& op, typename Op::acc_t* __restrict buf,
                                             const typename Op::in_t* __restrict x0,
                                             const typename Op::in_t* __restrict x1,
                                             const typename Op::in_t* __restrict x2,
                                             const typename Op::in_t* __restrict x3, int64_t w) {
    step_contig4(op, buf, x0, x1, x2, x3, w);
}

/// buf[j] = step(buf[j], x[j]) for one reduced row of w kept elements `stride` bytes apart.
template <class Op>
void step_row(const Op& op, typename Op::acc_t* __restrict buf, const char* p, int64_t stride,
              int64_t w) {
    using T = typename Op::in_t;
    if (stride == static_cast<int64_t>(sizeof(T))) {
        const T* x = reinterpret_cast<const T*>(p);
        if (w >= clone_min_run)
            step_contig_simd(op, buf, x, w);
        else
            step_contig(op, buf, x, w);
    } else {
        for (int64_t j = 0; j < w; ++j)
            buf[j] = op.step(buf[j], *reinterpret_cast<const T*>(p + j * stride));
    }
}

/// step_row for four rows at once (`rs` bytes apart).
template <class Op>
void step_rows4(const Op& op, typename Op::acc_t* __restrict buf, const char* p, int64_t rs,
                int64_t stride, int64_t w) {
    using T = typename Op::in_t;
    if (stride == static_cast<int64_t>(sizeof(T))) {
        const T* x0 = reinterpret_cast<const T*>(p);
        const T* x1 = reinterpret_cast<const T*>(p + rs);
        const T* x2 = reinterpret_cast<const T*>(p + 2 * rs);
        const T* x3 = reinterpret_cast<const T*>(p + 3 * rs);
        if (w >= clone_min_run)
            step_contig4_simd(op, buf, x0, x1, x2, x3, w);
        else
            step_contig4(op, buf, x0, x1, x2, x3, w);
        return;
    }
    for (int k = 0; k < 4; ++k) step_row(op, buf, p + k * rs, stride, w);
}

/// Rows of m < lane_count contiguous elements, the rows contiguous too (e.g. column sums of
/// an (N, 3) array): the block is reduced as one flat array whose lanes are a whole number of
/// rows wide, then the lanes fold into their columns, avoiding a loop of m per row.
template <class Op>
ISTHMUS_REDUCE_CLONES void accumulate_interleaved(const Op& op, typename Op::acc_t* buf,
                                                  const char* p, int64_t m, int64_t rows) {
    using T = typename Op::in_t;
    using A = typename Op::acc_t;
    constexpr int W = 2 * lane_count<A>;
    const int64_t lanes = m * (W / m);
    const T* x = reinterpret_cast<const T*>(p);
    const int64_t total = rows * m;
    A lane[W];
    for (int j = 0; j < W; ++j) lane[j] = op.identity();
    int64_t i = 0;
    for (; i + lanes <= total; i += lanes)
        for (int64_t j = 0; j < lanes; ++j) lane[j] = op.step(lane[j], x[i + j]);
    for (int64_t j = 0; j < lanes; ++j) buf[j % m] = op.combine(buf[j % m], lane[j]);
    for (int64_t e = i; e < total; ++e) buf[(e - i) % m] = op.step(buf[(e - i) % m], x[e]);
}

/// Note [parallel pieces]
/// ~~~~~~~~~~~~~~~~~~~~~~
/// Work is cut into pieces whose number depends on the sizes only, never on the thread count, and
/// threads take pieces dynamically. A thread slowed down by another process on its core then takes
/// fewer pieces instead of holding up the others (a static half each runs at the pace of the
/// slowest core), and results that combine per-piece partials are bit-identical on any number of
/// threads. Pieces hold at least `piece_elems` elements.
inline constexpr int64_t piece_elems = 16384;
inline constexpr int64_t max_pieces = 256;

/// Pieces for `work` elements, at most `limit`.
inline int64_t piece_count(int64_t work, int64_t limit) {
    return std::clamp<int64_t>(work / piece_elems, 1, std::min(limit, max_pieces));
}

/// Runs body(i) for i in [0, n) pieces: on the calling thread, or dynamically over threads.
template <typename F>
void for_pieces(int64_t n, bool parallel, F&& body) {
    const int threads = reduce_threads();
    if (!parallel || threads <= 1 || n <= 1) {
        for (int64_t i = 0; i < n; ++i) body(i);
        return;
    }
    const int team = static_cast<int>(std::min<int64_t>(threads, n));
    openmp_region([&] {
#pragma omp parallel for num_threads(team) schedule(dynamic, 1)
        for (int64_t i = 0; i < n; ++i) body(i);
    });
}

/// The inner kernel (Note [reduction geometry]). With few outputs (fewer than 16) and many
/// elements each, every output's reduced range is cut into pieces whose partials combine in
/// order (Note [parallel pieces]); otherwise pieces are ranges of whole outputs.
template <class Op>
void reduce_inner(const Op& op, const reduce_geometry& g, const char* in, char* out) {
    using A = typename Op::acc_t;
    using O = typename Op::out_t;
    const int64_t work = g.outputs * g.reduced;
    const bool parallel = work >= parallel_grain;
    const std::array<const int64_t*, 2> kst{g.kin, g.kout};
    const int64_t si = g.nk ? g.kin[g.nk - 1] : 0, so = g.nk ? g.kout[g.nk - 1] : 0;
    if (g.outputs >= 16 || g.reduced < 2 * piece_elems) {
        const int64_t pieces = piece_count(work, g.outputs);
        for_pieces(pieces, parallel, [&](int64_t c) {
            for_each_run<2>(
                g.nk, g.kshape, kst, g.outputs * c / pieces, g.outputs * (c + 1) / pieces,
                [&](const std::array<int64_t, 2>& o, int64_t n) {
                    for (int64_t i = 0; i < n; ++i)
                        *reinterpret_cast<O*>(out + o[1] + i * so) =
                            op.finalize(reduce_range(op, g, in + o[0] + i * si, 0, g.reduced));
                });
        });
        return;
    }
    const int64_t pieces = piece_count(g.reduced, g.reduced);
    std::vector<int64_t> in_off, out_off;
    for_each_run<2>(g.nk, g.kshape, kst, 0, g.outputs,
                    [&](const std::array<int64_t, 2>& o, int64_t n) {
                        for (int64_t i = 0; i < n; ++i) {
                            in_off.push_back(o[0] + i * si);
                            out_off.push_back(o[1] + i * so);
                        }
                    });
    std::unique_ptr<A[]> part(new A[static_cast<size_t>(g.outputs * pieces)]);
    for_pieces(pieces, parallel, [&](int64_t c) {
        for (int64_t o = 0; o < g.outputs; ++o)
            part[o * pieces + c] =
                reduce_range(op, g, in + in_off[static_cast<size_t>(o)], g.reduced * c / pieces,
                             g.reduced * (c + 1) / pieces);
    });
    for (int64_t o = 0; o < g.outputs; ++o) {
        A acc = part[o * pieces];
        for (int64_t c = 1; c < pieces; ++c) acc = op.combine(acc, part[o * pieces + c]);
        *reinterpret_cast<O*>(out + out_off[static_cast<size_t>(o)]) = op.finalize(acc);
    }
}

/// Outputs per tile of the column kernel: a buffer of accumulators that stays in L1.
template <typename A>
inline constexpr int64_t column_tile = std::max<int64_t>(64,
                                                         16384 / static_cast<int64_t>(sizeof(A)));

/// Rows per piece, at least, when the column kernel splits the reduced rows.
inline constexpr int64_t column_piece_rows = 64;

/// The column kernel (Note [reduction geometry]). An item is a tile of one output row. With
/// few items (fewer than 16) and many rows, the rows are cut into pieces, each accumulating
/// into its own buffers, combined in order (Note [parallel pieces]); otherwise pieces are
/// ranges of whole items.
template <class Op>
void reduce_columns(const Op& op, const reduce_geometry& g, const char* in, char* out) {
    using A = typename Op::acc_t;
    using O = typename Op::out_t;
    constexpr int64_t tile = column_tile<A>;
    const int nk = g.nk;
    const int64_t m = g.kshape[nk - 1], sk = g.kin[nk - 1], so = g.kout[nk - 1];
    const int64_t tiles = (m + tile - 1) / tile;
    const int64_t width = std::min(tile, m); // buffer size of one item
    const int64_t items = g.outputs / m * tiles;
    const int64_t work = g.outputs * g.reduced;
    const bool parallel = work >= parallel_grain;
    const std::array<const int64_t*, 2> kst{g.kin, g.kout};
    // Byte offsets of item `it`'s first input and output element, and its width.
    auto locate = [&](int64_t it, int64_t& oi, int64_t& oo, int64_t& w) {
        const int64_t outer = it / tiles, t = it % tiles;
        oi = oo = 0;
        for_each_run<2>(nk - 1, g.kshape, kst, outer, outer + 1,
                        [&](const std::array<int64_t, 2>& o, int64_t) {
                            oi = o[0];
                            oo = o[1];
                        });
        oi += t * tile * sk;
        oo += t * tile * so;
        w = std::min(tile, m - t * tile);
    };
    const int64_t s0 = g.rin[g.nr - 1];
    const bool interleaved = tiles == 1 && m < lane_count<A> &&
                             sk == static_cast<int64_t>(sizeof(typename Op::in_t)) && s0 == m * sk;
    auto accumulate = [&](A* buf, const char* p, int64_t w, int64_t rb, int64_t re) {
        for_each_run<1>(g.nr, g.rshape, {g.rin}, rb, re,
                        [&](const std::array<int64_t, 1>& o, int64_t n) {
                            const char* q = p + o[0];
                            if constexpr (requires { op.accumulate_rows(buf, q, s0, sk, w, n); }) {
                                op.accumulate_rows(buf, q, s0, sk, w, n); // the op's own rows
                            } else if (interleaved) {
                                accumulate_interleaved(op, buf, q, m, n);
                            } else {
                                int64_t i = 0;
                                for (; i + 4 <= n; i += 4)
                                    step_rows4(op, buf, q + i * s0, s0, sk, w);
                                for (; i < n; ++i) step_row(op, buf, q + i * s0, sk, w);
                            }
                        });
    };
    auto finish = [&](const A* buf, char* p, int64_t w) {
        for (int64_t j = 0; j < w; ++j) *reinterpret_cast<O*>(p + j * so) = op.finalize(buf[j]);
    };
    if (items >= 16 || work < 2 * piece_elems || g.reduced < 2) {
        const int64_t pieces = piece_count(work, items);
        for_pieces(pieces, parallel, [&](int64_t c) {
            std::unique_ptr<A[]> buf(new A[static_cast<size_t>(width)]);
            for (int64_t it = items * c / pieces; it < items * (c + 1) / pieces; ++it) {
                int64_t oi, oo, w;
                locate(it, oi, oo, w);
                std::fill(buf.get(), buf.get() + w, op.identity());
                accumulate(buf.get(), in + oi, w, 0, g.reduced);
                finish(buf.get(), out + oo, w);
            }
        });
        return;
    }
    // Few items: pieces of rows, each with its own buffers. Pieces of at least
    // `column_piece_rows` rows, and buffers of at most 4 MB in all: writing and combining one
    // buffer per piece costs as much as reading that many input rows again.
    const auto span = static_cast<size_t>(items * width);
    const int64_t pieces = std::min(
        {piece_count(work, g.reduced), std::max<int64_t>(1, g.reduced / column_piece_rows),
         std::max<int64_t>(1, (int64_t{4} << 20) / static_cast<int64_t>(span * sizeof(A)))});
    std::unique_ptr<A[]> part(new A[span * static_cast<size_t>(pieces)]);
    for_pieces(pieces, parallel, [&](int64_t c) {
        for (int64_t it = 0; it < items; ++it) {
            int64_t oi, oo, w;
            locate(it, oi, oo, w);
            A* buf = part.get() + static_cast<size_t>(c) * span + static_cast<size_t>(it * width);
            std::fill(buf, buf + w, op.identity());
            accumulate(buf, in + oi, w, g.reduced * c / pieces, g.reduced * (c + 1) / pieces);
        }
    });
    for (int64_t it = 0; it < items; ++it) {
        int64_t oi, oo, w;
        locate(it, oi, oo, w);
        A* buf = part.get() + static_cast<size_t>(it * width);
        for (int64_t c = 1; c < pieces; ++c) {
            const A* other =
                part.get() + static_cast<size_t>(c) * span + static_cast<size_t>(it * width);
            for (int64_t j = 0; j < w; ++j) buf[j] = op.combine(buf[j], other[j]);
        }
        finish(buf, out + oo, w);
    }
}

/// Runs a reduction op over the geometry. `in` is x's element 0, `out` the output's.
///
/// An op provides in_t, acc_t, out_t, identity(), step(acc, in_t), combine(acc, acc) and
/// finalize(acc) -> out_t, and optionally: run(const in_t*, n) -> acc_t for contiguous runs;
/// step4(acc, x0, x1, x2, x3) for four elements at once (Note [four-element steps]);
/// `gather_strided` (strided runs go through run() in copied blocks, Note [gathered runs]);
/// accumulate_rows(acc_t* buf, p, row_stride, col_stride, w, rows) for the column kernel (rows
/// of w kept elements, each into its buf[j]). Everything inlines, so there is no per-element
/// indirect call.
template <class Op>
void run_reduction(const Op& op, const reduce_geometry& g, const void* in, void* out) {
    using O = typename Op::out_t;
    if (g.outputs == 0) return;
    const char* pin = static_cast<const char*>(in) + g.in_shift;
    char* pout = static_cast<char*>(out);
    if (g.reduced == 0) {
        const O v = op.finalize(op.identity());
        const std::array<const int64_t*, 1> kst{g.kout};
        for_each_run<1>(g.nk, g.kshape, kst, 0, g.outputs,
                        [&](const std::array<int64_t, 1>& o, int64_t n) {
                            const int64_t so = g.nk ? g.kout[g.nk - 1] : 0;
                            for (int64_t i = 0; i < n; ++i)
                                *reinterpret_cast<O*>(pout + o[0] + i * so) = v;
                        });
        return;
    }
    if (g.column)
        reduce_columns(op, g, pin, pout);
    else
        reduce_inner(op, g, pin, pout);
}

// ---- per-family entry points (reduce_sum.cpp, reduce_minmax.cpp) ----

/// sum, prod and mean over the geometry; `divisor` divides the result (mean's count).
void reduce_sums(bool prod, bool mean, dtype dt, const reduce_geometry& g, const void* in,
                 void* out, double divisor);
/// min, max, any, all over the geometry.
void reduce_extrema(bool is_max, dtype dt, const reduce_geometry& g, const void* in, void* out);
void reduce_logical(bool is_all, dtype dt, const reduce_geometry& g, const void* in, void* out);

} // namespace isthmus::cpu
