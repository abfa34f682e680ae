// Linear algebra ops: matmul with NumPy's `@` rules, dot, vdot, inner; shapes, dtypes and
// checks, then the one dispatch (ops/dispatch.hpp).
#include "isthmus/ops/linalg.hpp"

#include "autograd/recorded_ops.hpp"
#include "ops/dispatch.hpp"

namespace isthmus {

namespace {

void check_defined(const char* op, const tensor& a, const tensor& b) {
    ISTHMUS_CHECK(a.defined() && b.defined(), value_error, op, ": ",
                  a.defined() ? "the second" : "the first", " input tensor is undefined");
}

// Broadcast batch shapes, or value_error naming the operands' full shapes.
shape_t batch_shape(const tensor& a, const tensor& b, const shape_t& ba, const shape_t& bb) {
    const size_t n = std::max(ba.size(), bb.size());
    shape_t out(n);
    for (size_t i = 0; i < n; ++i) {
        const int64_t x = i < n - ba.size() ? 1 : ba[i - (n - ba.size())];
        const int64_t y = i < n - bb.size() ? 1 : bb[i - (n - bb.size())];
        ISTHMUS_CHECK(x == y || x == 1 || y == 1, value_error, "matmul: batch dimensions ",
                      shape_str(ba), " and ", shape_str(bb), " of shapes ", shape_str(a.shape()),
                      " and ", shape_str(b.shape()), " cannot be broadcast together");
        out[i] = x == 1 ? y : x;
    }
    return out;
}

// t * s for a 0-d `s`, with the promoted dtype: an (N, 1) @ (1, 1) product.
tensor scale(const tensor& t, const tensor& s) {
    return matmul(t.reshape({t.numel(), 1}), s.reshape({1, 1})).view(t.shape());
}

} // namespace

tensor matmul(const tensor& a, const tensor& b) {
    check_defined("matmul", a, b);
    // See Note [recording at the op layer].
    if (autograd::needs_record(a, b)) [[unlikely]]
        return autograd::matmul_recorded(a, b);
    ISTHMUS_CHECK(a.dim() >= 1 && b.dim() >= 1, value_error,
                  "matmul: operands need at least one dimension, got shapes ", shape_str(a.shape()),
                  " and ", shape_str(b.shape()), " (a 0-d operand needs multiplication, not @)");
    const dtype dt = promote_types(a.dtype(), b.dtype());
    const tensor A = a.dim() == 1 ? a.unsqueeze(0) : a;
    const tensor B = b.dim() == 1 ? b.unsqueeze(1) : b;
    const int64_t m = A.size(-2), k = A.size(-1), kb = B.size(-2), n = B.size(-1);
    ISTHMUS_CHECK(
        k == kb, value_error, "matmul: shapes ", shape_str(a.shape()), " and ",
        shape_str(b.shape()), " are not aligned: ", k, " (last dimension of the first) != ", kb,
        b.dim() == 1 ? " (size of the second)" : " (second-to-last dimension of the second)");
    const shape_t batch = batch_shape(a, b, shape_t(A.shape().begin(), A.shape().end() - 2),
                                      shape_t(B.shape().begin(), B.shape().end() - 2));
    // Note [matmul dtypes]
    // ~~~~~~~~~~~~~~~~~~~~
    // float16/bfloat16 multiply with float32 accumulation and round once at the end (a backend
    // without a half gemm, BLAS among them, gets them widened to float32); integers and bool take
    // an exact loop in their own dtype.
    const tensor C = ops::run_matmul(dt, A, B, batch);
    shape_t result = batch;
    if (a.dim() > 1) result.push_back(m);
    if (b.dim() > 1) result.push_back(n);
    return C.view(result);
}

tensor dot(const tensor& a, const tensor& b) {
    check_defined("dot", a, b);
    if (autograd::needs_record(a, b)) [[unlikely]]
        return autograd::dot_recorded(a, b);
    if (a.dim() == 0) return scale(b, a);
    if (b.dim() == 0) return scale(a, b);
    const int64_t k = a.size(-1), kb = b.dim() == 1 ? b.size(0) : b.size(-2);
    ISTHMUS_CHECK(
        k == kb, value_error, "dot: shapes ", shape_str(a.shape()), " and ", shape_str(b.shape()),
        " are not aligned: ", k, " (last dimension of the first) != ", kb,
        b.dim() == 1 ? " (size of the second)" : " (second-to-last dimension of the second)");
    if (b.dim() == 1 || (a.dim() <= 2 && b.dim() == 2)) return matmul(a, b);
    // N-d with M-d: sum over a's last axis and b's second-to-last, as one matrix product.
    const int64_t mb = b.dim();
    shape_t perm{mb - 2};
    for (int64_t d = 0; d < mb; ++d)
        if (d != mb - 2) perm.push_back(d);
    const tensor B = b.permute(perm).reshape({k, -1});
    shape_t result(a.shape().begin(), a.shape().end() - 1);
    result.insert(result.end(), b.shape().begin(), b.shape().end() - 2);
    result.push_back(b.shape().back());
    return matmul(a.reshape({-1, k}), B).view(result);
}

tensor vdot(const tensor& a, const tensor& b) {
    check_defined("vdot", a, b);
    ISTHMUS_CHECK(a.numel() == b.numel(), value_error, "vdot: the operands have ", a.numel(),
                  " and ", b.numel(), " elements (shapes ", shape_str(a.shape()), " and ",
                  shape_str(b.shape()), "); they must have the same number");
    const dtype dt = promote_types(a.dtype(), b.dtype());
    if (!is_complex(dt)) return matmul(a.reshape({-1}), b.reshape({-1}));
    const ops::target tg =
        ops::pick_backend(ops::pick_resource({&a, &b}),
                          [&](const backend::compute& be) { return be.supports_dotc(dt); });
    const tensor x = a.to(dt, false).contiguous(), y = b.to(dt, false).contiguous();
    tensor out = tensor::empty({}, dt, tg.where);
    const ops::lock_ref rx(x, lock_mode::read, tg.where), ry(y, lock_mode::read, tg.where);
    const ops::lock_ref w(out, lock_mode::write, tg.where);
    tg.be->dotc(dt, x.numel(), rx.data(), ry.data(), w.data());
    return out;
}

tensor inner(const tensor& a, const tensor& b) {
    check_defined("inner", a, b);
    if (a.dim() == 0) return scale(b, a);
    if (b.dim() == 0) return scale(a, b);
    const int64_t k = a.size(-1);
    ISTHMUS_CHECK(b.size(-1) == k, value_error, "inner: shapes ", shape_str(a.shape()), " and ",
                  shape_str(b.shape()), " are not aligned: last dimensions ", k,
                  " != ", b.size(-1));
    shape_t result(a.shape().begin(), a.shape().end() - 1);
    result.insert(result.end(), b.shape().begin(), b.shape().end() - 1);
    return matmul(a.reshape({-1, k}), b.reshape({-1, k}).t()).view(result);
}

} // namespace isthmus
