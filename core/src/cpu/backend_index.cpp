// The CPU backend's advanced-index entries: row gathers and scatters (cpu/gather.hpp).
#include "cpu/backend.hpp"

#include "cpu/gather.hpp"

namespace isthmus::cpu {

namespace {

// The kernels' row locations for the interface's (the same two forms, Note [row offsets]).
row_offsets offsets_of(const backend::index_rows& rows) {
    return {rows.off, rows.idx, rows.size, rows.stride_bytes};
}

// A plan over `rest` for two operands given byte strides (multiples of the item size).
strided_plan<2> rest_plan(size_t itemsize, const shape_t& rest, const shape_t& a_bytes,
                          const shape_t& b_bytes) {
    const auto isz = static_cast<int64_t>(itemsize);
    shape_t a(a_bytes.size()), b(b_bytes.size());
    for (size_t d = 0; d < a.size(); ++d) a[d] = a_bytes[d] / isz;
    for (size_t d = 0; d < b.size(); ++d) b[d] = b_bytes[d] / isz;
    return make_plan<2>(rest, {&a, &b}, {isz, isz});
}

} // namespace

bool cpu_compute::supports_index(size_t) const {
    return true;
}

void cpu_compute::gather(size_t itemsize, const backend::index_rows& rows, void* out,
                         int64_t out_row, const void* src, const shape_t& rest,
                         const shape_t& out_rest, const shape_t& src_rest, bool rows_inner) {
    gather_rows(itemsize, static_cast<char*>(out), static_cast<const char*>(src), offsets_of(rows),
                rows.count, out_row, rest_plan(itemsize, rest, out_rest, src_rest), rows_inner);
}

void cpu_compute::scatter(size_t itemsize, const backend::index_rows& rows, void* dst,
                          const void* val, int64_t val_row, const shape_t& rest,
                          const shape_t& dst_rest, const shape_t& val_rest, bool rows_inner) {
    scatter_rows(itemsize, static_cast<char*>(dst), static_cast<const char*>(val), offsets_of(rows),
                 rows.count, val_row, rest_plan(itemsize, rest, dst_rest, val_rest), rows_inner);
}

} // namespace isthmus::cpu
