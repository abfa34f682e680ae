// Internal: the CPU compute backend, the backend::compute of MEMRESOURCE_CPU (cpu/backend*.cpp).
#pragma once

#include "cpu/elementwise.hpp"
#include "cpu/reduce.hpp"
#include "isthmus/backend.hpp"

namespace isthmus::cpu {

/// Runs every op on the host with the CPU kernels (run_kernel, cpu::reduce, ...).
///
/// Note [cpu backend]
/// ~~~~~~~~~~~~~~~~~~
/// The CPU is a backend like CUDA (Note [backend contract]) with two differences: it supports every
/// case the op layer's type rules let through, so it is where every unsupported case lands; and it
/// takes all the `feature`s, so the dispatch hands it operands as they are (mixed dtypes converted
/// per block, strided reductions, broadcast matmul batches, index rows read in place) and it never
/// pays for canonical copies. Its entries are thin adapters onto the kernel entry points in this
/// folder.
class cpu_compute final : public backend::compute {
public:
    std::string name() const override;
    unsigned features() const noexcept override;

    bool supports_binary(binary_op op, dtype dt) const override;
    void binary(binary_op op, dtype dt, const shape_t& shape, const backend::operand& out,
                const backend::operand& a, const backend::operand& b) override;
    bool supports_unary(unary_op op, dtype dt) const override;
    void unary(unary_op op, dtype dt, const shape_t& shape, const backend::operand& out,
               const backend::operand& a) override;
    bool supports_ternary(backend::ternary_op op, dtype dt) const override;
    void ternary(backend::ternary_op op, dtype dt, const shape_t& shape,
                 const backend::operand& out, const backend::operand& a, const backend::operand& b,
                 const backend::operand& c) override;
    bool supports_fill(dtype dt) const override;
    void fill(const tensor& out, void* out_data, const backend::operand& value) override;
    bool supports_copy(dtype out, dtype in) const override;
    void copy(const tensor& out, void* out_data, const tensor& in, const void* in_data) override;

    bool supports_reduce(backend::reduce_kind kind, dtype in, dtype out_dt) const override;
    void reduce(backend::reduce_kind kind, const tensor& out, void* out_data, const tensor& in,
                const void* in_data, const std::vector<bool>& reduced) override;
    bool supports_variance(dtype in) const override;
    void variance(const tensor& out, void* out_data, const tensor& in, const void* in_data,
                  const std::vector<bool>& reduced, double divisor, bool root) override;
    bool supports_cumulative(bool prod, dtype dt) const override;
    void cumulative(bool prod, const tensor& out, void* out_data, const tensor& in,
                    const void* in_data, int64_t axis) override;

    bool supports_sort(dtype dt) const override;
    void sort(const tensor& in, const void* in_data, void* values, int64_t* indices,
              bool descending) override;
    bool supports_searchsorted(dtype dt) const override;
    void searchsorted(const tensor& sorted, const void* sorted_data, const tensor& values,
                      const void* values_data, int64_t* out, bool right) override;

    bool supports_index(size_t itemsize) const override;
    void gather(size_t itemsize, const backend::index_rows& rows, void* out, int64_t out_row,
                const void* src, const shape_t& rest, const shape_t& out_rest,
                const shape_t& src_rest, bool rows_inner) override;
    void scatter(size_t itemsize, const backend::index_rows& rows, void* dst, const void* val,
                 int64_t val_row, const shape_t& rest, const shape_t& dst_rest,
                 const shape_t& val_rest, bool rows_inner) override;

    bool supports_random(dtype dt, bool integer) const override;
    void random_real(dtype dt, bool normal, void* data, int64_t n, uint64_t seed,
                     uint64_t first_block, double a, double b) override;
    void random_int(dtype dt, void* data, int64_t n, uint64_t seed, uint64_t first_block,
                    int64_t lo, uint64_t range) override;
    bool supports_linear(dtype dt) const override;
    void linear(dtype dt, void* data, int64_t n, const backend::linear_spec& seq) override;

    bool supports_matmul(dtype dt) const override;
    void matmul(const tensor& c, void* c_data, const tensor& a, const void* a_data, const tensor& b,
                const void* b_data) override;
    bool supports_dotc(dtype dt) const override;
    void dotc(dtype dt, int64_t n, const void* a, const void* b, void* out) override;
};

/// A backend operand as the CPU kernels take it (a scalar reads its inline value with stride 0
/// on every dimension).
operand kernel_operand(const backend::operand& o);

} // namespace isthmus::cpu
