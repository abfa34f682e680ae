// Internal: element copies by item size for the gather and scatter kernels.
#pragma once

#include "cpu/strided_loop.hpp"
#include "isthmus/error.hpp"

#include <cstdint>
#include <cstring>

namespace isthmus::cpu {

struct item16 {
    uint64_t lo, hi;
};

/// Calls f(U{}) with U an unsigned type (or item16) of `itemsize` bytes: indexing moves bits,
/// so its kernels are instantiated per item size, not per dtype.
template <typename F>
void dispatch_item_size(size_t itemsize, F&& f) {
    switch (itemsize) {
    case 1:
        f(uint8_t{});
        break;
    case 2:
        f(uint16_t{});
        break;
    case 4:
        f(uint32_t{});
        break;
    case 8:
        f(uint64_t{});
        break;
    case 16:
        f(item16{});
        break;
    default:
        ISTHMUS_ASSERT(false, "unexpected item size ", itemsize);
    }
}

/// Calls f(offset_of) with offset_of(b) the byte offset of row b, as a small lambda specialised
/// for precomputed offsets or for scaled indices (so the row loops stay tight).
template <typename RowOffsets, typename F>
void with_row_offsets(const RowOffsets& at, F&& f) {
    if (at.off) {
        const int64_t* off = at.off;
        f([off](int64_t b) { return off[b]; });
    } else {
        const int64_t* idx = at.idx;
        const int64_t size = at.size, stride = at.stride_bytes;
        f([idx, size, stride](int64_t b) {
            int64_t v = idx[b];
            v += size & (v >> 63); // wrap negative indices without a branch
            return v * stride;
        });
    }
}

/// Inner loop for strided_plan<2>: copies operand 1 to operand 0 (contiguous: memcpy; stride-0
/// source: one load, repeated stores).
///
/// Note [local copies]
/// ~~~~~~~~~~~~~~~~~~~
/// The pointers and strides are copied into locals first. Stores through char* may alias anything,
/// so a loop reading p[0] or s[0] from memory would reload them on every element; locals whose
/// address never escapes stay in registers.
template <typename U>
void copy_run(char** p, const int64_t* s, int64_t n) {
    constexpr auto isz = static_cast<int64_t>(sizeof(U));
    char* const d = p[0];
    const char* const a = p[1];
    const int64_t sd = s[0], sa = s[1];
    if (sd == isz && sa == isz) {
        std::memcpy(d, a, static_cast<size_t>(n) * sizeof(U));
        return;
    }
    if (sa == 0) {
        U v;
        std::memcpy(&v, a, sizeof(U));
        if (sd == isz) {
            U* du = reinterpret_cast<U*>(d);
            for (int64_t i = 0; i < n; ++i) du[i] = v;
        } else {
            for (int64_t i = 0; i < n; ++i) std::memcpy(d + i * sd, &v, sizeof(U));
        }
        return;
    }
    for (int64_t i = 0; i < n; ++i) std::memcpy(d + i * sd, a + i * sa, sizeof(U));
}

/// Rows-inner order: for each element of the rest plan, the `rows` elements at row offsets
/// offset_of(b) (on the operand `Indexed`, 0 = destination or 1 = source) and at b * row_bytes
/// (on the other operand) are copied. The inner loop runs over rows in order.
template <typename U, int Indexed, typename OffsetOf>
void copy_rows_inner(char* dst, const char* src, OffsetOf offset_of, int64_t rows,
                     int64_t row_bytes, const strided_plan<2>& rest, int64_t grain) {
    run_plan<2>(
        rest, {dst, const_cast<char*>(src)},
        [&](char** p, const int64_t* s, int64_t n) {
            // Locals, see Note [local copies].
            const auto at_row = offset_of;
            char* const d0 = p[0];
            const char* const a0 = p[1];
            const int64_t sd = s[0], sa = s[1], nb = rows, step = row_bytes;
            for (int64_t i = 0; i < n; ++i) {
                char* const d = d0 + i * sd;
                const char* const a = a0 + i * sa;
                for (int64_t b = 0; b < nb; ++b) {
                    U v;
                    if constexpr (Indexed == 1) {
                        std::memcpy(&v, a + at_row(b), sizeof(U));
                        std::memcpy(d + b * step, &v, sizeof(U));
                    } else {
                        std::memcpy(&v, a + b * step, sizeof(U));
                        std::memcpy(d + at_row(b), &v, sizeof(U));
                    }
                }
            }
        },
        grain);
}

} // namespace isthmus::cpu
