// Tensor views: reshape, transpose, permute, slice, select, squeeze, expand, view_as.
#include "autograd/meta_access.hpp"
#include "isthmus/ops/creation.hpp"
#include "isthmus/tensor.hpp"

#include <algorithm>
#include <limits>

namespace isthmus {

namespace {
// Fills in a -1 entry and checks the element count (and the new shape, Note [checked sizes]).
shape_t infer_shape(shape_t shape, int64_t numel, const shape_t& from, size_t itemsize) {
    int infer = -1;
    for (size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] == -1) {
            ISTHMUS_CHECK(infer < 0, value_error, "reshape: only one dimension can be -1, got ",
                          shape_str(shape));
            infer = static_cast<int>(i);
        } else {
            ISTHMUS_CHECK(shape[i] >= 0, value_error, "reshape: invalid size ", shape[i], " in ",
                          shape_str(shape));
        }
    }
    shape_t known_dims = shape;
    if (infer >= 0) known_dims[static_cast<size_t>(infer)] = 1;
    int64_t known = checked_numel(known_dims, itemsize, "reshape");
    if (infer >= 0) {
        ISTHMUS_CHECK(known != 0 && numel % known == 0, value_error, "cannot reshape ",
                      shape_str(from), " (", numel, " elements) into ", shape_str(shape));
        shape[static_cast<size_t>(infer)] = numel / known;
        known *= shape[static_cast<size_t>(infer)];
    }
    ISTHMUS_CHECK(known == numel, value_error, "cannot reshape ", shape_str(from), " (", numel,
                  " elements) into ", shape_str(shape), " (", known, " elements)");
    return shape;
}

// Strides for viewing (shape, strides) as new_shape without copying, or empty when impossible.
// Walks groups of old dimensions that are contiguous with each other and splits them.
bool view_strides(const shape_t& shape, const shape_t& strides, const shape_t& new_shape,
                  shape_t& out) {
    out.assign(new_shape.size(), 0);
    if (numel_of(shape) == 0) {
        out = contiguous_strides(new_shape);
        return true;
    }
    // Drop size-1 old dimensions: they constrain nothing.
    shape_t os, ost;
    for (size_t i = 0; i < shape.size(); ++i)
        if (shape[i] != 1) {
            os.push_back(shape[i]);
            ost.push_back(strides[i]);
        }
    size_t oi = 0, ni = 0;
    while (ni < new_shape.size()) {
        if (new_shape[ni] == 1) {
            out[ni] = 1;
            ++ni;
            continue;
        }
        if (oi >= os.size()) return false;
        // Take a run of old dims [oi, oj) that is contiguous and whose product we can split.
        int64_t old_prod = os[oi];
        size_t oj = oi + 1;
        int64_t new_prod = new_shape[ni];
        size_t nj = ni + 1;
        while (old_prod != new_prod) {
            if (old_prod < new_prod) {
                if (oj >= os.size() || ost[oj - 1] != ost[oj] * os[oj]) return false;
                old_prod *= os[oj++];
            } else {
                while (nj < new_shape.size() && new_shape[nj] == 1) ++nj;
                if (nj >= new_shape.size()) return false;
                new_prod *= new_shape[nj++];
            }
        }
        // New dims [ni, nj) take strides from the innermost old stride of the run.
        int64_t st = ost[oj - 1];
        for (size_t k = nj; k-- > ni;) {
            out[k] = st;
            st *= new_shape[k];
        }
        oi = oj;
        ni = nj;
    }
    return oi == os.size();
}
// The backward of a view: the gradient reshaped to the input's shape.
autograd::backward_fn reshape_back(const shape_t& in) {
    return [in](const tensor& g, const autograd::tensor_list&) {
        return autograd::tensor_list{g.reshape(in)};
    };
}

// Note [the backward of slice and select]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The gradient of a slice or a selection is the incoming gradient written into zeros of the
// input's shape, at the places the view took. That write is an in-place copy, which recording
// refuses; so it runs without recording, and when the incoming gradient itself requires grad
// (backward with create_graph) the result is recorded as an op of its own, whose derivative is
// the same view of its gradient. A second derivative through slicing or selection therefore
// works, and a third, each time through the view and this scatter.
template <typename Take>
autograd::backward_fn scatter_back(const shape_t& in, Take take) {
    return [in, take](const tensor& g, const autograd::tensor_list&) {
        tensor z;
        {
            autograd::no_grad_guard off;
            z = zeros(in, g.dtype(), g.location());
            take(z).copy_from(g);
        }
        if (autograd::needs_record(g)) [[unlikely]]
            autograd::record("the gradient of a slice", {&g}, z, {},
                             [take](const tensor& gz, const autograd::tensor_list&) {
                                 return autograd::tensor_list{take(gz)};
                             });
        return autograd::tensor_list{z};
    };
}
} // namespace

tensor tensor::view(shape_t shape) const {
    check_defined();
    shape = infer_shape(std::move(shape), numel(), shape_, itemsize());
    shape_t st;
    ISTHMUS_CHECK(view_strides(shape_, strides_, shape, st), value_error, "cannot view ",
                  shape_str(shape_), " with strides ", shape_str(strides_), " as ",
                  shape_str(shape), " without a copy (use reshape, which copies)");
    tensor r(storage_, dtype_, std::move(shape), std::move(st), offset_);
    r.read_only_ = read_only_;
    return autograd::finish_view(*this, std::move(r), "view", [&] { return reshape_back(shape_); });
}

tensor tensor::reshape(shape_t shape) const {
    check_defined();
    shape = infer_shape(std::move(shape), numel(), shape_, itemsize());
    shape_t st;
    if (view_strides(shape_, strides_, shape, st)) {
        tensor r(storage_, dtype_, std::move(shape), std::move(st), offset_);
        r.read_only_ = read_only_;
        return autograd::finish_view(*this, std::move(r), "reshape",
                                     [&] { return reshape_back(shape_); });
    }
    return contiguous().view(std::move(shape));
}

tensor tensor::transpose(int64_t d0, int64_t d1) const {
    check_defined();
    d0 = wrap_axis(d0, dim());
    d1 = wrap_axis(d1, dim());
    tensor r = *this;
    std::swap(r.shape_[static_cast<size_t>(d0)], r.shape_[static_cast<size_t>(d1)]);
    std::swap(r.strides_[static_cast<size_t>(d0)], r.strides_[static_cast<size_t>(d1)]);
    return autograd::finish_view(*this, std::move(r), "transpose", [&] {
        return autograd::backward_fn([d0, d1](const tensor& g, const autograd::tensor_list&) {
            return autograd::tensor_list{g.transpose(d0, d1)};
        });
    });
}

tensor tensor::t() const {
    check_defined();
    tensor r = *this;
    std::reverse(r.shape_.begin(), r.shape_.end());
    std::reverse(r.strides_.begin(), r.strides_.end());
    return autograd::finish_view(*this, std::move(r), "t", [&] {
        return autograd::backward_fn([](const tensor& g, const autograd::tensor_list&) {
            return autograd::tensor_list{g.t()};
        });
    });
}

tensor tensor::permute(const shape_t& dims) const {
    check_defined();
    ISTHMUS_CHECK(static_cast<int64_t>(dims.size()) == dim(), value_error, "permute: ", dims.size(),
                  " axes given for a tensor of rank ", dim());
    std::vector<bool> seen(dims.size(), false);
    tensor r = *this;
    for (size_t i = 0; i < dims.size(); ++i) {
        int64_t d = wrap_axis(dims[i], dim());
        ISTHMUS_CHECK(!seen[static_cast<size_t>(d)], value_error, "permute: axis ", d,
                      " repeated in ", shape_str(dims));
        seen[static_cast<size_t>(d)] = true;
        r.shape_[i] = shape_[static_cast<size_t>(d)];
        r.strides_[i] = strides_[static_cast<size_t>(d)];
    }
    return autograd::finish_view(*this, std::move(r), "permute", [&] {
        shape_t inverse(dims.size());
        for (size_t i = 0; i < dims.size(); ++i)
            inverse[static_cast<size_t>(wrap_axis(dims[i], dim()))] = static_cast<int64_t>(i);
        return autograd::backward_fn([inverse](const tensor& g, const autograd::tensor_list&) {
            return autograd::tensor_list{g.permute(inverse)};
        });
    });
}

tensor tensor::slice(int64_t d, int64_t start, int64_t stop, int64_t step) const {
    check_defined();
    d = wrap_axis(d, dim());
    ISTHMUS_CHECK(step != 0, value_error, "slice step cannot be zero");
    const int64_t start0 = start, stop0 = stop;
    const int64_t n = shape_[static_cast<size_t>(d)];
    // Python's slice.indices() clamping.
    auto clamp = [&](int64_t v, int64_t lo, int64_t hi) {
        if (v < 0) v += n;
        return std::clamp(v, lo, hi);
    };
    // Note [slice length]
    // ~~~~~~~~~~~~~~~~~~~
    // The length is computed as (span - 1) / |step| + 1, which cannot overflow for any step (the
    // textbook (span + step - 1) / step does for steps near 2^63), and a step of -2^63 (no positive
    // counterpart) takes at most one element.
    int64_t len;
    if (step > 0) {
        start = clamp(start, 0, n);
        stop = clamp(stop, 0, n);
        len = stop > start ? (stop - start - 1) / step + 1 : 0;
    } else {
        start = clamp(start, -1, n - 1);
        stop = clamp(stop, -1, n - 1);
        len = start <= stop                                 ? 0
              : step == std::numeric_limits<int64_t>::min() ? 1
                                                            : (start - stop - 1) / -step + 1;
    }
    tensor r = *this;
    if (len > 0) r.offset_ += start * strides_[static_cast<size_t>(d)];
    r.shape_[static_cast<size_t>(d)] = len;
    // The stride is stride * step, as in NumPy. With two or more elements |step| < n bounds the
    // product; a dimension of at most one element never steps, so when a step near 2^63 would
    // overflow the product there, the old stride is kept.
    int64_t st;
    if (!__builtin_mul_overflow(strides_[static_cast<size_t>(d)], step, &st))
        r.strides_[static_cast<size_t>(d)] = st;
    return autograd::finish_view(*this, std::move(r), "slice", [&] {
        return scatter_back(shape_, [d, start0, stop0, step](const tensor& z) {
            return z.slice(d, start0, stop0, step);
        });
    });
}

tensor tensor::select(int64_t d, int64_t i) const {
    check_defined();
    d = wrap_axis(d, dim());
    const int64_t n = shape_[static_cast<size_t>(d)];
    ISTHMUS_CHECK(i >= -n && i < n, index_error, "index ", i, " is out of bounds for axis ", d,
                  " with size ", n);
    if (i < 0) i += n;
    tensor r = *this;
    r.offset_ += i * strides_[static_cast<size_t>(d)];
    r.shape_.erase(r.shape_.begin() + d);
    r.strides_.erase(r.strides_.begin() + d);
    return autograd::finish_view(*this, std::move(r), "select", [&] {
        return scatter_back(shape_, [d, i](const tensor& z) { return z.select(d, i); });
    });
}

tensor tensor::squeeze() const {
    check_defined();
    tensor r = *this;
    r.shape_.clear();
    r.strides_.clear();
    for (size_t i = 0; i < shape_.size(); ++i)
        if (shape_[i] != 1) {
            r.shape_.push_back(shape_[i]);
            r.strides_.push_back(strides_[i]);
        }
    return autograd::finish_view(*this, std::move(r), "squeeze",
                                 [&] { return reshape_back(shape_); });
}

tensor tensor::squeeze(int64_t d) const {
    check_defined();
    d = wrap_axis(d, dim());
    ISTHMUS_CHECK(shape_[static_cast<size_t>(d)] == 1, value_error, "squeeze: axis ", d,
                  " has size ", shape_[static_cast<size_t>(d)], ", not 1");
    tensor r = *this;
    r.shape_.erase(r.shape_.begin() + d);
    r.strides_.erase(r.strides_.begin() + d);
    return autograd::finish_view(*this, std::move(r), "squeeze",
                                 [&] { return reshape_back(shape_); });
}

tensor tensor::unsqueeze(int64_t d) const {
    check_defined();
    d = wrap_axis(d, dim() + 1);
    ISTHMUS_CHECK(dim() < max_rank, value_error, "unsqueeze: rank would exceed ", max_rank);
    tensor r = *this;
    int64_t st = d < dim() ? strides_[static_cast<size_t>(d)] * shape_[static_cast<size_t>(d)] : 1;
    r.shape_.insert(r.shape_.begin() + d, 1);
    r.strides_.insert(r.strides_.begin() + d, st);
    return autograd::finish_view(*this, std::move(r), "unsqueeze",
                                 [&] { return reshape_back(shape_); });
}

tensor tensor::expand(const shape_t& shape) const {
    check_defined();
    checked_numel(shape, itemsize(), "expand");
    ISTHMUS_CHECK(shape.size() >= shape_.size(), value_error, "cannot broadcast ",
                  shape_str(shape_), " to ", shape_str(shape), " (fewer dimensions)");
    const size_t lead = shape.size() - shape_.size();
    tensor r = *this;
    r.shape_ = shape;
    r.strides_.assign(shape.size(), 0);
    for (size_t i = 0; i < shape_.size(); ++i) {
        int64_t from = shape_[i], to = shape[lead + i];
        ISTHMUS_CHECK(from == to || from == 1, value_error, "cannot broadcast ", shape_str(shape_),
                      " to ", shape_str(shape), " (dimension ", i, ": ", from, " vs ", to, ")");
        r.strides_[lead + i] = from == to ? strides_[i] : 0;
    }
    // See Note [read-only broadcast views]: a view that repeats elements marks itself and every
    // view taken from it read-only (E[0, 0] = 5 would otherwise write B[0] through E[1, 0]).
    if (!r.is_writable()) r.read_only_ = true;
    return autograd::finish_view(*this, std::move(r), "expand", [&] {
        return autograd::backward_fn([in = shape_](const tensor& g, const autograd::tensor_list&) {
            return autograd::tensor_list{autograd::sum_to(g, in)};
        });
    });
}

tensor tensor::flatten() const {
    return reshape({-1});
}

tensor tensor::view_as(isthmus::dtype dt) const {
    check_defined();
    ISTHMUS_CHECK(isthmus::itemsize(dt) == itemsize(), type_error, "view_as: ", dtype_, " (",
                  itemsize(), " bytes) cannot be viewed as ", dt, " (", isthmus::itemsize(dt),
                  " bytes)");
    // See Note [bool bytes]: a bool view of other bytes could hold values other than 0 and 1,
    // and a byte view of bool storage could write them.
    ISTHMUS_CHECK(dt == dtype_ || (dt != dtype::bool_ && dtype_ != dtype::bool_), type_error,
                  "view_as: ", dtype_, " cannot be viewed as ", dt,
                  ": bool storage holds only the bytes 0 and 1; convert instead (to(", dt,
                  "), or a comparison such as x != 0 for a bool result)");
    tensor r = *this;
    r.dtype_ = dt;
    if (has_autograd()) [[unlikely]] { // reinterpreted bits have no derivative
        r.autograd_.reset();
        if (autograd::any_requires_grad({this}))
            autograd::record_not_differentiable("view_as", {this}, r);
    }
    return r;
}

} // namespace isthmus
