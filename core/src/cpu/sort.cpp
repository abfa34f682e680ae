// CPU sort/argsort along the last dimension (stable radix and comparison sorts) and searchsorted.
#include "cpu/sort.hpp"

#include "cpu/convert.hpp"       // is_complex_v
#include "cpu/reduce_engine.hpp" // for_pieces
#include "cpu/strided_loop.hpp"  // parallel_grain
#include "host_cache.hpp"
#include "isthmus/half.hpp"
#include "isthmus/openmp_region.hpp"
#include "kernels/sort_keys.hpp"

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <omp.h>
#include <type_traits>
#include <utility>
#include <vector>

namespace isthmus::cpu {

// Note [sort order]
// ~~~~~~~~~~~~~~~~~
// The order of NumPy's sort and of the array API: ascending puts NaNs last (they count as larger
// than +inf); complex numbers order lexicographically by real then imaginary part, with NumPy's
// rule for NaN parts (R + Rj < R + nanj < nan + Rj < nan + nanj). Equal elements keep their order
// (every sort is stable, so stable=False gives the same result), -0.0 and +0.0 are equal.
// Descending is the same order reversed for unequal elements (NaNs first), equal ones still in
// their order: np.flip of an ascending sort of np.flip(x), which is what the array API's stable
// descending argsort asks. float16 and bfloat16 compare as float32 (exact).

namespace {

/// The value a T compares as.
template <typename T>
using key_t =
    std::conditional_t<std::is_same_v<T, float16_t> || std::is_same_v<T, bfloat16_t>, float, T>;

template <typename K>
bool is_nan(K x) {
    return x != x;
}

/// a < b in Note [sort order].
template <typename K>
bool before(const K& a, const K& b) {
    if constexpr (std::is_floating_point_v<K>) {
        return a < b || (is_nan(b) && !is_nan(a));
    } else if constexpr (is_complex_v<K>) {
        const auto ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
        if (ar < br) return !is_nan(ai) || is_nan(bi);
        if (ar > br) return is_nan(bi) && !is_nan(ai);
        if (ar == br || (is_nan(ar) && is_nan(br))) return ai < bi || (is_nan(bi) && !is_nan(ai));
        return is_nan(br);
    } else {
        return a < b;
    }
}

// Note [radix sort]
// ~~~~~~~~~~~~~~~~~
// Real and integer rows sort by a least-significant-digit radix sort of unsigned keys beside their
// positions: stable by construction, O(n) per row (one byte per pass, passes whose byte is the same
// in every key skipped), and 5-10x faster than a comparison sort on long rows (the stable merge
// sort NumPy and torch use for stable sorts). The keys map Note [sort order] onto unsigned order
// (Note [radix keys] in kernels/sort_keys.hpp, shared with the CUDA sort); descending sorts invert
// the key (NaNs first, equal keys still in their order). Values are gathered from the row by the
// sorted positions, so their bits (-0.0, NaN payloads) are the input's. Complex rows and short rows
// use the comparison sort.

/// The unsigned radix key type of T, of T's size (void for complex: no radix sort).
template <typename T>
using radix_t = std::conditional_t<
    is_complex_v<T>, void,
    std::conditional_t<sizeof(T) == 1, uint8_t,
                       std::conditional_t<sizeof(T) == 2, uint16_t,
                                          std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>>;

template <typename T>
radix_t<T> radix_key(T x) { // Note [radix keys] in kernels/sort_keys.hpp
    if constexpr (std::is_same_v<T, float16_t>) {
        return elem::half_key(x.bits, 0x7c00);
    } else if constexpr (std::is_same_v<T, bfloat16_t>) {
        return elem::half_key(x.bits, 0x7f80);
    } else if constexpr (std::is_floating_point_v<T>) {
        return elem::ieee_key(x);
    } else {
        return elem::int_key(x);
    }
}

/// A scratch array from the host block cache (Note [host block cache]): a sort's buffers are
/// as large as its rows, and fresh memory from the system is faulted in page by page.
template <typename E>
class scratch {
public:
    scratch() = default;
    explicit scratch(int64_t n) : bytes_(static_cast<size_t>(n) * sizeof(E)) {
        p_ = static_cast<E*>(detail::host_allocate(bytes_));
        if (!p_) throw std::bad_alloc();
    }
    scratch(scratch&& o) noexcept
        : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
    scratch& operator=(scratch&& o) noexcept {
        std::swap(p_, o.p_);
        std::swap(bytes_, o.bytes_);
        return *this;
    }
    ~scratch() { detail::host_deallocate(p_, bytes_); }
    E* get() const noexcept { return p_; }
    explicit operator bool() const noexcept { return p_ != nullptr; }

private:
    E* p_ = nullptr;
    size_t bytes_ = 0;
};

/// Buffers of one thread's radix sorts, reused across its rows (the positions only once a row
/// needs them: Note [values-only radix]).
template <typename U, typename I>
struct radix_buffers {
    scratch<U> key, key_tmp;
    scratch<I> pos, pos_tmp;
    std::vector<int64_t> counts; // the passes' counters (Note [radix digits])
    int64_t n;
    explicit radix_buffers(int64_t len) : key(len), key_tmp(len), n(len) {}
    void need_positions() {
        if (pos) return;
        pos = scratch<I>(n);
        pos_tmp = scratch<I>(n);
    }
};

// Note [values-only radix]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// A sort that returns values alone need not carry positions: the keys of Note [radix keys] map
// every value but NaN and -0.0 one to one (NaNs share one key, -0.0 takes +0.0's), so a row without
// those sorts its keys alone, half the bytes moved per pass and no gather at the end, and the
// values are decoded from the sorted keys; equal keys are then equal bits, so the result is the
// stable sort's. A row holding a value its key does not give back (decoded and compared while the
// keys are made: a NaN or a -0.0) sorts with its positions instead, which keep their bits and
// order. One row of 1M float32 in a loop: 7.6-7.9 ms, argsort's positions 11.0 ms.

/// The value whose key is k, for keys that give their value back (all but NaN's and -0.0's:
/// Note [values-only radix]).
template <typename T, typename U>
T value_of_key(U k) {
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, float16_t> ||
                  std::is_same_v<T, bfloat16_t>) {
        constexpr U sign = U(1) << (8 * sizeof(U) - 1);
        const U u = (k & sign) ? static_cast<U>(k & ~sign) : static_cast<U>(~k);
        T x;
        std::memcpy(static_cast<void*>(&x), &u, sizeof x);
        return x;
    } else if constexpr (std::is_signed_v<T>) {
        return static_cast<T>(static_cast<U>(k ^ (U(1) << (8 * sizeof(U) - 1))));
    } else {
        return static_cast<T>(k);
    }
}

// Note [radix digits]
// ~~~~~~~~~~~~~~~~~~~
// A pass sorts by one digit of the key. Digits of 11 bits (2048 counters) take 3 passes for 32-bit
// keys and 6 for 64-bit ones, where bytes take 4 and 8; the scatter into more buckets costs a
// little more per pass, and the counters are more to clear and sum, so value sorts of rows from
// 4096 elements up with keys of 4 or 8 bytes use them (Note [values-only radix]), shorter rows and
// narrower keys bytes. A standalone LSD sort of 1M random float32 keys on the AVX-512 host: 8.1 ms
// with bytes, 5.5 ms with 11-bit digits (4096 keys: 0.03 and 0.02 ms). Pairs of keys and positions
// scatter into twice the streams, and there the wider digits were slower (argsort of 1M float32
// 11.0 -> 11.7-12.3 ms): bytes.
template <int Bits, typename U>
struct digits {
    static constexpr int passes = (8 * static_cast<int>(sizeof(U)) + Bits - 1) / Bits;
    static constexpr int buckets = 1 << Bits;
    static constexpr U mask = static_cast<U>(buckets - 1);
    /// Zeroed counters for one row, in the row's buffers.
    static int64_t* counters(std::vector<int64_t>& store) {
        store.assign(static_cast<size_t>(passes) * buckets, 0);
        return store.data();
    }
    static void count(int64_t* c, U k) {
        for (int p = 0; p < passes; ++p) ++c[p * buckets + ((k >> (Bits * p)) & mask)];
    }
};

/// The LSD passes over keys (and positions when `pos`), skipping digits that are the same in
/// every key; returns the arrays holding the result.
template <int Bits, typename U, typename I>
std::pair<U*, I*> radix_passes(int64_t n, U* key, U* key_tmp, I* pos, I* pos_tmp, int64_t* count) {
    using D = digits<Bits, U>;
    for (int p = 0; p < D::passes; ++p) {
        const int shift = Bits * p;
        int64_t* c = count + p * D::buckets;
        if (c[(key[0] >> shift) & D::mask] == n) continue; // one digit for all: nothing moves
        int64_t sum = 0;
        for (int d = 0; d < D::buckets; ++d) {
            const int64_t k = c[d];
            c[d] = sum;
            sum += k;
        }
        if (pos) {
            for (int64_t i = 0; i < n; ++i) {
                const int64_t to = c[(key[i] >> shift) & D::mask]++;
                key_tmp[to] = key[i];
                pos_tmp[to] = pos[i];
            }
            std::swap(pos, pos_tmp);
        } else {
            for (int64_t i = 0; i < n; ++i) key_tmp[c[(key[i] >> shift) & D::mask]++] = key[i];
        }
        std::swap(key, key_tmp);
    }
    return {key, pos};
}

/// Fills key with the keys of row x (inverted for the descending order) and counts every
/// digit into `count`; with `Positions`, pos with first, first + 1, ..., else checks that
/// every key gives its value back (Note [values-only radix]), which it returns.
template <int Bits, bool Positions, typename T, typename U, typename I>
bool make_keys(const T* x, int64_t n, bool descending, U* key, I* pos, int64_t* count,
               int64_t first = 0) {
    bool exact = true;
    for (int64_t i = 0; i < n; ++i) {
        const U k = radix_key(x[i]);
        if constexpr (Positions) {
            pos[i] = static_cast<I>(first + i);
        } else {
            const T back = value_of_key<T, U>(k);
            exact &= std::memcmp(static_cast<const void*>(&back), &x[i], sizeof(T)) == 0;
        }
        key[i] = descending ? static_cast<U>(~k) : k;
        digits<Bits, U>::count(count, key[i]);
    }
    return exact;
}

/// Sorts row x (n elements) into `out` by its keys alone (Note [values-only radix]); false,
/// with `out` untouched, when the row holds a value its key does not give back.
template <int Bits, typename T, typename U, typename I>
bool radix_values(const T* x, int64_t n, bool descending, radix_buffers<U, I>& b, T* out) {
    U* key = b.key.get();
    int64_t* count = digits<Bits, U>::counters(b.counts);
    if (!make_keys<Bits, false, T, U, I>(x, n, descending, key, nullptr, count)) return false;
    const U* sorted =
        radix_passes<Bits, U, I>(n, key, b.key_tmp.get(), nullptr, nullptr, count).first;
    for (int64_t i = 0; i < n; ++i)
        out[i] = value_of_key<T, U>(descending ? static_cast<U>(~sorted[i]) : sorted[i]);
    return true;
}

/// The positions of row x (n elements) in sorted order (Note [radix sort]), in b.pos.
template <int Bits, typename T, typename U, typename I>
void radix_positions(const T* x, int64_t n, bool descending, radix_buffers<U, I>& b) {
    b.need_positions();
    U* key = b.key.get();
    I* pos = b.pos.get();
    int64_t* count = digits<Bits, U>::counters(b.counts);
    make_keys<Bits, true>(x, n, descending, key, pos, count);
    const I* sorted =
        radix_passes<Bits, U, I>(n, key, b.key_tmp.get(), pos, b.pos_tmp.get(), count).second;
    if (sorted != b.pos.get()) { // an odd number of passes moved: the result is in the spare
        std::swap(b.pos, b.pos_tmp);
        std::swap(b.key, b.key_tmp);
    }
}

// Note [one row on every thread]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Rows are split over the threads whole, so a single long row (fewer rows than threads) would sort
// on one thread and leave the others idle. Such a row runs its LSD passes on every thread instead:
// thread t owns the t-th contiguous chunk of the current array, counts the pass's digit in it, and
// scatters it to offsets that put its elements of each digit after those of the chunks before it,
// so each pass stays stable; a barrier separates the counting, the scatter and the next pass. Keys
// are made and decoded chunk by chunk too. The result is the one-thread result (a stable order is
// unique), with the same values-only and positions paths (Note [values-only radix]). Counting a
// pass's digit again costs one read of the keys per pass, against a scatter that reads and writes
// them.

/// Sorts row x (n elements) on `threads` threads (Note [one row on every thread]): values
/// alone (false, outputs untouched, when the row holds a value its key does not give back) or,
/// with `Positions`, by positions into `values` and/or `indices`.
template <int Bits, bool Positions, typename T, typename U, typename I>
bool radix_row_threads(const T* x, int64_t n, bool descending, radix_buffers<U, I>& b, int threads,
                       T* values, int64_t* indices) {
    using D = digits<Bits, U>;
    constexpr int P = D::passes, B = D::buckets;
    if constexpr (Positions) b.need_positions();
    const size_t tn = static_cast<size_t>(threads);
    std::vector<int64_t> all(tn * P * B, 0); // each thread's counts of every pass, from the keys
    std::vector<int64_t> now(tn * B), offsets(tn * B);
    std::vector<char> exact(tn, 1);
    openmp_region([&] {
#pragma omp parallel num_threads(threads)
        {
            const int nt = omp_get_num_threads(), t = omp_get_thread_num();
            const int64_t c0 = n * t / nt, c1 = n * (t + 1) / nt;
            int64_t* mine = all.data() + static_cast<size_t>(t) * P * B;
            U* src = b.key.get();
            U* dst = b.key_tmp.get();
            I* psrc = Positions ? b.pos.get() : nullptr;
            I* pdst = Positions ? b.pos_tmp.get() : nullptr;
            exact[static_cast<size_t>(t)] = make_keys<Bits, Positions, T, U, I>(
                x + c0, c1 - c0, descending, src + c0, Positions ? psrc + c0 : nullptr, mine, c0);
#pragma omp barrier
            bool ok = true;
            for (int k = 0; k < nt; ++k) ok &= exact[static_cast<size_t>(k)] != 0;
            if (Positions || ok) { // the same on every thread: the barriers below match
                for (int p = 0; p < P; ++p) {
                    const int shift = Bits * p;
                    // one digit for all keys: nothing moves (the totals of a pass never change)
                    const U d0 = static_cast<U>((src[0] >> shift) & D::mask);
                    int64_t with_d0 = 0;
                    for (int k = 0; k < nt; ++k)
                        with_d0 += all[(static_cast<size_t>(k) * P + p) * B + d0];
                    if (with_d0 == n) continue;
                    int64_t* c = now.data() + static_cast<size_t>(t) * B;
                    if (p == 0) {
                        std::copy(mine, mine + B, c);
                    } else {
                        std::fill(c, c + B, 0);
                        for (int64_t i = c0; i < c1; ++i) ++c[(src[i] >> shift) & D::mask];
                    }
#pragma omp barrier
                    int64_t* o = offsets.data() + static_cast<size_t>(t) * B;
                    int64_t run = 0;
                    for (int d = 0; d < B; ++d)
                        for (int k = 0; k < nt; ++k) {
                            if (k == t) o[d] = run;
                            run += now[static_cast<size_t>(k) * B + d];
                        }
                    for (int64_t i = c0; i < c1; ++i) {
                        const int64_t to = o[(src[i] >> shift) & D::mask]++;
                        dst[to] = src[i];
                        if constexpr (Positions) pdst[to] = psrc[i];
                    }
#pragma omp barrier
                    std::swap(src, dst);
                    if constexpr (Positions) std::swap(psrc, pdst);
                }
                if constexpr (Positions) {
                    for (int64_t i = c0; i < c1; ++i) {
                        if (indices) indices[i] = static_cast<int64_t>(psrc[i]);
                        if (values) values[i] = x[psrc[i]];
                    }
                } else {
                    for (int64_t i = c0; i < c1; ++i)
                        values[i] =
                            value_of_key<T, U>(descending ? static_cast<U>(~src[i]) : src[i]);
                }
            }
        }
    });
    if constexpr (Positions) return true;
    for (char e : exact)
        if (!e) return false;
    return true;
}

// Sorts rows [0, rows) of length n one after the other, each on every thread (Note [one row on
// every thread]).
template <typename T, typename I>
void radix_rows_threads(const T* x, int64_t n, int64_t rows, T* values, int64_t* indices,
                        bool descending, int threads) {
    radix_buffers<radix_t<T>, I> b(n);
    for (int64_t r = 0; r < rows; ++r) {
        const T* row = x + r * n;
        T* v = values ? values + r * n : nullptr;
        int64_t* ix = indices ? indices + r * n : nullptr;
        if (!indices && values) { // See Note [radix digits]: 11-bit digits for 4- and 8-byte keys
            const bool done =
                sizeof(radix_t<T>) >= 4
                    ? radix_row_threads<11, false>(row, n, descending, b, threads, v, ix)
                    : radix_row_threads<8, false>(row, n, descending, b, threads, v, ix);
            if (done) continue;
        }
        radix_row_threads<8, true>(row, n, descending, b, threads, v, ix);
    }
}

/// Rows shorter than this use the comparison sort.
constexpr int64_t radix_min_row = 64;
/// Rows from this length up sort by 11-bit digits (Note [radix digits]).
constexpr int64_t radix_wide_row = 4096;
/// Rows from this length up sort on every thread when there are fewer rows than threads (Note
/// [one row on every thread]).
constexpr int64_t radix_threads_row = 65536;

template <typename T>
void sort_row(const T* x, int64_t n, T* values, int64_t* indices, bool descending) {
    using K = key_t<T>;
    auto less = [descending](const K& a, const K& b) {
        return descending ? before(b, a) : before(a, b);
    };
    if (!indices) { // values only: sort a copy of the row in place
        std::memcpy(values, x, static_cast<size_t>(n) * sizeof(T));
        if constexpr (std::is_same_v<K, T>)
            std::stable_sort(values, values + n, less);
        else
            std::stable_sort(values, values + n,
                             [&](const T& a, const T& b) { return less(K(a), K(b)); });
        return;
    }
    // Keys beside their positions: the comparisons read one array in order (a permutation of
    // positions into x would gather at random).
    std::unique_ptr<std::pair<K, int64_t>[]> kv(new std::pair<K, int64_t>[static_cast<size_t>(n)]);
    for (int64_t i = 0; i < n; ++i) kv[static_cast<size_t>(i)] = {K(x[i]), i};
    std::stable_sort(kv.get(), kv.get() + n,
                     [&](const auto& a, const auto& b) { return less(a.first, b.first); });
    for (int64_t i = 0; i < n; ++i) {
        const int64_t from = kv[static_cast<size_t>(i)].second;
        indices[i] = from;
        if (values) values[i] = x[from];
    }
}

// Sorts rows [r0, r1) of length n by radix with digits of Bits bits (Note [radix digits]).
template <int Bits, typename T, typename I>
void radix_rows_by(const T* x, int64_t n, int64_t r0, int64_t r1, T* values, int64_t* indices,
                   bool descending) {
    radix_buffers<radix_t<T>, I> b(n);
    for (int64_t r = r0; r < r1; ++r) {
        const T* row = x + r * n;
        if (!indices && values && radix_values<Bits>(row, n, descending, b, values + r * n))
            continue;
        radix_positions<8>(row, n, descending, b); // See Note [radix digits]: bytes for pairs
        const I* pos = b.pos.get();
        if (indices)
            for (int64_t i = 0; i < n; ++i) indices[r * n + i] = static_cast<int64_t>(pos[i]);
        if (values)
            for (int64_t i = 0; i < n; ++i) values[r * n + i] = row[pos[i]];
    }
}

// Sorts rows [r0, r1) of length n by radix (Note [radix sort]) with positions of type I.
template <typename T, typename I>
void radix_rows(const T* x, int64_t n, int64_t r0, int64_t r1, T* values, int64_t* indices,
                bool descending) {
    // See Note [radix digits]: 11-bit digits for long rows of 4- and 8-byte keys
    if constexpr (sizeof(radix_t<T>) >= 4) {
        if (!indices && n >= radix_wide_row) {
            radix_rows_by<11, T, I>(x, n, r0, r1, values, indices, descending);
            return;
        }
    }
    radix_rows_by<8, T, I>(x, n, r0, r1, values, indices, descending);
}

template <typename T>
void sort_typed(const tensor& in, const void* in_data, void* values, int64_t* indices,
                bool descending) {
    const int64_t n = in.dim() == 0 ? 1 : in.size(-1);
    const int64_t rows = n == 0 ? 0 : in.numel() / n;
    if (rows == 0) return;
    const auto* x = static_cast<const T*>(in_data);
    auto* v = static_cast<T*>(values);
    if constexpr (!std::is_void_v<radix_t<T>>) {
        const int threads = reduce_threads();
        if (threads > 1 && rows < threads && n >= radix_threads_row) {
            if (n <= int64_t{UINT32_MAX})
                radix_rows_threads<T, uint32_t>(x, n, rows, v, indices, descending, threads);
            else
                radix_rows_threads<T, uint64_t>(x, n, rows, v, indices, descending, threads);
            return;
        }
    }
    // Rows are independent: pieces of whole rows over the threads (Note [parallel pieces]).
    const int64_t pieces = piece_count(in.numel(), rows);
    for_pieces(pieces, in.numel() >= parallel_grain, [&](int64_t c) {
        const int64_t r0 = rows * c / pieces, r1 = rows * (c + 1) / pieces;
        if constexpr (!std::is_void_v<radix_t<T>>) {
            if (n >= radix_min_row) {
                if (n <= int64_t{UINT32_MAX})
                    radix_rows<T, uint32_t>(x, n, r0, r1, v, indices, descending);
                else
                    radix_rows<T, uint64_t>(x, n, r0, r1, v, indices, descending);
                return;
            }
        }
        for (int64_t r = r0; r < r1; ++r)
            sort_row<T>(x + r * n, n, v ? v + r * n : nullptr, indices ? indices + r * n : nullptr,
                        descending);
    });
}

template <typename T>
void search_typed(const T* sorted, int64_t n, const T* values, int64_t m, int64_t* out,
                  bool right) {
    using K = key_t<T>;
    const int64_t pieces = piece_count(m, m);
    for_pieces(pieces, m >= parallel_grain / 8, [&](int64_t c) {
        for (int64_t i = m * c / pieces; i < m * (c + 1) / pieces; ++i) {
            const K v = K(values[i]);
            // left: the first element not before v; right: the first element v is before
            const T* at =
                right ? std::upper_bound(sorted, sorted + n, v,
                                         [](const K& a, const T& b) { return before(a, K(b)); })
                      : std::lower_bound(sorted, sorted + n, v,
                                         [](const T& a, const K& b) { return before(K(a), b); });
            out[i] = at - sorted;
        }
    });
}

/// Bytes 0 and 1 for the n bools at p, whatever bytes they hold (See Note [bool bytes]: memory
/// shared with another library can be written with other bytes after it was imported, and a
/// sort's digits or comparisons over such bytes would not be NumPy's order of nonzero = true).
std::vector<uint8_t> bool_bytes(const void* p, int64_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    std::vector<uint8_t> out(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = b[i] != 0;
    return out;
}

} // namespace

void search_sorted(const tensor& sorted, const void* sorted_data, const tensor& values,
                   const void* values_data, int64_t* out, bool right) {
    ISTHMUS_ASSERT(sorted.dim() == 1 && sorted.is_contiguous() && values.is_contiguous() &&
                       sorted.dtype() == values.dtype(),
                   "search_sorted: canonical operands expected");
    const int64_t n = sorted.numel(), m = values.numel();
    switch (sorted.dtype()) {
#define ISTHMUS_SEARCH_CASE(T)                                                                     \
    case dtype_of_v<T>:                                                                            \
        return search_typed<T>(static_cast<const T*>(sorted_data), n,                              \
                               static_cast<const T*>(values_data), m, out, right);
    case dtype::bool_: { // as bytes 0 and 1 (bool_bytes)
        const std::vector<uint8_t> a = bool_bytes(sorted_data, n), v = bool_bytes(values_data, m);
        return search_typed<uint8_t>(a.data(), n, v.data(), m, out, right);
    }
        ISTHMUS_SEARCH_CASE(int8_t)
        ISTHMUS_SEARCH_CASE(int16_t)
        ISTHMUS_SEARCH_CASE(int32_t)
        ISTHMUS_SEARCH_CASE(int64_t)
        ISTHMUS_SEARCH_CASE(uint8_t)
        ISTHMUS_SEARCH_CASE(uint16_t)
        ISTHMUS_SEARCH_CASE(uint32_t)
        ISTHMUS_SEARCH_CASE(uint64_t)
        ISTHMUS_SEARCH_CASE(float16_t)
        ISTHMUS_SEARCH_CASE(bfloat16_t)
        ISTHMUS_SEARCH_CASE(float)
        ISTHMUS_SEARCH_CASE(double)
        ISTHMUS_SEARCH_CASE(complex64_t)
        ISTHMUS_SEARCH_CASE(complex128_t)
#undef ISTHMUS_SEARCH_CASE
    }
    ISTHMUS_ASSERT(false, "search_sorted: dtype ", sorted.dtype());
}

void sort_rows(const tensor& in, const void* in_data, void* values, int64_t* indices,
               bool descending) {
    ISTHMUS_ASSERT(in.is_contiguous(), "sort_rows: the rows must be contiguous");
    switch (in.dtype()) {
#define ISTHMUS_SORT_CASE(T)                                                                       \
    case dtype_of_v<T>:                                                                            \
        return sort_typed<T>(in, in_data, values, indices, descending);
    case dtype::bool_: { // as bytes 0 and 1 (bool_bytes), whose sorted values are bools
        const std::vector<uint8_t> b = bool_bytes(in_data, in.numel());
        return sort_typed<uint8_t>(in, b.data(), values, indices, descending);
    }
        ISTHMUS_SORT_CASE(int8_t)
        ISTHMUS_SORT_CASE(int16_t)
        ISTHMUS_SORT_CASE(int32_t)
        ISTHMUS_SORT_CASE(int64_t)
        ISTHMUS_SORT_CASE(uint8_t)
        ISTHMUS_SORT_CASE(uint16_t)
        ISTHMUS_SORT_CASE(uint32_t)
        ISTHMUS_SORT_CASE(uint64_t)
        ISTHMUS_SORT_CASE(float16_t)
        ISTHMUS_SORT_CASE(bfloat16_t)
        ISTHMUS_SORT_CASE(float)
        ISTHMUS_SORT_CASE(double)
        ISTHMUS_SORT_CASE(complex64_t)
        ISTHMUS_SORT_CASE(complex128_t)
#undef ISTHMUS_SORT_CASE
    }
    ISTHMUS_ASSERT(false, "sort_rows: dtype ", in.dtype());
}

} // namespace isthmus::cpu
