// The derivative of gathers (indexing with integer and boolean arrays, pad's copied borders): a
// scatter-add of the gradient.
#include "autograd/recorded_ops.hpp"
#include "isthmus/ops/creation.hpp"
#include "isthmus/ops/indexing.hpp"
#include "ops/dispatch.hpp"

#include <cstring>

namespace isthmus::autograd {

// Note [array indexing's derivative]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// y = t[items] with integer or boolean arrays reads, for each element of y, one element of t: the
// one at flat position ids[k], where ids is an arange of t's positions indexed with the same
// items, so every rule of the subscript (broadcast index arrays, masks, negative indices, where
// the advanced dimensions go) is the forward's own. The gradient of t adds g[k] at ids[k]:
// positions read twice get both (a gather's adjoint is a scatter-add). The sum runs on the host
// in the order of y's elements, so it is the same on any number of threads, and half-precision
// gradients are summed in float; a gradient on a GPU makes the trip through the host (correct,
// slower than a device scatter-add, which the backends do not have yet). Its own derivative is the
// gather of ids again, recorded when the gradient requires grad (create_graph), so any order of
// derivative goes through the same pair. take, take_along_axis and A[idx] all index through here;
// pad's copied borders (edge, reflect, symmetric, wrap) are gathers too, differentiated the same
// way with the positions padded as the values are.

namespace {

template <typename T>
void add_at(const int64_t* ids, const T* g, T* out, int64_t count) {
    for (int64_t k = 0; k < count; ++k) out[ids[k]] += g[k];
}

/// A 1-d tensor of n zeros of g's dtype with g[k] added at ids[k] (ids and g of one shape).
tensor scatter_add_flat(const tensor& ids, const tensor& g, int64_t n) {
    const dtype dt = g.dtype();
    const bool half = dt == dtype::float16 || dt == dtype::bfloat16;
    const tensor gc = (half ? g.to(dtype::float32) : g).contiguous();
    const tensor ic = ids.contiguous();
    tensor out = tensor::empty({n}, gc.dtype(), MEMRESOURCE_CPU);
    {
        auto o = ops::write_host(out);
        std::memset(o.data(), 0, static_cast<size_t>(n) * out.itemsize());
        if (gc.numel() > 0) {
            auto gi = ops::read_host(gc);
            auto ii = ops::read_host(ic);
            const auto* idx = ii.as<const int64_t>();
            auto* o_data = o.data();
            switch (
                gc.dtype()) { // (gradients are floating point or complex: Note [autograd state])
            case dtype::float32:
                add_at(idx, gi.as<const float>(), static_cast<float*>(o_data), gc.numel());
                break;
            case dtype::float64:
                add_at(idx, gi.as<const double>(), static_cast<double*>(o_data), gc.numel());
                break;
            case dtype::complex64:
                add_at(idx, gi.as<const complex64_t>(), static_cast<complex64_t*>(o_data),
                       gc.numel());
                break;
            case dtype::complex128:
                add_at(idx, gi.as<const complex128_t>(), static_cast<complex128_t*>(o_data),
                       gc.numel());
                break;
            default:
                ISTHMUS_THROW(type_error, "the gradient of array indexing: no gradient of dtype ",
                              gc.dtype());
            }
        }
    }
    return half ? out.to(dt) : out;
}

/// The gradient of t for y = t[items]: g scattered back (See Note [array indexing's derivative]).
tensor scatter_add_back(const tensor& ids, const tensor& g, const shape_t& in_shape) {
    tensor z;
    {
        no_grad_guard off;
        z = scatter_add_flat(ids, g, numel_of(in_shape)).reshape(in_shape);
    }
    if (needs_record(g)) [[unlikely]]
        record("the gradient of array indexing", {&g}, z, {},
               [ids](const tensor& gz, const tensor_list&) {
                   return tensor_list{index(gz.reshape({gz.numel()}), {index_item(ids)})};
               });
    return z;
}

} // namespace

tensor positions_of(const tensor& t) {
    return arange(scalar(t.numel()), dtype::int64, MEMRESOURCE_CPU).reshape(t.shape());
}

void record_gather(const char* name, const tensor& t, const tensor& y, const tensor& ids) {
    const shape_t in_shape = t.shape();
    record(name, {&t}, y, {}, [ids, in_shape](const tensor& g, const tensor_list&) {
        return tensor_list{scatter_add_back(ids, g, in_shape)};
    });
}

tensor index_recorded(const tensor& t, const std::vector<index_item>& items) {
    return gather_recorded("indexing with integer or boolean arrays", t,
                           [&](const tensor& src) { return index(src, items); });
}

} // namespace isthmus::autograd
