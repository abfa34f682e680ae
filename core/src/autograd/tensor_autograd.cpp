// tensor's autograd methods: requires_grad, grad, grad_fn, retain_grad, backward, detach.
#include "autograd/node_impl.hpp"

#include "isthmus/error.hpp"

namespace isthmus {

using autograd::meta_access;
using autograd::tensor_meta;

bool tensor::requires_grad() const noexcept {
    return autograd::requires_grad_of(*this);
}

const tensor& tensor::set_requires_grad(bool on) const {
    check_defined();
    tensor_meta* m = meta_access::get(*this);
    if (m && m->grad_fn) {
        ISTHMUS_CHECK(on, runtime_error,
                      "requires_grad can only be turned off on leaf tensors (this one was made by ",
                      m->grad_fn->name(), "); use detach() for a tensor without the graph");
        return *this;
    }
    if (on) {
        ISTHMUS_CHECK(!is_complex(dtype_), runtime_error,
                      "complex tensors cannot require grad yet (isthmus differentiates real "
                      "floating point dtypes only; got ",
                      dtype_, ")");
        ISTHMUS_CHECK(is_floating(dtype_), runtime_error,
                      "only tensors of floating point dtype can require gradients (got ", dtype_,
                      "); convert first, e.g. astype(float32)");
    }
    if (!on && !m) return *this;
    meta_access::ensure(*this).requires_grad = on;
    return *this;
}

bool tensor::is_leaf() const noexcept {
    const tensor_meta* m = meta_access::get(*this);
    return !m || !m->grad_fn;
}

tensor tensor::grad() const {
    const tensor_meta* m = meta_access::get(*this);
    return m ? m->grad : tensor();
}

void tensor::set_grad(const tensor& g) const {
    check_defined();
    if (!g.defined()) {
        if (tensor_meta* m = meta_access::get(*this)) m->grad = tensor();
        return;
    }
    ISTHMUS_CHECK(g.shape() == shape_, value_error, "assigned grad has shape ",
                  shape_str(g.shape()), ", the tensor has shape ", shape_str(shape_));
    ISTHMUS_CHECK(g.dtype() == dtype_, type_error, "assigned grad has dtype ", g.dtype(),
                  ", the tensor has dtype ", dtype_);
    ISTHMUS_CHECK(g.location() == location(), value_error,
                  "assigned grad is on another device than the tensor");
    meta_access::ensure(*this).grad = g;
}

std::shared_ptr<autograd::node> tensor::grad_fn() const noexcept {
    const tensor_meta* m = meta_access::get(*this);
    return m ? m->grad_fn : nullptr;
}

void tensor::retain_grad() const {
    tensor_meta* m = meta_access::get(*this);
    ISTHMUS_CHECK(m && (m->requires_grad || m->grad_fn), runtime_error,
                  "retain_grad() on a tensor that does not require grad");
    if (!m->grad_fn || m->retains_grad) return; // leaves keep their grad anyway
    m->retains_grad = true;
    m->grad_fn->retained.push_back({m->output_nr, meta_access::shared(*this)});
}

void tensor::backward() const {
    autograd::backward({*this}, {}, false, false);
}

void tensor::backward(const tensor& gradient, bool retain_graph, bool create_graph) const {
    autograd::backward({*this}, {gradient}, retain_graph, create_graph);
}

tensor tensor::detach() const {
    check_defined();
    return meta_access::plain(*this);
}

} // namespace isthmus
