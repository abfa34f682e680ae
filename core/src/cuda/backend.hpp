// The CUDA compute backend of one device (kernels in *.cu, matmul through cuBLAS).
#pragma once

#include "isthmus/backend.hpp"

#include "cuda/device.hpp"
#include "cuda/kernels.hpp"

#include <mutex>

namespace isthmus::cudabk {

/// Runs the op layer's kernels on one device's stream (see Note [backend contract]). It takes
/// the canonical forms only (Note [canonical forms]); variance, sequences and vdot are not
/// implemented (var/std are composed of its kernels, the others run on the CPU).
class cuda_compute final : public backend::compute {
public:
    explicit cuda_compute(device& dev);
    ~cuda_compute() override;
    std::string name() const override;
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
    bool supports_reduce(backend::reduce_kind kind, dtype in, dtype out) const override;
    void reduce(backend::reduce_kind kind, const tensor& out, void* out_data, const tensor& in,
                const void* in_data, const std::vector<bool>& reduced) override;
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
    bool supports_matmul(dtype dt) const override;
    void matmul(const tensor& c, void* c_data, const tensor& a, const void* a_data, const tensor& b,
                const void* b_data) override;

private:
    // out = in converted to out.dt over `shape` (a scalar `in`: a fill).
    void launch_copy(const shape_t& shape, const backend::operand& out, const backend::operand& in);

    device& dev_;
    std::mutex blas_mu_;
    void* blas_ = nullptr; // cublasHandle_t when built with cuBLAS
};

} // namespace isthmus::cudabk
