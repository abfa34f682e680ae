// The CPU backend's reductions (the engine's kinds, argmin/argmax, var/std, cumsum) and sort.
#include "cpu/backend.hpp"
#include "cpu/sort.hpp"

namespace isthmus::cpu {

namespace {

// The number of elements reduced into each output.
int64_t reduced_count(const tensor& in, const std::vector<bool>& reduced) {
    int64_t n = 1;
    for (size_t d = 0; d < reduced.size(); ++d)
        if (reduced[d]) n *= in.shape()[d];
    return n;
}

} // namespace

bool cpu_compute::supports_reduce(backend::reduce_kind, dtype, dtype) const {
    return true;
}

void cpu_compute::reduce(backend::reduce_kind kind, const tensor& out, void* out_data,
                         const tensor& in, const void* in_data, const std::vector<bool>& reduced) {
    if (kind == backend::reduce_kind::argmin || kind == backend::reduce_kind::argmax) {
        int64_t axis = -1;
        for (size_t d = 0; d < reduced.size(); ++d)
            if (reduced[d]) {
                ISTHMUS_ASSERT(axis < 0, "cpu arg reduction over more than one dimension");
                axis = static_cast<int64_t>(d);
            }
        ISTHMUS_ASSERT(axis >= 0, "cpu arg reduction over no dimension");
        arg_reduce(kind == backend::reduce_kind::argmax, out, out_data, in, in_data, axis);
        return;
    }
    const double divisor =
        kind == backend::reduce_kind::mean ? static_cast<double>(reduced_count(in, reduced)) : 1.0;
    cpu::reduce(kind, out, out_data, in, in_data, reduced, divisor);
}

bool cpu_compute::supports_variance(dtype) const {
    return true;
}

// Note [variance] (ops/reduce.cpp): one pass over the input (Note [blocked variance]).
void cpu_compute::variance(const tensor& out, void* out_data, const tensor& in, const void* in_data,
                           const std::vector<bool>& reduced, double divisor, bool root) {
    cpu::variance(out, out_data, in, in_data, reduced, divisor, root);
}

bool cpu_compute::supports_cumulative(bool, dtype) const {
    return true;
}

void cpu_compute::cumulative(bool prod, const tensor& out, void* out_data, const tensor& in,
                             const void* in_data, int64_t axis) {
    cpu::cumulative(prod, out, out_data, in, in_data, axis);
}

bool cpu_compute::supports_sort(dtype) const {
    return true;
}

void cpu_compute::sort(const tensor& in, const void* in_data, void* values, int64_t* indices,
                       bool descending) {
    cpu::sort_rows(in, in_data, values, indices, descending);
}

bool cpu_compute::supports_searchsorted(dtype) const {
    return true;
}

void cpu_compute::searchsorted(const tensor& sorted, const void* sorted_data, const tensor& values,
                               const void* values_data, int64_t* out, bool right) {
    cpu::search_sorted(sorted, sorted_data, values, values_data, out, right);
}

} // namespace isthmus::cpu
