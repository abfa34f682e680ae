// qvalue operators and ops: arithmetic, comparisons, in-place forms, reductions.
#include "qvalue/qvalue.hpp"

#include "isthmus/ops/elementwise.hpp"
#include "isthmus/ops/indexing.hpp"
#include "isthmus/ops/linalg.hpp"
#include "isthmus/ops/reduce.hpp"

#include <pybind11/numpy.h>

#include <optional>
#include <string_view>

namespace isthmus::pymod {

// Note [operands]
// ~~~~~~~~~~~~~~~
// The other operand of a qvalue operator may be a qvalue, a Python number, a NumPy scalar, a NumPy
// array, a DLPack producer (a torch tensor) or a list. Python numbers and scalar qvalues are *weak*
// scalars (NEP 50: the tensor's dtype wins within its kind), as Quasar's scalars are numbers
// written in code; NumPy scalars are strong (0-d tensors of their dtype), as in NumPy 2, and so are
// 0-d torch tensors. Arrays and torch tensors are shared without a copy where possible (asvalue);
// lists convert as value() does. Anything else gives NotImplemented, so Python tries the other
// operand's reflected method or raises TypeError.
namespace {

// An object that is none of the known kinds but offers its memory or an array (the buffer
// protocol, __array__, __array_interface__) and does not opt out of NumPy's operators.
bool takes_array_protocol(py::handle obj) {
    PyObject* o = obj.ptr();
    if (PyUnicode_Check(o) || PyBytes_Check(o)) return false;
    static PyObject* const ufunc = PyUnicode_InternFromString("__array_ufunc__");
    static PyObject* const array = PyUnicode_InternFromString("__array__");
    static PyObject* const interface = PyUnicode_InternFromString("__array_interface__");
    PyObject* opt = PyObject_GetAttr(reinterpret_cast<PyObject*>(Py_TYPE(o)), ufunc);
    if (!opt) {
        PyErr_Clear();
    } else {
        const bool opted_out = opt == Py_None;
        Py_DECREF(opt);
        if (opted_out) return false;
    }
    return PyObject_CheckBuffer(o) || PyObject_HasAttr(o, array) == 1 ||
           PyObject_HasAttr(o, interface) == 1;
}

} // namespace

bool to_operand(py::handle obj, operand& out) {
    if (const value* p = qvalue_ptr(obj)) {
        const value& v = *p;
        if (v.is_scalar()) {
            out.is_scalar = true;
            out.s = v.as_scalar();
            return true;
        }
        if (!v.is_tensor()) return false;
        out.borrow(v.as_tensor());
        return true;
    }
    PyObject* o = obj.ptr();
    if (PyBool_Check(o) || PyLong_Check(o)) {
        out.is_scalar = true;
        out.python_number = true;
        out.s = scalar_from_py(obj, std::nullopt);
        return true;
    }
    if ((PyFloat_Check(o) || PyComplex_Check(o)) && !is_numpy_scalar(obj)) {
        // Note [python numbers at full precision]
        // ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
        // A Python float is a double. Read at the `scalar` precision (float32 by default) it lost
        // its low bits before a float64 tensor saw it: float64 x + 0.1 added 0.100000001490116. As
        // a weak scalar only its kind counts for the result's dtype (NEP 50), so it is kept exact;
        // where it meets only other scalars, scalar_precision() rounds it as before.
        out.is_scalar = true;
        out.python_number = true;
        out.s = PyFloat_Check(o)
                    ? scalar(PyFloat_AS_DOUBLE(o))
                    : scalar(complex128_t(PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o)));
        return true;
    }
    if (is_py_number(obj)) { // a NumPy scalar: strong
        out.set(scalar_from_py(obj, std::nullopt).to_tensor());
        return true;
    }
    // Arrays, torch tensors and other DLPack producers, lists and tuples, buffers and objects
    // with NumPy's array protocols: the inbound rule (Note [inbound rule]). Other objects, and
    // those that opt out of NumPy's operators (`__array_ufunc__ = None`, as NumPy honours), are
    // left to Python: NotImplemented, so their reflected method runs.
    if (py::isinstance<py::array>(obj) || is_dlpack_producer(obj) ||
        py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj) ||
        takes_array_protocol(obj)) {
        value v = value_in(obj, {copy_policy::if_needed, std::nullopt, "operator"});
        if (!v.is_tensor()) return false; // a cell (ragged or holding strings)
        out.set(v.as_tensor());           // owned: `v` dies on return (Note [operand lifetime])
        return true;
    }
    return false;
}

namespace {

// Note [small ops keep the GIL]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Releasing and re-taking the GIL costs about as much as a whole 1k-element add, and no other
// thread gets meaningful work done in that window, so ops whose output is known to be small run
// with the GIL held (NumPy's ufuncs do the same below a size threshold). They are still counted as
// native sections, so _native_stats() reports every op. Broadcasting two tensors of different
// shapes can make a large output from small inputs, so only same-shape and tensor-with-scalar ops
// qualify.
constexpr int64_t keep_gil_below = 8192; // elements

class op_section {
public:
    explicit op_section(bool small) {
        if (!small) {
            released_.emplace();
            return;
        }
        native_stats().enter_holding_gil(); // counted as a native section, GIL kept
    }
    op_section(const op_section&) = delete;
    op_section& operator=(const op_section&) = delete;

private:
    std::optional<native_section> released_;
};

bool small_binary(const operand& x, const operand& y) {
    if (x.is_scalar && y.is_scalar) return true;
    if (x.is_scalar) return y.t().numel() < keep_gil_below;
    if (y.is_scalar) return x.t().numel() < keep_gil_below;
    return x.t().shape() == y.t().shape() && x.t().numel() < keep_gil_below;
}

// require_init, without building the op's name unless it has to raise.
void require_init_op(std::string_view op) {
    if (!initialized()) require_init(std::string(op).c_str());
}

} // namespace

py::object not_implemented() {
    return py::reinterpret_borrow<py::object>(Py_NotImplemented);
}

py::object wrap_result(tensor r, bool both_scalars) {
    return result_out(std::move(r), both_scalars ? result_form::scalar_if_0d : result_form::tensor);
}

py::object apply_binary(binary_op op, py::handle a, py::handle b) {
    require_init_op(name(op));
    operand x, y;
    if (!to_operand(a, x) || !to_operand(b, y)) return not_implemented();
    tensor r;
    {
        op_section nogil(small_binary(x, y));
        // See Note [python numbers at full precision]: beside a scalar qvalue, a Python number is
        // the weak side (NEP 50: float32 scalar + 2 stays float32); two Python numbers (module
        // functions) take the `scalar` precision.
        if (x.is_scalar && y.is_scalar && x.python_number != y.python_number)
            r = x.python_number ? binary(op, x.s, y.s.to_tensor())
                                : binary(op, x.s.to_tensor(), y.s);
        else if (x.is_scalar && y.is_scalar && x.python_number) // the higher kind leads
            r = kind_of(x.s.type()) >= kind_of(y.s.type())      // bool < int < float < complex
                    ? binary(op, at_scalar_precision(x.s).to_tensor(), y.s)
                    : binary(op, x.s, at_scalar_precision(y.s).to_tensor());
        else if (x.is_scalar && y.is_scalar)
            r = binary(op, x.s.to_tensor(), y.s.to_tensor());
        else if (x.is_scalar)
            r = binary(op, x.s, y.t());
        else if (y.is_scalar)
            r = binary(op, x.t(), y.s);
        else
            r = binary(op, x.t(), y.t());
    }
    return wrap_result(std::move(r), x.is_scalar && y.is_scalar);
}

py::object apply_inplace(binary_op op, py::handle self, py::handle other) {
    require_init_op(name(op));
    const value* p = qvalue_ptr(self);
    if (!p) return not_implemented();
    const value& v = *p;
    if (!v.is_tensor()) return not_implemented(); // scalars: Python falls back to a = a op b
    operand y;
    if (!to_operand(other, y)) return not_implemented();
    {
        operand x;
        x.borrow(v.as_tensor());
        op_section nogil(small_binary(x, y));
        if (y.is_scalar)
            binary_inplace(op, v.as_tensor(), y.s);
        else
            binary_inplace(op, v.as_tensor(), y.t());
    }
    return py::reinterpret_borrow<py::object>(self);
}

py::object apply_matmul(py::handle a, py::handle b) {
    require_init("matmul");
    operand x, y;
    if (!to_operand(a, x) || !to_operand(b, y)) return not_implemented();
    const tensor ta = x.is_scalar ? x.s.to_tensor() : x.t();
    const tensor tb = y.is_scalar ? y.s.to_tensor() : y.t();
    tensor r;
    {
        native_section nogil;
        r = matmul(ta, tb);
    }
    return result_out(std::move(r), result_form::tensor);
}

py::object apply_unary(unary_op op, const value& v) {
    require_init_op(name(op));
    const bool sc = v.is_scalar();
    ISTHMUS_CHECK(sc || v.is_tensor(), type_error, name(op), ": not defined for a ", v.kind_name(),
                  " value");
    const tensor t = sc ? v.as_scalar().to_tensor() : v.as_tensor();
    tensor r;
    {
        op_section nogil(t.numel() < keep_gil_below);
        r = unary(op, t);
    }
    return wrap_result(std::move(r), sc);
}

// Strings compare as strings; everything else elementwise.
namespace {

py::object compare(binary_op op, py::handle a, py::handle b) {
    const value& v = qvalue_ref(a);
    if (v.is_string() || v.is_none() || v.is_cell()) {
        if (op != binary_op::eq && op != binary_op::ne) return not_implemented();
        bool equal;
        if (v.is_string() && py::isinstance<py::str>(b)) {
            Py_ssize_t n = 0;
            const char* p = PyUnicode_AsUTF8AndSize(b.ptr(), &n);
            if (!p) PyErr_Clear(); // a lone surrogate: no UTF-8 form, so equal to no value's text
            equal = p && v.as_string() == std::string_view(p, static_cast<size_t>(n));
        } else if (v.is_string() && is_qvalue(b) && qvalue_ref(b).is_string())
            equal = v.as_string() == qvalue_ref(b).as_string();
        else
            equal = a.is(b);
        return py::bool_(op == binary_op::eq ? equal : !equal);
    }
    return apply_binary(op, a, b);
}

} // namespace

// ---- reductions ----

reduce_axes axes_from_py(py::handle axis) {
    if (axis.is_none()) return {};
    if (PyIndex_Check(axis.ptr()) && !PyBool_Check(axis.ptr()))
        return reduce_axes(int64_from_py(axis, "reduction", "axis"));
    ISTHMUS_CHECK(py::isinstance<py::tuple>(axis) || py::isinstance<py::list>(axis), type_error,
                  "axis must be None, an int or a tuple of ints, got ", type_name(axis));
    shape_t axes;
    for (py::handle a : axis) axes.push_back(int64_from_py(a, "reduction", "axis"));
    return reduce_axes(std::move(axes));
}

namespace {

const tensor& reducible(const value& v, const char* what) {
    require_init(what);
    return tensor_of(v, what);
}

} // namespace

tensor flat_index(tensor r, const tensor& t, bool keepdims) {
    // NumPy: with axis=None and keepdims the index keeps every dimension, each of size 1
    return keepdims ? r.reshape(shape_t(static_cast<size_t>(t.dim()), 1)) : r;
}

py::object reduced(tensor r) {
    return result_out(std::move(r), result_form::scalar_if_0d);
}

namespace {

using reduce_fn = tensor (*)(const tensor&, const reduce_axes&, bool);

void def_reduction(qvalue_class& cls, const char* name, reduce_fn fn, const char* doc) {
    cls.def(
        name,
        [fn, name](const value& v, py::handle axis, bool keepdims) {
            const tensor& t = reducible(v, name);
            const reduce_axes axes = axes_from_py(axis);
            tensor r;
            {
                native_section nogil;
                r = fn(t, axes, keepdims);
            }
            return reduced(std::move(r));
        },
        py::arg("axis") = py::none(), py::arg("keepdims") = false, doc);
}

template <tensor (*Flat)(const tensor&), tensor (*Axis)(const tensor&, int64_t, bool)>
py::object arg_reduce(const value& v, py::handle axis, bool keepdims, const char* what) {
    const tensor& t = reducible(v, what);
    tensor r;
    if (axis.is_none()) {
        native_section nogil;
        r = flat_index(Flat(t), t, keepdims);
    } else {
        const auto ax = int64_from_py(axis, what, "axis");
        native_section nogil;
        r = Axis(t, ax, keepdims);
    }
    return reduced(std::move(r));
}

} // namespace

void bind_operators(py::module_& m) {
    qvalue_class cls(m.attr("qvalue"));
    // NumPy defers `ndarray <op> qvalue` to qvalue's reflected operators (NumPy's binop rule).
    cls.attr("__array_priority__") = 1000;

    struct named_op {
        const char* fwd;
        const char* ref;
        const char* inplace;
        binary_op op;
    };
    static const named_op ops[] = {
        {"__add__", "__radd__", "__iadd__", binary_op::add},
        {"__sub__", "__rsub__", "__isub__", binary_op::sub},
        {"__mul__", "__rmul__", "__imul__", binary_op::mul},
        {"__truediv__", "__rtruediv__", "__itruediv__", binary_op::div},
        {"__floordiv__", "__rfloordiv__", "__ifloordiv__", binary_op::floor_div},
        {"__mod__", "__rmod__", "__imod__", binary_op::mod},
        {"__pow__", "__rpow__", "__ipow__", binary_op::pow},
        {"__and__", "__rand__", "__iand__", binary_op::bit_and},
        {"__or__", "__ror__", "__ior__", binary_op::bit_or},
        {"__xor__", "__rxor__", "__ixor__", binary_op::bit_xor},
        {"__lshift__", "__rlshift__", "__ilshift__", binary_op::shift_left},
        {"__rshift__", "__rrshift__", "__irshift__", binary_op::shift_right},
    };
    for (const named_op& o : ops) {
        const binary_op op = o.op;
        cls.def(
            o.fwd, [op](py::handle a, py::handle b) { return apply_binary(op, a, b); },
            py::is_operator());
        cls.def(
            o.ref, [op](py::handle a, py::handle b) { return apply_binary(op, b, a); },
            py::is_operator());
        cls.def(
            o.inplace, [op](py::handle a, py::handle b) { return apply_inplace(op, a, b); },
            py::is_operator());
    }
    cls.def(
        "__matmul__", [](py::handle a, py::handle b) { return apply_matmul(a, b); },
        py::is_operator());
    cls.def(
        "__rmatmul__", [](py::handle a, py::handle b) { return apply_matmul(b, a); },
        py::is_operator());

    static const std::pair<const char*, binary_op> comparisons[] = {
        {"__eq__", binary_op::eq}, {"__ne__", binary_op::ne}, {"__lt__", binary_op::lt},
        {"__le__", binary_op::le}, {"__gt__", binary_op::gt}, {"__ge__", binary_op::ge},
    };
    for (const auto& [dunder, op] : comparisons)
        cls.def(
            dunder, [op = op](py::handle a, py::handle b) { return compare(op, a, b); },
            py::is_operator());
    cls.attr("__hash__") = py::none(); // mutable and elementwise ==, like ndarray

    cls.def("__neg__", [](const value& v) { return apply_unary(unary_op::neg, v); });
    cls.def("__pos__", [](const value& v) { return qvalue_of(v); });
    cls.def("__abs__", [](const value& v) { return apply_unary(unary_op::abs, v); });
    cls.def(
        "__invert__", [](const value& v) { return apply_unary(unary_op::bit_not, v); },
        "~A: logical not for bool, bitwise not for integers.");
    m.def(
        "not_", [](py::handle a) { return apply_unary(unary_op::logical_not, asvalue(a)); },
        py::arg("value"), "Quasar's !A: elementwise logical not (a bool tensor).");

    // ---- reductions ----
    def_reduction(cls, "sum", &isthmus::sum, "Sum over `axis` (None: all), as NumPy.");
    def_reduction(cls, "prod", &isthmus::prod, "Product over `axis`, as NumPy.");
    def_reduction(cls, "mean", &isthmus::mean, "Mean over `axis`, as NumPy.");
    def_reduction(cls, "min", &isthmus::min, "Minimum over `axis`, as NumPy.");
    def_reduction(cls, "max", &isthmus::max, "Maximum over `axis`, as NumPy.");
    def_reduction(cls, "any", &isthmus::any, "True where any element over `axis` is non-zero.");
    def_reduction(cls, "all", &isthmus::all, "True where every element over `axis` is non-zero.");
    cls.def(
        "var",
        [](const value& v, py::handle axis, bool keepdims, int64_t ddof) {
            const tensor& t = reducible(v, "var");
            const reduce_axes axes = axes_from_py(axis);
            tensor r;
            {
                native_section nogil;
                r = isthmus::var(t, axes, keepdims, ddof);
            }
            return reduced(std::move(r));
        },
        py::arg("axis") = py::none(), py::arg("keepdims") = false, py::arg("ddof") = 0,
        "Variance over `axis`, as NumPy.");
    cls.def(
        "std",
        [](const value& v, py::handle axis, bool keepdims, int64_t ddof) {
            const tensor& t = reducible(v, "std");
            const reduce_axes axes = axes_from_py(axis);
            tensor r;
            {
                native_section nogil;
                r = isthmus::std_(t, axes, keepdims, ddof);
            }
            return reduced(std::move(r));
        },
        py::arg("axis") = py::none(), py::arg("keepdims") = false, py::arg("ddof") = 0,
        "Standard deviation over `axis`, as NumPy.");
    cls.def(
        "argmin",
        [](const value& v, py::handle axis, bool keepdims) {
            return arg_reduce<&isthmus::argmin, &isthmus::argmin>(v, axis, keepdims, "argmin");
        },
        py::arg("axis") = py::none(), py::arg("keepdims") = false,
        "Index of the minimum (flat when axis is None), as NumPy.");
    cls.def(
        "argmax",
        [](const value& v, py::handle axis, bool keepdims) {
            return arg_reduce<&isthmus::argmax, &isthmus::argmax>(v, axis, keepdims, "argmax");
        },
        py::arg("axis") = py::none(), py::arg("keepdims") = false,
        "Index of the maximum (flat when axis is None), as NumPy.");
}

} // namespace isthmus::pymod
