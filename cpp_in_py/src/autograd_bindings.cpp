// Autograd in Python beside the qvalue attributes (qvalue/autograd.cpp): the grad_fn nodes, grad
// mode and q.autograd.grad.
#include "bindings.hpp"
#include "qvalue/qvalue.hpp"

#include "isthmus/autograd.hpp"

#include <pybind11/stl.h>

#include <vector>

namespace isthmus::pymod {

namespace {

/// One tensor or a sequence of them (None entries allowed when `allow_none`).
autograd::tensor_list tensor_list_of(py::handle h, const char* what, bool allow_none) {
    auto one = [&](py::handle x) {
        if (allow_none) return optional_tensor(x, what);
        const value* p = qvalue_ptr(x);
        ISTHMUS_CHECK(p && p->is_tensor(), type_error, what, ": expected tensor qvalues, got ",
                      type_name(x));
        return p->as_tensor();
    };
    if (qvalue_ptr(h) || h.is_none()) return {one(h)};
    ISTHMUS_CHECK(py::isinstance<py::sequence>(h), type_error, what,
                  ": expected a tensor or a sequence of tensors, got ", type_name(h));
    autograd::tensor_list out;
    for (py::handle x : h) out.push_back(one(x));
    return out;
}

} // namespace

void bind_autograd(py::module_& m) {
    py::class_<autograd::node, std::shared_ptr<autograd::node>>(
        m, "_GradFn", "The recorded op that made a tensor (its grad_fn).")
        .def("name", &autograd::node::name, "The op's name.")
        .def_property_readonly(
            "next_functions",
            [](const autograd::node& n) {
                py::list out;
                for (const auto& e : n.next_edges)
                    out.append(py::make_tuple(e.fn ? py::cast(e.fn) : py::none(), e.input_nr));
                return py::tuple(out);
            },
            "(node or None, input number) for each input, as torch's next_functions.")
        .def("__repr__", [](const autograd::node& n) { return "<grad_fn " + n.name() + ">"; });

    m.def("is_grad_enabled", &autograd::is_grad_enabled,
          "True while ops are recorded (per thread).");
    m.def("_set_grad_enabled", &autograd::set_grad_enabled, py::arg("mode"),
          "Turns recording on or off for this thread (q.no_grad / q.enable_grad use it).");
    m.def(
        "_autograd_grad",
        [](py::handle outputs, py::handle inputs, py::handle grad_outputs, bool retain_graph,
           bool create_graph, bool allow_unused) {
            const auto outs = tensor_list_of(outputs, "grad: outputs", false);
            const auto ins = tensor_list_of(inputs, "grad: inputs", false);
            autograd::tensor_list gouts;
            if (!grad_outputs.is_none())
                gouts = tensor_list_of(grad_outputs, "grad: grad_outputs", true);
            autograd::tensor_list r;
            {
                native_section nogil;
                r = autograd::grad(outs, ins, gouts, retain_graph, create_graph, allow_unused);
            }
            py::list out;
            for (const tensor& g : r)
                out.append(g.defined() ? result_out(g, result_form::tensor) : py::none());
            return py::tuple(out);
        },
        py::arg("outputs"), py::arg("inputs"), py::arg("grad_outputs") = py::none(),
        py::arg("retain_graph") = false, py::arg("create_graph") = false,
        py::arg("allow_unused") = false, "See q.autograd.grad.");
}

} // namespace isthmus::pymod
