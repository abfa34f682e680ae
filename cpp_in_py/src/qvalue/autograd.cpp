// qvalue's autograd attributes, torch's names: requires_grad, grad, grad_fn, is_leaf,
// requires_grad_, retain_grad, detach, backward.
#include "qvalue/qvalue.hpp"

#include "isthmus/autograd.hpp"

namespace isthmus::pymod {

tensor optional_tensor(py::handle h, const char* what) {
    if (h.is_none()) return tensor();
    const value* p = qvalue_ptr(h);
    ISTHMUS_CHECK(p && p->is_tensor(), type_error, what, ": expected a tensor qvalue or None, got ",
                  type_name(h));
    return p->as_tensor();
}

namespace {

py::object grad_of(const tensor& t) {
    const tensor g = t.grad();
    if (!g.defined()) return py::none();
    return result_out(g, result_form::tensor);
}

} // namespace

void bind_qvalue_autograd(py::module_& m) {
    qvalue_class cls(m.attr("qvalue"));

    // requires_grad: a property with a setter (torch's A.requires_grad = True).
    py::cpp_function get_rg(
        [](const value& v) { return v.is_tensor() && v.as_tensor().requires_grad(); },
        py::is_method(cls));
    py::cpp_function set_rg(
        [](const value& v, bool on) { tensor_of(v, "requires_grad").set_requires_grad(on); },
        py::is_method(cls));
    py::setattr(
        cls, "requires_grad",
        py::reinterpret_steal<py::object>(PyObject_CallFunctionObjArgs(
            reinterpret_cast<PyObject*>(&PyProperty_Type), get_rg.ptr(), set_rg.ptr(), Py_None,
            py::str("True when gradients flow to this tensor (settable on leaves; "
                    "floating point dtypes only).")
                .ptr(),
            nullptr)));
    py::cpp_function get_grad(
        [](const value& v) -> py::object {
            if (!v.is_tensor()) return py::none();
            const tensor& t = v.as_tensor();
            if (!t.is_leaf() && !t.grad().defined()) {
                if (PyErr_WarnEx(PyExc_UserWarning,
                                 "the .grad of a tensor that is not a leaf is not kept during "
                                 "backward (it is None); call retain_grad() on it first, or use "
                                 "q.autograd.grad",
                                 1) < 0)
                    throw py::error_already_set();
                return py::none();
            }
            return grad_of(t);
        },
        py::is_method(cls));
    py::cpp_function set_grad(
        [](const value& v, py::handle g) {
            tensor_of(v, "grad").set_grad(optional_tensor(g, "grad"));
        },
        py::is_method(cls));
    py::setattr(
        cls, "grad",
        py::reinterpret_steal<py::object>(PyObject_CallFunctionObjArgs(
            reinterpret_cast<PyObject*>(&PyProperty_Type), get_grad.ptr(), set_grad.ptr(), Py_None,
            py::str("The gradient accumulated by backward (None until then; settable, "
                    "None clears it).")
                .ptr(),
            nullptr)));
    cls.def_property_readonly(
        "grad_fn",
        [](const value& v) -> py::object {
            if (!v.is_tensor() || !v.as_tensor().grad_fn()) return py::none();
            return py::cast(v.as_tensor().grad_fn());
        },
        "The recorded op that made this tensor (None for leaves).");
    cls.def_property_readonly(
        "is_leaf", [](const value& v) { return !v.is_tensor() || v.as_tensor().is_leaf(); },
        "True unless the tensor was made by a recorded op.");
    cls.def(
        "requires_grad_",
        [](py::handle self, bool on) {
            tensor_of(*qvalue_ptr(self), "requires_grad_").set_requires_grad(on);
            return py::reinterpret_borrow<py::object>(self);
        },
        py::arg("requires_grad") = true, "Sets requires_grad in place and returns the tensor.");
    cls.def(
        "retain_grad", [](const value& v) { tensor_of(v, "retain_grad").retain_grad(); },
        "Keeps this non-leaf tensor's gradient in .grad during backward.");
    cls.def(
        "detach",
        [](const value& v) {
            return result_out(tensor_of(v, "detach").detach(), result_form::tensor);
        },
        "The same memory without the graph: a tensor that does not require grad.");
    cls.def(
        "backward",
        [](const value& v, py::handle gradient, bool retain_graph, bool create_graph) {
            const tensor t = tensor_of(v, "backward");
            const tensor g = optional_tensor(gradient, "backward");
            native_section nogil;
            autograd::backward({t}, {g}, retain_graph, create_graph);
        },
        py::arg("gradient") = py::none(), py::arg("retain_graph") = false,
        py::arg("create_graph") = false,
        "Accumulates the gradient of this tensor into every leaf that requires grad "
        "(torch's backward). A tensor of more than one element needs `gradient`.");
}

} // namespace isthmus::pymod
