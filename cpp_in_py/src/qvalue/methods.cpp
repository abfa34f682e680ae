// qvalue methods in NumPy's spelling: reshape, transpose/T, squeeze, flatten, cumsum, clip, ...
#include "qvalue/qvalue.hpp"

#include "isthmus/ops/creation.hpp"
#include "isthmus/ops/indexing.hpp"
#include "isthmus/ops/linalg.hpp"
#include "isthmus/ops/shape.hpp"

#include <algorithm>
#include <functional>

namespace isthmus::pymod {

namespace {

const tensor& self_tensor(const value& v, const char* what) {
    require_init(what);
    return tensor_of(v, what);
}

int64_t index_arg(py::handle v, const char* fn) {
    return int64_from_py(v, fn, "each argument");
}

// NumPy's method convention: ints as varargs (A.reshape(2, 3)) or one sequence
// (A.reshape((2, 3))); negative entries are left to the op (reshape's -1, axis wrapping).
shape_t ints_from_args(const py::args& args, const char* fn) {
    shape_t out;
    if (args.size() == 1 && !PyIndex_Check(args[0].ptr())) {
        ISTHMUS_CHECK(py::isinstance<py::sequence>(args[0]) && !py::isinstance<py::str>(args[0]),
                      type_error, fn, ": expected ints or one sequence of ints, got ",
                      type_name(args[0]));
        for (py::handle x : args[0]) out.push_back(index_arg(x, fn));
        return out;
    }
    for (py::handle x : args) out.push_back(index_arg(x, fn));
    return out;
}

std::optional<int64_t> axis_arg(py::handle axis, const char* fn) {
    if (axis.is_none()) return std::nullopt;
    return index_arg(axis, fn);
}

py::object tensor_value(tensor t) {
    return result_out(std::move(t), result_form::tensor);
}

} // namespace

void bind_qvalue_methods(py::module_& m) {
    qvalue_class cls(m.attr("qvalue"));
    py::module_ mod = py::reinterpret_borrow<py::module_>(m);

    // ---- views ----
    cls.def(
        "reshape",
        [](const value& v, py::args shape) {
            const tensor& t = self_tensor(v, "reshape");
            return tensor_value(t.reshape(ints_from_args(shape, "reshape")));
        },
        "The same elements in a new shape: A.reshape(2, 3) or A.reshape((2, -1)); a view when\n"
        "the strides allow, else a copy.");
    cls.def(
        "view",
        [](const value& v, py::args shape) {
            const tensor& t = self_tensor(v, "view");
            return tensor_value(t.view(ints_from_args(shape, "view")));
        },
        "Like reshape, but always a view: raises ValueError when the strides do not allow one\n"
        "(torch's view).");
    cls.def(
        "transpose",
        [](const value& v, py::args axes) {
            const tensor& t = self_tensor(v, "transpose");
            if (axes.empty() || (axes.size() == 1 && axes[0].is_none())) return tensor_value(t.t());
            return tensor_value(t.permute(ints_from_args(axes, "transpose")));
        },
        "The dimensions reversed (no arguments) or permuted: A.transpose(1, 0, 2); a view.");
    cls.def(
        "permute",
        [](const value& v, py::args dims) {
            const tensor& t = self_tensor(v, "permute");
            return tensor_value(t.permute(ints_from_args(dims, "permute")));
        },
        "Result dimension i is dimension dims[i] (torch's permute); a view.");
    cls.def_property_readonly(
        "T", [](const value& v) { return tensor_value(self_tensor(v, "T").t()); },
        "The dimensions reversed (a view), as NumPy's .T.");
    cls.def(
        "squeeze",
        [](const value& v, py::handle axis) {
            const tensor& t = self_tensor(v, "squeeze");
            if (axis.is_none()) return tensor_value(t.squeeze());
            shape_t axes;
            if (PyIndex_Check(axis.ptr()))
                axes.push_back(index_arg(axis, "squeeze"));
            else
                for (py::handle x : axis) axes.push_back(index_arg(x, "squeeze"));
            for (int64_t& x : axes) x = wrap_axis(x, t.dim());
            std::sort(axes.begin(), axes.end(), std::greater<>());
            tensor r = t;
            for (int64_t x : axes) r = r.squeeze(x);
            return tensor_value(r);
        },
        py::arg("axis") = py::none(),
        "Removes size-1 dimensions (all, or the given ones, which must have size 1); a view.");
    cls.def(
        "unsqueeze",
        [](const value& v, int64_t d) {
            return tensor_value(self_tensor(v, "unsqueeze").unsqueeze(d));
        },
        py::arg("dim"), "Inserts a size-1 dimension at dim (torch's unsqueeze); a view.");
    cls.def(
        "expand",
        [](const value& v, py::args shape) {
            const tensor& t = self_tensor(v, "expand");
            return tensor_value(t.expand(ints_from_args(shape, "expand")));
        },
        "Broadcasts to a larger shape with stride 0 on the new axes (a view; don't write to it).");
    cls.def(
        "flatten",
        [](const value& v) {
            const tensor& t = self_tensor(v, "flatten");
            native_section nogil;
            return value(t.clone().flatten());
        },
        "A 1-d copy of the elements in C order (NumPy's flatten).");
    cls.def(
        "ravel", [](const value& v) { return tensor_value(self_tensor(v, "ravel").flatten()); },
        "The elements as a 1-d tensor: a view when possible (NumPy's ravel).");
    cls.def_property_readonly(
        "real", [](const value& v) { return tensor_value(isthmus::real(self_tensor(v, "real"))); },
        "The real part: a view for complex tensors (writes go through), the tensor itself "
        "otherwise.");
    cls.def_property_readonly(
        "imag", [](const value& v) { return tensor_value(isthmus::imag(self_tensor(v, "imag"))); },
        "The imaginary part: a view for complex tensors, zeros for real ones.");
    cls.def(
        "flip",
        [](const value& v, py::handle axis) {
            const tensor& t = self_tensor(v, "flip");
            if (axis.is_none()) return tensor_value(isthmus::flip(t));
            shape_t axes;
            if (PyIndex_Check(axis.ptr()))
                axes.push_back(index_arg(axis, "flip"));
            else
                for (py::handle x : axis) axes.push_back(index_arg(x, "flip"));
            return tensor_value(isthmus::flip(t, axes));
        },
        py::arg("axis") = py::none(), "Reverses the order along axis (all when None); a view.");

    // ---- computing (methods that mirror module functions) ----
    cls.def(
        "cumsum",
        [](const value& v, py::handle axis) {
            const tensor& t = self_tensor(v, "cumsum");
            const std::optional<int64_t> ax = axis_arg(axis, "cumsum");
            native_section nogil;
            return value(ax ? isthmus::cumsum(t, *ax) : isthmus::cumsum(t));
        },
        py::arg("axis") = py::none(), "Running sum along axis (flattened when None).");
    cls.def(
        "cumprod",
        [](const value& v, py::handle axis) {
            const tensor& t = self_tensor(v, "cumprod");
            const std::optional<int64_t> ax = axis_arg(axis, "cumprod");
            native_section nogil;
            return value(ax ? isthmus::cumprod(t, *ax) : isthmus::cumprod(t));
        },
        py::arg("axis") = py::none(), "Running product along axis (flattened when None).");
    cls.def(
        "clip",
        [mod](py::object self, py::handle lo, py::handle hi) {
            return mod.attr("clip")(self, lo, hi);
        },
        py::arg("min") = py::none(), py::arg("max") = py::none(),
        "Limits values to [min, max] (either may be None), as q.clip.");
    cls.def(
        "round", [](const value& v) { return apply_unary(unary_op::round, v); },
        "Rounds half to even (NumPy's round with decimals=0).");
    cls.def(
        "conj", [](const value& v) { return apply_unary(unary_op::conj, v); },
        "The complex conjugate (a copy).");
    cls.def(
        "dot", [](py::object self, py::handle other) { return apply_matmul(self, other); },
        py::arg("other"), "The matrix product self @ other.");
    cls.def(
        "nonzero", [mod](py::object self) { return mod.attr("nonzero")(self); },
        "A tuple of int64 index tensors of the nonzero elements, one per axis.");
    cls.def(
        "take",
        [mod](py::object self, py::handle indices, py::handle axis) {
            return mod.attr("take")(self, indices, axis);
        },
        py::arg("indices"), py::arg("axis") = py::none(), "Elements at indices along axis.");
    cls.def(
        "repeat",
        [mod](py::object self, py::handle repeats, py::handle axis) {
            return mod.attr("repeat")(self, repeats, axis);
        },
        py::arg("repeats"), py::arg("axis") = py::none(),
        "Repeats each element along axis (flattened when None).");
    cls.def(
        "fill",
        [](const value& v, py::handle x) {
            const tensor& t = self_tensor(v, "fill");
            ISTHMUS_CHECK(is_py_number(x) || (is_qvalue(x) && qvalue_ref(x).is_scalar()),
                          type_error, "fill: expected a number, got ", type_name(x));
            const scalar s =
                is_qvalue(x) ? qvalue_ref(x).as_scalar() : scalar_from_py(x, t.dtype());
            native_section nogil;
            isthmus::fill(t, s);
        },
        py::arg("value"), "Sets every element to value (converted to the tensor's dtype).");
    cls.def(
        "tolist",
        [](const value& v) {
            require_init("tolist");
            return to_py(v).attr("tolist")();
        },
        "The elements as nested Python lists of Python numbers (a copy).");
    cls.def("to", value_to_device, py::arg("device"), py::arg("copy") = false,
            "This value with its data on `device` (\"cpu\", \"cuda\", \"cuda:N\"); see q.to.");
}

} // namespace isthmus::pymod
