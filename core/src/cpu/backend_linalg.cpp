// The CPU backend's linear algebra entries: matmul through BLAS or the exact loop, vdot.
#include "cpu/backend.hpp"

#include "cpu/copy.hpp"
#include "cpu/matmul.hpp"

#include <optional>

namespace isthmus::cpu {

namespace {

// A C-contiguous host copy of the matrices of `x` (element 0 at `data`) that BLAS can read,
// its broadcast batch dimensions kept at stride 0 (one matrix copied, not one per batch).
struct blas_copy {
    tensor t;
    void* data;
    blas_copy(const tensor& x, const void* x_data) {
        tensor held = x;
        for (int64_t d = 0; d + 2 < x.dim(); ++d)
            if (x.stride(d) == 0 && x.size(d) > 1) held = held.slice(d, 0, 1); // same element 0
        t = tensor::empty(held.shape(), x.dtype(), MEMRESOURCE_CPU);
        data = t.lock(LOCK_WRITE, MEMRESOURCE_CPU);
        copy_cast(t, data, held, x_data);
    }
    ~blas_copy() { t.unlock(LOCK_WRITE, MEMRESOURCE_CPU); }
    blas_copy(const blas_copy&) = delete;
    blas_copy& operator=(const blas_copy&) = delete;
};

} // namespace

bool cpu_compute::supports_matmul(dtype dt) const {
    return !(is_floating(dt) && itemsize(dt) == 2); // See Note [matmul dtypes]: widened to float32
}

void cpu_compute::matmul(const tensor& c, void* c_data, const tensor& a, const void* a_data,
                         const tensor& b, const void* b_data) {
    std::optional<blas_copy> ca, cb;
    tensor A = a, B = b;
    if (blas_dtype(c.dtype())) {
        if (!blas_layout_ok(a)) {
            ca.emplace(a, a_data);
            A = ca->t.expand(a.shape());
            a_data = ca->data;
        }
        if (!blas_layout_ok(b)) {
            cb.emplace(b, b_data);
            B = cb->t.expand(b.shape());
            b_data = cb->data;
        }
    }
    cpu::matmul(c, c_data, A, a_data, B, b_data);
}

bool cpu_compute::supports_dotc(dtype dt) const {
    return is_complex(dt);
}

void cpu_compute::dotc(dtype dt, int64_t n, const void* a, const void* b, void* out) {
    cpu::dotc(dt, n, a, b, out);
}

} // namespace isthmus::cpu
