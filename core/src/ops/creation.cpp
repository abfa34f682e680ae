// Creation ops: zeros, ones, full, uninit, the *_like forms, fill, arange, linspace, eye, copy.
#include "isthmus/ops/creation.hpp"
#include "isthmus/autograd.hpp"
#include "isthmus/schedule.hpp"
#include "ops/dispatch.hpp"

#include <cmath>
#include <limits>

namespace isthmus {

namespace {

// Note [creation placement]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// A creation op has no inputs, so by the scheduling rule its result goes to the requested resource
// (MEMRESOURCE_DEVICE0 = the default device, or the device of an enclosing device_scope). A
// resource without a compute backend falls back to the CPU, as in ops::pick_resource. The fill runs
// on that resource's backend; sequences (arange, linspace) run where a backend has the linear
// kernel, else on the CPU (Note [one dispatch]), and the result is then allocated there.
resource_id creation_resource(resource_id requested) {
    if (requested == MEMRESOURCE_DEVICE0 && scoped_resource() >= 0) requested = scoped_resource();
    const resource_id r = resolve_resource(requested);
    return backend::has_compute(r) ? r : MEMRESOURCE_CPU;
}

tensor filled(const shape_t& shape, dtype dt, resource_id resource, const scalar& v) {
    tensor t = tensor::empty(shape, dt, creation_resource(resource));
    fill(t, v);
    return t;
}

// The dtype a fill value gives when none is named: the default dtype of its kind.
dtype default_dtype_of(const scalar& v) {
    const dtype k = v.type();
    if (is_bool(k)) return dtype::bool_;
    if (is_integer(k)) return dtype::int64;
    if (is_complex(k)) return cscalar_dtype();
    return scalar_dtype();
}

} // namespace

void fill(const tensor& t, const scalar& value) {
    ISTHMUS_CHECK(t.defined(), value_error, "fill: the tensor is undefined");
    autograd::check_inplace("fill", t);
    if (t.numel() == 0) return;
    ops::run_fill(t, value);
}

tensor zeros(const shape_t& shape, dtype dt, resource_id resource) {
    return filled(shape, dt, resource, scalar(0));
}

tensor ones(const shape_t& shape, dtype dt, resource_id resource) {
    return filled(shape, dt, resource, scalar(1));
}

tensor full(const shape_t& shape, const scalar& value, std::optional<dtype> dt,
            resource_id resource) {
    return filled(shape, dt.value_or(default_dtype_of(value)), resource, value);
}

tensor uninit(const shape_t& shape, dtype dt, resource_id resource) {
    return tensor::empty(shape, dt, creation_resource(resource));
}

namespace {
const tensor& checked(const tensor& t, const char* what) {
    ISTHMUS_CHECK(t.defined(), value_error, what, ": the tensor is undefined");
    return t;
}
} // namespace

tensor zeros_like(const tensor& t, std::optional<dtype> dt) {
    checked(t, "zeros_like");
    return zeros(t.shape(), dt.value_or(t.dtype()), t.location());
}

tensor ones_like(const tensor& t, std::optional<dtype> dt) {
    checked(t, "ones_like");
    return ones(t.shape(), dt.value_or(t.dtype()), t.location());
}

tensor full_like(const tensor& t, const scalar& value, std::optional<dtype> dt) {
    checked(t, "full_like");
    return full(t.shape(), value, dt.value_or(t.dtype()), t.location());
}

tensor uninit_like(const tensor& t, std::optional<dtype> dt) {
    checked(t, "uninit_like");
    return uninit(t.shape(), dt.value_or(t.dtype()), t.location());
}

// ---- ranges ----

namespace {
// A 1-d tensor of n elements holding the sequence, made where a backend has the kernel.
tensor sequence(int64_t n, dtype dt, resource_id resource, const backend::linear_spec& seq) {
    const ops::target tg =
        ops::pick_backend(creation_resource(resource),
                          [&](const backend::compute& be) { return be.supports_linear(dt); });
    tensor t = tensor::empty({n}, dt, tg.where);
    if (n > 0) {
        const ops::lock_ref w(t, lock_mode::write, tg.where);
        tg.be->linear(dt, w.data(), n, seq);
    }
    return t;
}
} // namespace

tensor arange(const scalar& start, const scalar& stop, const scalar& step, std::optional<dtype> dt,
              resource_id resource) {
    for (const scalar* s : {&start, &stop, &step})
        ISTHMUS_CHECK(!is_complex(s->type()), type_error,
                      "arange: start, stop and step must be real, got ", s->type());
    const bool integral =
        !is_inexact(start.type()) && !is_inexact(stop.type()) && !is_inexact(step.type());
    const dtype out_dt = dt.value_or(integral ? dtype::int64 : scalar_dtype());
    ISTHMUS_CHECK(!is_complex(out_dt), type_error, "arange: complex dtype ", out_dt,
                  " is not supported");
    int64_t n;
    if (integral) {
        // Exact integer arithmetic: length ceil((stop - start) / step).
        const auto a = start.to<int64_t>(), b = stop.to<int64_t>(), s = step.to<int64_t>();
        ISTHMUS_CHECK(s != 0, value_error, "arange: step must not be zero");
        int64_t span;
        ISTHMUS_CHECK(!__builtin_sub_overflow(b, a, &span), value_error, "arange: the range ", a,
                      " to ", b, " holds too many elements");
        if (s > 0)
            n = span > 0 ? (span - 1) / s + 1 : 0;
        else
            n = span < 0 ? (span + 1) / s + 1 : 0;
        backend::linear_spec seq;
        seq.exact = true;
        seq.istart = a;
        seq.istep = s;
        return sequence(n, out_dt, resource, seq);
    }
    const double a = start.to<double>(), b = stop.to<double>(), s = step.to<double>();
    ISTHMUS_CHECK(s != 0, value_error, "arange: step must not be zero");
    ISTHMUS_CHECK(std::isfinite(a) && std::isfinite(b) && std::isfinite(s), value_error,
                  "arange: start, stop and step must be finite, got ", a, ", ", b, ", ", s);
    const double len = std::ceil((b - a) / s);
    ISTHMUS_CHECK(len < 9.0e18, value_error, "arange: ", len, " elements are too many");
    n = len > 0 ? static_cast<int64_t>(len) : 0;
    backend::linear_spec seq;
    seq.start = a;
    seq.step = s;
    return sequence(n, out_dt, resource, seq);
}

tensor arange(const scalar& stop, std::optional<dtype> dt, resource_id resource) {
    return arange(scalar(0), stop, scalar(1), dt, resource);
}

tensor linspace(double start, double stop, int64_t num, bool endpoint, dtype dt,
                resource_id resource) {
    ISTHMUS_CHECK(num >= 0, value_error, "linspace: num must be non-negative, got ", num);
    ISTHMUS_CHECK(!is_complex(dt), type_error, "linspace: complex dtype ", dt, " is not supported");
    const int64_t div = endpoint ? num - 1 : num;
    backend::linear_spec seq;
    seq.start = start;
    seq.step = div > 0 ? (stop - start) / static_cast<double>(div) : 0.0;
    seq.floor_ints = true;
    tensor t = sequence(num, dt, resource, seq);
    if (endpoint && num > 1) { // the last value is exactly `stop`, as NumPy
        const bool ints = is_integer(dt) && dt != dtype::bool_; // rounded as the sequence
        fill(t.slice(0, num - 1, num), scalar(ints ? std::floor(stop) : stop));
    }
    return t;
}

tensor eye(int64_t n, std::optional<int64_t> m, int64_t k, dtype dt, resource_id resource) {
    const int64_t cols = m.value_or(n);
    ISTHMUS_CHECK(n >= 0 && cols >= 0, value_error, "eye: sizes must be non-negative, got ", n,
                  " x ", cols);
    tensor t = zeros({n, cols}, dt, resource);
    // The diagonal is a strided view: row r, column r + k.
    // Offsets clamped first, so that a k near +-2^63 cannot overflow (it selects nothing).
    const int64_t r0 = k >= 0 ? 0 : (k <= -n ? n : -k), c0 = k >= 0 ? std::min(k, cols) : 0;
    const int64_t len = std::max<int64_t>(0, std::min(n - r0, cols - c0));
    if (len > 0)
        fill(tensor::from_storage(t.storage(), dt, {len}, {cols + 1}, r0 * cols + c0), scalar(1));
    return t;
}

tensor copy(const tensor& t) {
    checked(t, "copy");
    return t.clone();
}

} // namespace isthmus
