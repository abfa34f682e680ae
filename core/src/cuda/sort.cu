// CUDA sort/argsort along rows (CUB's radix sort on Note [radix keys]) and searchsorted.
#include "cuda/device_types.cuh"
#include "cuda/elementwise_common.cuh"
#include "cuda/kernels.hpp"
#include "kernels/sort_keys.hpp"

#include <cub/device/device_radix_sort.cuh>

#include <cstdint>

namespace isthmus::cudak {

// Note [gpu sort]
// ~~~~~~~~~~~~~~~
// The rows of a sort are sorted together by two stable radix sorts of the whole tensor (CUB's
// DeviceRadixSort, with 64-bit item counts), each a pair sort carrying the elements' flat
// positions: first by the element keys of Note [radix keys] (inverted for a descending sort, as on
// the CPU), then, when there are several rows, by row number. The second sort is stable, so each
// row's elements stay in key order, and equal keys in their original order: the result of
// Note [sort order] row by row, for any row count and length (CUB's segmented sort puts one thread
// block on a row, which is slow for few long rows). Keys of 1, 2 and 4 bytes sort as 32-bit keys
// over their own bits only (CUB's end_bit), so two instantiations (32- and 64-bit keys) serve every
// type; the row pass sorts only the bits of the largest row number. A last kernel turns positions
// into the row's indices and gathers the values. Complex rows sort on the CPU.

namespace {

constexpr int sort_block = 256;

/// The unsigned radix key of an element (Note [radix keys]), widened to U.
template <kdt K, typename U>
__device__ U key_of(storage_t<K> x) {
    if constexpr (K == kdt::b8) {
        return static_cast<U>(x != 0);
    } else if constexpr (K == kdt::f16) {
        return elem::half_key(x.bits, 0x7c00);
    } else if constexpr (K == kdt::bf16) {
        return elem::half_key(x.bits, 0x7f80);
    } else if constexpr (K == kdt::f32 || K == kdt::f64) {
        return elem::ieee_key(x);
    } else {
        return elem::int_key(x);
    }
}

/// The key type of K's sort: 32 bits up to 4-byte elements, else 64.
template <kdt K>
using key_u = std::conditional_t<sizeof(storage_t<K>) <= 4, uint32_t, uint64_t>;

template <kdt K>
__global__ void make_keys(const storage_t<K>* in, int64_t n, bool descending, key_u<K>* keys,
                          int64_t* pos) {
    using U = key_u<K>;
    constexpr int bits = 8 * sizeof(storage_t<K>);
    constexpr U mask = bits >= 8 * sizeof(U) ? ~U(0) : static_cast<U>((U(1) << bits) - 1);
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        const U k = key_of<K, U>(in[i]);
        keys[i] = descending ? static_cast<U>(~k & mask) : k;
        pos[i] = i;
    }
}

template <typename R>
__global__ void make_row_keys(const int64_t* pos, int64_t n, int64_t len, R* keys) {
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride)
        keys[i] = static_cast<R>(pos[i] / len);
}

// Output i holds the element at flat position pos[i] (of the same row).
template <kdt K>
__global__ void finish_sort(const storage_t<K>* in, const int64_t* pos, int64_t n, int64_t len,
                            storage_t<K>* values, int64_t* indices) {
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        const int64_t p = pos[i];
        if (indices) indices[i] = p % len;
        if (values) values[i] = in[p];
    }
}

/// The bits a row number below `rows` needs (at least 1).
int row_bits(int64_t rows) {
    int b = 1;
    while (b < 63 && (int64_t{1} << b) < rows) ++b;
    return b;
}

size_t round_up(size_t n) {
    return (n + 255) / 256 * 256;
}

/// CUB's temporary storage for a pair sort of n keys of type U (a size query, no work).
template <typename U>
size_t cub_bytes(int64_t n, cudaStream_t s) {
    size_t bytes = 0;
    cub::DeviceRadixSort::SortPairs(nullptr, bytes, static_cast<const U*>(nullptr),
                                    static_cast<U*>(nullptr), static_cast<const int64_t*>(nullptr),
                                    static_cast<int64_t*>(nullptr), n, 0, int(8 * sizeof(U)), s);
    return bytes;
}

/// The scratch layout: two key buffers, two position buffers, CUB's storage.
struct sort_layout {
    size_t key_bytes, keys, pos, temp, total;
};

template <kdt K>
sort_layout layout_for(int64_t rows, int64_t len, cudaStream_t s) {
    const int64_t n = rows * len;
    const bool wide_rows = rows > int64_t{UINT32_MAX};
    sort_layout l{};
    l.key_bytes = (sizeof(key_u<K>) == 8 || wide_rows) ? 8 : 4;
    l.keys = round_up(static_cast<size_t>(n) * l.key_bytes);
    l.pos = round_up(static_cast<size_t>(n) * sizeof(int64_t));
    size_t temp = cub_bytes<key_u<K>>(n, s);
    if (rows > 1) {
        const size_t row_temp = wide_rows ? cub_bytes<uint64_t>(n, s) : cub_bytes<uint32_t>(n, s);
        temp = temp > row_temp ? temp : row_temp;
    }
    l.temp = round_up(temp);
    l.total = 2 * l.keys + 2 * l.pos + l.temp;
    return l;
}

template <typename U>
cudaError_t sort_pairs(void* temp, size_t temp_bytes, const U* k_in, U* k_out, const int64_t* v_in,
                       int64_t* v_out, int64_t n, int end_bit, cudaStream_t s) {
    return cub::DeviceRadixSort::SortPairs(temp, temp_bytes, k_in, k_out, v_in, v_out, n, 0,
                                           end_bit, s);
}

// The second sort of Note [gpu sort]: the positions `from` (in key order) sorted stably by their
// row number into `to`, with row keys of type R.
template <typename R>
cudaError_t row_pass(cudaStream_t s, unsigned grid, const int64_t* from, int64_t* to, int64_t n,
                     int64_t len, int64_t rows, void* key_a, void* key_b, void* temp,
                     size_t temp_bytes) {
    make_row_keys<R><<<grid, sort_block, 0, s>>>(from, n, len, static_cast<R*>(key_a));
    const cudaError_t rc = cudaGetLastError();
    if (rc != cudaSuccess) return rc;
    return sort_pairs<R>(temp, temp_bytes, static_cast<const R*>(key_a), static_cast<R*>(key_b),
                         from, to, n, row_bits(rows), s);
}

template <kdt K>
cudaError_t run_sort(cudaStream_t s, int64_t rows, int64_t len, const void* in_v, void* values_v,
                     int64_t* indices, bool descending, void* scratch, size_t scratch_bytes) {
    if constexpr (!sort_ok(K)) {
        return cudaErrorNotSupported;
    } else {
        using U = key_u<K>;
        const int64_t n = rows * len;
        const sort_layout l = layout_for<K>(rows, len, s);
        if (scratch_bytes < l.total) return cudaErrorInvalidValue;
        auto* base = static_cast<char*>(scratch);
        void* key_a = base;
        void* key_b = base + l.keys;
        auto* pos_a = reinterpret_cast<int64_t*>(base + 2 * l.keys);
        auto* pos_b = reinterpret_cast<int64_t*>(base + 2 * l.keys + l.pos);
        void* temp = base + 2 * l.keys + 2 * l.pos;
        const auto* in = static_cast<const storage_t<K>*>(in_v);
        const unsigned grid = grid_for(n, sort_block);
        make_keys<K><<<grid, sort_block, 0, s>>>(in, n, descending, static_cast<U*>(key_a), pos_a);
        cudaError_t rc = cudaGetLastError();
        if (rc != cudaSuccess) return rc;
        rc = sort_pairs<U>(temp, l.temp, static_cast<const U*>(key_a), static_cast<U*>(key_b),
                           pos_a, pos_b, n, int(8 * sizeof(storage_t<K>)), s);
        if (rc != cudaSuccess) return rc;
        const int64_t* final_pos = pos_b;
        if (rows > 1) { // See Note [gpu sort]: then by row, stably
            rc = rows > int64_t{UINT32_MAX} ? row_pass<uint64_t>(s, grid, pos_b, pos_a, n, len,
                                                                 rows, key_a, key_b, temp, l.temp)
                                            : row_pass<uint32_t>(s, grid, pos_b, pos_a, n, len,
                                                                 rows, key_a, key_b, temp, l.temp);
            if (rc != cudaSuccess) return rc;
            final_pos = pos_a;
        }
        finish_sort<K><<<grid, sort_block, 0, s>>>(in, final_pos, n, len,
                                                   static_cast<storage_t<K>*>(values_v), indices);
        return cudaGetLastError();
    }
}

template <kdt K>
__global__ void search_kernel(const storage_t<K>* sorted, int64_t n, const storage_t<K>* values,
                              int64_t m, int64_t* out, bool right) {
    using U = key_u<K>;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < m;
         i += stride) {
        const U v = key_of<K, U>(values[i]);
        int64_t lo = 0, hi = n; // the answer is in [lo, hi]
        while (lo < hi) {
            const int64_t mid = lo + (hi - lo) / 2;
            const U k = key_of<K, U>(sorted[mid]);
            if (right ? !(v < k) : k < v)
                lo = mid + 1;
            else
                hi = mid;
        }
        out[i] = lo;
    }
}

template <kdt K>
void search_type(cudaStream_t s, const void* sorted, int64_t n, const void* values, int64_t m,
                 int64_t* out, bool right) {
    if constexpr (sort_ok(K))
        search_kernel<K><<<grid_for(m, sort_block), sort_block, 0, s>>>(
            static_cast<const storage_t<K>*>(sorted), n, static_cast<const storage_t<K>*>(values),
            m, out, right);
}

} // namespace

size_t sort_scratch_bytes(cudaStream_t s, kdt t, int64_t rows, int64_t len) {
    size_t bytes = 0;
    ISTHMUS_KDT_DISPATCH(t, if constexpr (sort_ok(K)) bytes = layout_for<K>(rows, len, s).total)
    return bytes;
}

cudaError_t launch_sort(cudaStream_t s, kdt t, int64_t rows, int64_t len, const void* in,
                        void* values, int64_t* indices, bool descending, void* scratch,
                        size_t scratch_bytes) {
    if (rows * len == 0) return cudaSuccess;
    cudaError_t rc = cudaErrorNotSupported;
    ISTHMUS_KDT_DISPATCH(
        t, rc = run_sort<K>(s, rows, len, in, values, indices, descending, scratch, scratch_bytes))
    return rc;
}

void launch_searchsorted(cudaStream_t s, kdt t, const void* sorted, int64_t n, const void* values,
                         int64_t m, int64_t* out, bool right) {
    if (m == 0) return;
    ISTHMUS_KDT_DISPATCH(t, search_type<K>(s, sorted, n, values, m, out, right))
}

} // namespace isthmus::cudak
