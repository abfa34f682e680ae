// N-operand strided iteration: dimension coalescing, odometer stepping, chunked OpenMP splitting.
#pragma once

#include "isthmus/openmp_region.hpp"
#include "isthmus/tensor.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <omp.h>

namespace isthmus::cpu {

/// Below this many elements a loop runs on the calling thread (threading costs more than it
/// saves). Tuned on the 2-core development machine; see bench/.
inline constexpr int64_t parallel_grain = 32768;

/// A loop nest over `ndim` dimensions for N operands, byte strides, innermost dimension last.
///
/// Note [strided loops]
/// ~~~~~~~~~~~~~~~~~~~~
/// Ops never step element by element through a generic N-d index. The plan coalesces dimensions
/// that are contiguous with each other for every operand, drops size-1 dimensions, orders
/// dimensions so that operand 0 (the output) walks memory forward, and hands the innermost
/// dimension to a kernel as (pointers, strides, count). The kernel's inner loop is a plain for-loop
/// the compiler vectorises when the strides equal the item size. Outer dimensions advance as an
/// odometer (an add per step, no division); the only divisions happen once per parallel chunk.
template <int N>
struct strided_plan {
    int ndim = 0;
    int64_t shape[max_rank];
    int64_t strides[N][max_rank];
    int64_t numel = 1;
};

/// Builds a plan for `shape` with operand i having element strides `*strides[i]` and item size
/// `itemsizes[i]`.
template <int N>
strided_plan<N> make_plan(const shape_t& shape, const std::array<const shape_t*, N>& strides,
                          const std::array<int64_t, N>& itemsizes) {
    strided_plan<N> p;
    // Collect non-trivial dimensions.
    int order[max_rank];
    int nd = 0;
    for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
        p.numel *= shape[static_cast<size_t>(d)];
        if (shape[static_cast<size_t>(d)] != 1) order[nd++] = d;
    }
    if (p.numel == 0) {
        p.ndim = 1;
        p.shape[0] = 0;
        for (int i = 0; i < N; ++i) p.strides[i][0] = itemsizes[static_cast<size_t>(i)];
        return p;
    }
    // Order so that operand 0's strides decrease (outermost first); ties keep C order. An
    // insertion sort: ranks are small, and it allocates nothing (small ops pay for every malloc).
    auto outer_first = [&](int a, int b) {
        for (int i = 0; i < N; ++i) {
            int64_t sa = std::abs((*strides[static_cast<size_t>(i)])[static_cast<size_t>(a)]);
            int64_t sb = std::abs((*strides[static_cast<size_t>(i)])[static_cast<size_t>(b)]);
            if (sa != sb) return sa > sb;
        }
        return false;
    };
    for (int k = 1; k < nd; ++k) {
        int d = order[k], j = k;
        for (; j > 0 && outer_first(d, order[j - 1]); --j) order[j] = order[j - 1];
        order[j] = d;
    }
    // Coalesce adjacent dimensions: outer (a) and inner (b) merge when stride[a] ==
    // stride[b] * shape[b] for every operand.
    int out = 0;
    for (int k = 0; k < nd; ++k) {
        int d = order[k];
        int64_t n = shape[static_cast<size_t>(d)];
        if (out > 0) {
            bool merge = true;
            for (int i = 0; i < N && merge; ++i)
                merge = p.strides[i][out - 1] ==
                        (*strides[static_cast<size_t>(i)])[static_cast<size_t>(d)] * n *
                            itemsizes[static_cast<size_t>(i)];
            if (merge) {
                p.shape[out - 1] *= n;
                for (int i = 0; i < N; ++i)
                    p.strides[i][out - 1] =
                        (*strides[static_cast<size_t>(i)])[static_cast<size_t>(d)] *
                        itemsizes[static_cast<size_t>(i)];
                continue;
            }
        }
        p.shape[out] = n;
        for (int i = 0; i < N; ++i)
            p.strides[i][out] = (*strides[static_cast<size_t>(i)])[static_cast<size_t>(d)] *
                                itemsizes[static_cast<size_t>(i)];
        ++out;
    }
    if (out == 0) { // a single element
        p.shape[0] = 1;
        for (int i = 0; i < N; ++i) p.strides[i][0] = itemsizes[static_cast<size_t>(i)];
        out = 1;
    }
    p.ndim = out;
    return p;
}

/// Runs `inner(char* ptrs[N], const int64_t strides[N], int64_t n)` over the plan, splitting the
/// elements into one chunk per thread when there are at least `grain` of them.
template <int N, typename F>
void run_plan(const strided_plan<N>& p, std::array<char*, N> base, F&& inner,
              int64_t grain = parallel_grain) {
    const int nd = p.ndim;
    const int64_t inner_n = p.shape[nd - 1];
    if (p.numel == 0) return;
    int64_t inner_strides[N];
    for (int i = 0; i < N; ++i) inner_strides[i] = p.strides[i][nd - 1];

    auto run_range = [&](int64_t begin, int64_t end) {
        // Position of element `begin`: one division per dimension, once per chunk.
        int64_t idx[max_rank];
        int64_t rest = begin;
        for (int d = nd - 1; d >= 0; --d) {
            idx[d] = rest % p.shape[d];
            rest /= p.shape[d];
        }
        char* ptr[N];
        for (int i = 0; i < N; ++i) {
            ptr[i] = base[static_cast<size_t>(i)];
            for (int d = 0; d < nd; ++d) ptr[i] += idx[d] * p.strides[i][d];
        }
        int64_t cur = begin;
        while (cur < end) {
            int64_t n = std::min(inner_n - idx[nd - 1], end - cur);
            inner(ptr, inner_strides, n);
            cur += n;
            if (cur >= end) break;
            // The row is finished: rewind it, then advance the outer odometer.
            for (int i = 0; i < N; ++i) ptr[i] -= idx[nd - 1] * inner_strides[i];
            idx[nd - 1] = 0;
            int d = nd - 2;
            for (; d >= 0; --d) {
                for (int i = 0; i < N; ++i) ptr[i] += p.strides[i][d];
                if (++idx[d] < p.shape[d]) break;
                for (int i = 0; i < N; ++i) ptr[i] -= idx[d] * p.strides[i][d];
                idx[d] = 0;
            }
        }
    };

    const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
    if (threads <= 1 || p.numel < grain) {
        run_range(0, p.numel);
        return;
    }
    const int64_t chunks = std::min<int64_t>(threads, (p.numel + grain - 1) / grain);
    openmp_region([&] {
#pragma omp parallel for num_threads(static_cast <int>(chunks)) schedule(static)
        for (int64_t c = 0; c < chunks; ++c)
            run_range(p.numel * c / chunks, p.numel * (c + 1) / chunks);
    });
}

/// Makes a plan for N tensors of the same shape (broadcast views already expanded) and runs it.
template <int N, typename F>
void for_each(const shape_t& shape, const std::array<const tensor*, N>& ts,
              const std::array<char*, N>& base, F&& inner, int64_t grain = parallel_grain) {
    std::array<const shape_t*, N> st;
    std::array<int64_t, N> isz;
    for (int i = 0; i < N; ++i) {
        st[static_cast<size_t>(i)] = &ts[static_cast<size_t>(i)]->strides();
        isz[static_cast<size_t>(i)] = static_cast<int64_t>(ts[static_cast<size_t>(i)]->itemsize());
    }
    run_plan<N>(make_plan<N>(shape, st, isz), base, std::forward<F>(inner), grain);
}

} // namespace isthmus::cpu
