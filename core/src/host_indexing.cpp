// Host-side index preparation: index arrays to byte offsets (bounds-checked), range checks.
#include "host_indexing.hpp"
#include "cpu/strided_loop.hpp"
#include "isthmus/openmp_region.hpp"

#include <atomic>
#include <cstring>

namespace isthmus::host {

using cpu::make_plan;
using cpu::parallel_grain;
using cpu::run_plan;

namespace {

// Adds (or, for the first source, stores) the byte offsets of one index array.
template <typename I>
bool add_offsets(const shape_t& common, const shape_t& off_strides, const offset_source& s,
                 int64_t* off, bool first) {
    std::atomic<bool> bad{false};
    const int64_t size = s.size, stride = s.stride_bytes;
    const bool check = s.check;
    auto plan =
        make_plan<2>(common, {&off_strides, &s.index->strides()},
                     {static_cast<int64_t>(sizeof(int64_t)), static_cast<int64_t>(sizeof(I))});
    std::array<char*, 2> base{reinterpret_cast<char*>(off),
                              const_cast<char*>(static_cast<const char*>(s.data))};
    run_plan<2>(plan, base, [&](char** p, const int64_t* ps, int64_t n) {
        // Locals that stay in registers: the offset stores may alias anything in memory.
        const int64_t sz = size, st = stride, so = ps[0], si = ps[1];
        const bool chk = check, store = first;
        char* const po = p[0];
        const char* const pi = p[1];
        bool ok = true;
        for (int64_t i = 0; i < n; ++i) {
            I x;
            std::memcpy(&x, pi + i * si, sizeof(I));
            int64_t v;
            if constexpr (std::is_unsigned_v<I>) {
                ok &= static_cast<uint64_t>(x) < static_cast<uint64_t>(sz) || !chk;
                v = static_cast<int64_t>(x);
            } else {
                v = static_cast<int64_t>(x);
                ok &= (v >= -sz && v < sz) || !chk;
                v += sz & (v >> 63); // wrap negative indices without a branch
            }
            // In unsigned arithmetic: an out-of-range index (reported below, its offset never
            // used) may overflow the product, which must not be signed overflow.
            int64_t* o = reinterpret_cast<int64_t*>(po + i * so);
            const uint64_t part = static_cast<uint64_t>(v) * static_cast<uint64_t>(st);
            *o = static_cast<int64_t>(store ? part : static_cast<uint64_t>(*o) + part);
        }
        if (!ok) bad.store(true, std::memory_order_relaxed);
    });
    return !bad.load();
}

} // namespace

int64_t index_offsets(const shape_t& common, const std::vector<offset_source>& sources,
                      int64_t* off) {
    const shape_t off_strides = contiguous_strides(common);
    for (size_t j = 0; j < sources.size(); ++j) {
        const offset_source& s = sources[j];
        const bool first = j == 0;
        bool ok = false;
        switch (s.index->dtype()) {
        case dtype::int8:
            ok = add_offsets<int8_t>(common, off_strides, s, off, first);
            break;
        case dtype::int16:
            ok = add_offsets<int16_t>(common, off_strides, s, off, first);
            break;
        case dtype::int32:
            ok = add_offsets<int32_t>(common, off_strides, s, off, first);
            break;
        case dtype::int64:
            ok = add_offsets<int64_t>(common, off_strides, s, off, first);
            break;
        case dtype::uint8:
            ok = add_offsets<uint8_t>(common, off_strides, s, off, first);
            break;
        case dtype::uint16:
            ok = add_offsets<uint16_t>(common, off_strides, s, off, first);
            break;
        case dtype::uint32:
            ok = add_offsets<uint32_t>(common, off_strides, s, off, first);
            break;
        case dtype::uint64:
            ok = add_offsets<uint64_t>(common, off_strides, s, off, first);
            break;
        default:
            ISTHMUS_ASSERT(false, "index_offsets: not an integer dtype: ", s.index->dtype());
        }
        if (!ok) return static_cast<int64_t>(j);
    }
    return -1;
}

int64_t first_bad_index(const shape_t& common, const offset_source& s) {
    (void)common;
    const auto vals = s.index->to_vector<int64_t>();
    const bool is_unsigned = is_unsigned_int(s.index->dtype());
    for (int64_t v : vals)
        if ((is_unsigned && (v < 0 || v >= s.size)) ||
            (!is_unsigned && (v < -s.size || v >= s.size)))
            return v;
    return 0;
}

bool indices_in_range(const int64_t* idx, int64_t n, int64_t size) {
    // Counts the bad ones (a branch-free, vectorisable loop); no thread team for small inputs.
    auto bad_in = [idx, size](int64_t b, int64_t e) {
        int64_t bad = 0;
        for (int64_t i = b; i < e; ++i) bad += (idx[i] < -size) | (idx[i] >= size);
        return bad;
    };
    if (n < parallel_grain || omp_in_parallel()) return bad_in(0, n) == 0;
    int64_t bad = 0;
    openmp_region([&] {
#pragma omp parallel for reduction(+ : bad) schedule(static)
        for (int64_t c = 0; c < 64; ++c) bad += bad_in(n * c / 64, n * (c + 1) / 64);
    });
    return bad == 0;
}

} // namespace isthmus::host
