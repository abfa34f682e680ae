// The CUDA cumulative scan's index arithmetic and per-thread steps (host-callable for tests).
#pragma once

#include "cuda/device_types.cuh"

#include <cstdint>

namespace isthmus::cudak {

// Note [gpu cumulative]
// ~~~~~~~~~~~~~~~~~~~~~
// The input is (pre, len, post) around the axis, so line (p, j) has its elements at p * len *
// post + i * post + j. Each line is cut into `chunks` pieces of `per` elements, one thread per
// (line, chunk), consecutive threads on consecutive j so that reads coalesce when post > 1. Pass 1
// reduces each chunk into scratch slot t = (p * chunks + c) * post + j; pass 2 turns each line's
// chunk totals into exclusive prefixes; pass 3 rescans each chunk from its prefix and writes. With
// one chunk, passes 1 and 2 are skipped. The accumulators are the CPU's (double for float32,
// complex128 for complex, wrapping uint64 for integers), so only the order of the double operations
// differs from the CPU's sequential scan.
//
// Pass 2 runs one thread per line when lines have few chunks (a short serial loop), and one
// block per line otherwise (a line of one long axis has up to 131072 chunks, whose serial
// scan would take milliseconds): each of the block's threads combines a contiguous segment of
// the chunk totals, thread 0 scans the segment totals in shared memory, and each thread
// rewrites its segment as exclusive prefixes from its segment's start.
// The steps below are __host__ __device__ so that tests/cuda/test_cuda_host_logic.cu runs the
// three passes on the host, thread by thread, against a sequential scan.

// Complex lines accumulate in complex128 with the CPU's plain product formula (no Annex G
// recovery of infinities: cpu/reduce_cum.cpp's apply), as the CPU's cumprod does.
template <kdt K>
inline constexpr kdt cum_acc_kdt = is_cplx(K)    ? kdt::c128
                                   : is_float(K) ? kdt::f64
                                                 : kdt::u64;

template <bool PROD, class A>
ISTHMUS_HD inline A cum_step(A acc, A x) {
    if constexpr (is_cplx_v<A>) {
        if constexpr (PROD)
            return A{acc.re * x.re - acc.im * x.im, acc.re * x.im + acc.im * x.re};
        else
            return A{acc.re + x.re, acc.im + x.im};
    } else if constexpr (PROD) {
        return static_cast<A>(acc * x);
    } else {
        return static_cast<A>(acc + x);
    }
}

template <bool PROD, class A>
ISTHMUS_HD inline A cum_identity() {
    if constexpr (is_cplx_v<A>)
        return A{PROD ? 1.0 : 0.0, 0.0};
    else
        return PROD ? A(1) : A(0);
}

/// The chunks each line of a (pre, len, post) scan is cut into: enough (line, chunk) threads to
/// fill the GPU (about 128k) with chunks of at least 64 elements; 1 for long line counts.
ISTHMUS_HD inline int64_t cumulative_chunk_count(int64_t pre, int64_t len, int64_t post) {
    const int64_t lines = pre * post;
    if (lines <= 0 || len <= 64 || lines >= 131072) return 1;
    const int64_t want = (131072 + lines - 1) / lines, most = (len + 63) / 64;
    return want < most ? want : most;
}

/// Lines with more chunks than this get a block each in pass 2 (else one thread each).
inline constexpr int64_t cum_serial_chunks = 64;
/// Threads per block of every cumulative kernel (pass 2's shared array has this many slots).
inline constexpr int cum_block = 256;

struct cum_geometry {
    int64_t pre, len, post, chunks, per;

    ISTHMUS_HD int64_t lines() const { return pre * post; }
    /// Scratch slot / thread t -> line (p, j) and chunk c; j fastest.
    ISTHMUS_HD void split(int64_t t, int64_t& p, int64_t& c, int64_t& j) const {
        j = t % post;
        const int64_t rest = t / post;
        c = rest % chunks;
        p = rest / chunks;
    }
    /// The scratch slot of chunk c of line `line` (= p * post + j).
    ISTHMUS_HD int64_t slot(int64_t line, int64_t c) const {
        const int64_t p = line / post, j = line % post;
        return (p * chunks + c) * post + j;
    }
    /// Chunk c covers axis positions [lo, hi) (empty past the end of the axis).
    ISTHMUS_HD void range(int64_t c, int64_t& lo, int64_t& hi) const {
        lo = c * per;
        if (lo > len) lo = len;
        hi = lo + per < len ? lo + per : len;
    }
};

/// The geometry of a (pre, len, post) scan.
ISTHMUS_HD inline cum_geometry cumulative_geometry(int64_t pre, int64_t len, int64_t post) {
    cum_geometry g{pre, len, post, cumulative_chunk_count(pre, len, post), 0};
    g.per = (len + g.chunks - 1) / g.chunks;
    return g;
}

/// Pass 1, thread t: the combination of chunk t's elements (scratch slot t).
template <bool PROD, kdt K>
ISTHMUS_HD inline storage_t<cum_acc_kdt<K>> cum_chunk_total(const cum_geometry& g,
                                                            const storage_t<K>* in, int64_t t) {
    using A = storage_t<cum_acc_kdt<K>>;
    int64_t p, c, j, lo, hi;
    g.split(t, p, c, j);
    g.range(c, lo, hi);
    const storage_t<K>* x = in + p * g.len * g.post + j;
    A acc = cum_identity<PROD, A>();
    for (int64_t i = lo; i < hi; ++i)
        acc = cum_step<PROD>(acc, convert<cum_acc_kdt<K>, K>(x[i * g.post]));
    return acc;
}

/// Pass 2 for one line by one thread: the line's chunk totals become exclusive prefixes.
template <bool PROD, class A>
ISTHMUS_HD inline void cum_line_prefixes(const cum_geometry& g, A* partial, int64_t line) {
    A acc = cum_identity<PROD, A>();
    for (int64_t c = 0; c < g.chunks; ++c) {
        A& s = partial[g.slot(line, c)];
        const A total = s;
        s = acc;
        acc = cum_step<PROD>(acc, total);
    }
}

/// Pass 2 by a block of `threads` threads for one line: thread `tid`'s segment of chunks.
ISTHMUS_HD inline void cum_segment(const cum_geometry& g, int tid, int threads, int64_t& lo,
                                   int64_t& hi) {
    const int64_t per = (g.chunks + threads - 1) / threads;
    lo = tid * per;
    if (lo > g.chunks) lo = g.chunks;
    hi = lo + per < g.chunks ? lo + per : g.chunks;
}

/// Block pass 2, step 1 (thread tid): the combination of its segment's chunk totals.
template <bool PROD, class A>
ISTHMUS_HD inline A cum_segment_total(const cum_geometry& g, const A* partial, int64_t line,
                                      int tid, int threads) {
    int64_t lo, hi;
    cum_segment(g, tid, threads, lo, hi);
    A acc = cum_identity<PROD, A>();
    for (int64_t c = lo; c < hi; ++c) acc = cum_step<PROD>(acc, partial[g.slot(line, c)]);
    return acc;
}

/// Block pass 2, step 2 (one thread): the segment totals become exclusive prefixes.
template <bool PROD, class A>
ISTHMUS_HD inline void cum_exclusive(A* seg, int threads) {
    A acc = cum_identity<PROD, A>();
    for (int k = 0; k < threads; ++k) {
        const A total = seg[k];
        seg[k] = acc;
        acc = cum_step<PROD>(acc, total);
    }
}

/// Block pass 2, step 3 (thread tid): its segment's chunk totals become exclusive prefixes,
/// starting from `start` (the combination of every earlier segment).
template <bool PROD, class A>
ISTHMUS_HD inline void cum_segment_rewrite(const cum_geometry& g, A* partial, int64_t line, int tid,
                                           int threads, A start) {
    int64_t lo, hi;
    cum_segment(g, tid, threads, lo, hi);
    A acc = start;
    for (int64_t c = lo; c < hi; ++c) {
        A& s = partial[g.slot(line, c)];
        const A total = s;
        s = acc;
        acc = cum_step<PROD>(acc, total);
    }
}

/// Pass 3, thread t: rescans chunk t from its prefix (`prefix` null: a single chunk per line,
/// whose prefix is the identity) and writes the outputs.
template <bool PROD, kdt K>
ISTHMUS_HD inline void cum_chunk_scan(const cum_geometry& g, const storage_t<K>* in,
                                      storage_t<K>* out, const storage_t<cum_acc_kdt<K>>* prefix,
                                      int64_t t) {
    using A = storage_t<cum_acc_kdt<K>>;
    int64_t p, c, j, lo, hi;
    g.split(t, p, c, j);
    g.range(c, lo, hi);
    const int64_t base = p * g.len * g.post + j;
    A acc = prefix ? prefix[t] : cum_identity<PROD, A>();
    for (int64_t i = lo; i < hi; ++i) {
        acc = cum_step<PROD>(acc, convert<cum_acc_kdt<K>, K>(in[base + i * g.post]));
        out[base + i * g.post] = convert<K, cum_acc_kdt<K>>(acc);
    }
}

} // namespace isthmus::cudak
