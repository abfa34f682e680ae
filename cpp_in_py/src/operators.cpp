// qvalue operators and ops: arithmetic, comparisons, in-place forms, reductions, advanced indexing.
#include "bindings.hpp"

#include "isthmus/ops/elementwise.hpp"
#include "isthmus/ops/indexing.hpp"
#include "isthmus/ops/linalg.hpp"
#include "isthmus/ops/reduce.hpp"

#include <pybind11/numpy.h>

#include <optional>
#include <string_view>

namespace isthmus::pymod {

// Note [operands]: the other operand of a qvalue operator may be a qvalue, a Python number, a
// NumPy scalar, a NumPy array, a DLPack producer (a torch tensor) or a list. Python numbers and
// scalar qvalues are *weak* scalars (NEP 50: the tensor's dtype wins within its kind), as
// Quasar's scalars are numbers written in code; NumPy scalars are strong (0-d tensors of their
// dtype), as in NumPy 2, and so are 0-d torch tensors. Arrays and torch tensors are shared
// without a copy where possible (asvalue); lists convert as value() does. Anything else gives
// NotImplemented, so Python tries the other operand's reflected method or raises TypeError.
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
    if (PyBool_Check(o) || PyLong_Check(o) ||
        ((PyFloat_Check(o) || PyComplex_Check(o)) && !is_numpy_scalar(obj))) {
        out.is_scalar = true;
        out.s = scalar_from_py(obj, std::nullopt);
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

// Note [small ops keep the GIL]: releasing and re-taking the GIL costs about as much as a whole
// 1k-element add, and no other thread gets meaningful work done in that window, so ops whose
// output is known to be small run with the GIL held (NumPy's ufuncs do the same below a size
// threshold). They are still counted as native sections, so _native_stats() reports every op.
// Broadcasting two tensors of different shapes can make a large output from small inputs, so
// only same-shape and tensor-with-scalar ops qualify.
constexpr int64_t keep_gil_below = 8192; // elements

class op_section {
public:
    explicit op_section(bool small) {
        if (!small) {
            released_.emplace();
            return;
        }
        native_counters& c = native_stats();
        c.entered.fetch_add(1, std::memory_order_relaxed);
        const int now = c.active.fetch_add(1, std::memory_order_relaxed) + 1;
        int seen = c.max_active.load(std::memory_order_relaxed);
        while (now > seen &&
               !c.max_active.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
        }
    }
    ~op_section() {
        if (!released_) native_stats().active.fetch_sub(1, std::memory_order_relaxed);
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
        if (x.is_scalar && y.is_scalar)
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
        if (v.is_string() && py::isinstance<py::str>(b))
            equal = v.as_string() == b.cast<std::string>();
        else if (v.is_string() && is_qvalue(b) && qvalue_ref(b).is_string())
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
    ISTHMUS_CHECK(v.is_tensor(), type_error, what, " needs a tensor value, this is a ",
                  v.kind_name());
    return v.as_tensor();
}

} // namespace

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
        r = Flat(t);
    } else {
        const auto ax = int64_from_py(axis, what, "axis");
        native_section nogil;
        r = Axis(t, ax, keepdims);
    }
    return reduced(std::move(r));
}

// ---- indexing ----

// Note [Python subscripts]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// A Python key becomes the core's index_items once, here, and the core applies NumPy's rules
// (Note [NumPy's subscript rules] in core/src/ops/indexing_parse.cpp) for basic and advanced
// indexing alike. The conversion follows NumPy 2's prepare_index item by item:
// - a tuple (or tuple subclass) is one item per entry; anything else, lists included, is one
//   item (NumPy 2: a list is always an index array);
// - None, Ellipsis and slices as they are (huge slice bounds clamp as in Python; a float bound
//   is a TypeError here, where NumPy raises it once the key's structure is checked);
// - Python and NumPy bools are 0-d masks; a qvalue or NumPy array is an index array as it is
//   (a 0-d integer one acts as an integer);
// - anything else with __index__ (int, NumPy integers) is an integer: one outside int64 raises
//   IndexError, as it is out of bounds for any axis (NumPy raises OverflowError for
//   [2**63, 2**64) and IndexError beyond);
// - everything else goes through np.asarray (DLPack producers through DLPack): an empty result
//   is an empty integer array (NumPy's rule for `A[[]]`), and one that is neither integer nor
//   bool raises IndexError.
// An assigned list or tuple converts to the target's dtype directly (np.asarray with it), so
// its numbers are cast once, with NumPy's checks; without index arrays it may have no more
// dimensions than the indexed view (NumPy's depth limit for sequences).

const char* const not_an_index =
    "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
    "boolean arrays are valid indices";

// One bound of a slice, clamped to int64 as Python's slice.indices does; a zero step is left
// for the core to refuse in NumPy's order (Note [NumPy's subscript rules]).
std::optional<int64_t> slice_bound(PyObject* b) {
    if (b == Py_None) return std::nullopt;
    if (!PyIndex_Check(b))
        throw py::type_error("slice indices must be integers or None or have an __index__ method");
    const Py_ssize_t v = PyNumber_AsSsize_t(b, nullptr); // clamps instead of overflowing
    if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
    return static_cast<int64_t>(v);
}

// A Python int as an index item.
index_item integer_item(py::handle n) {
    int overflow = 0;
    const long long i = PyLong_AsLongLongAndOverflow(n.ptr(), &overflow);
    if (i == -1 && PyErr_Occurred()) throw py::error_already_set();
    ISTHMUS_CHECK(overflow == 0, index_error, "index ", py::str(n).cast<std::string>(),
                  " is out of bounds: an index must fit in int64");
    return index_item(static_cast<int64_t>(i));
}

// The index array an array-like gives (np.asarray or DLPack; NumPy's PyArray_FromAny step).
index_item array_item(py::handle it) {
    tensor x;
    if (is_dlpack_producer(it)) {
        x = tensor_from_dlpack(it, copy_policy::if_needed);
    } else {
        py::object arr = numpy().attr("asarray")(it);
        const auto kind = arr.attr("dtype").attr("kind").cast<std::string>();
        const bool empty = arr.attr("size").cast<int64_t>() == 0;
        ISTHMUS_CHECK(empty || kind == "b" || kind == "i" || kind == "u", index_error,
                      not_an_index);
        x = tensor_from_array(arr, copy_policy::if_needed);
    }
    // Only an ndarray or a qvalue keeps its dtype when empty (`A[[]]` is an empty int index).
    if (x.numel() == 0 && x.dtype() != dtype::int64) x = x.to(dtype::int64);
    ISTHMUS_CHECK(is_integer(x.dtype()) || x.dtype() == dtype::bool_, index_error, not_an_index);
    return index_item(std::move(x));
}

bool is_numpy_bool(py::handle h) {
    static py::object* bool_type = new py::object(numpy().attr("bool_"));
    return PyObject_TypeCheck(h.ptr(), reinterpret_cast<PyTypeObject*>(bool_type->ptr()));
}

index_item index_item_from_py(py::handle it) {
    PyObject* o = it.ptr();
    if (o == Py_None) return index_item(newaxis);
    if (o == Py_Ellipsis) return index_item(ellipsis);
    if (PyBool_Check(o)) return index_item(o == Py_True);
    if (PyLong_Check(o)) return integer_item(it);
    if (PySlice_Check(o)) {
        const auto* sl = reinterpret_cast<PySliceObject*>(o);
        return index_item(
            index_slice(slice_bound(sl->start), slice_bound(sl->stop), slice_bound(sl->step)));
    }
    if (const value* p = qvalue_ptr(it)) {
        if (p->is_tensor()) return index_item(p->as_tensor());
        ISTHMUS_CHECK(p->is_scalar(), index_error, not_an_index, ", got a ", p->kind_name(),
                      " value");
        const scalar& s = p->as_scalar();
        if (s.type() == dtype::bool_) return index_item(s.to<bool>());
        ISTHMUS_CHECK(is_integer(s.type()), index_error, not_an_index);
        if (s.type() == dtype::uint64) return index_item(s.to<uint64_t>());
        return index_item(s.to<int64_t>());
    }
    if (py::isinstance<py::array>(it)) {
        const auto kind = it.attr("dtype").attr("kind").cast<std::string>();
        ISTHMUS_CHECK(kind == "b" || kind == "i" || kind == "u", index_error,
                      "arrays used as indices must be of integer (or boolean) type, got ",
                      py::str(it.attr("dtype")).cast<std::string>());
        return index_item(tensor_from_array(it, copy_policy::if_needed));
    }
    if (is_numpy_bool(it)) return index_item(PyObject_IsTrue(o) == 1);
    if (PyIndex_Check(o)) { // NumPy integers and anything else with __index__
        auto n = py::reinterpret_steal<py::object>(PyNumber_Index(o));
        if (n) return integer_item(n);
        PyErr_Clear(); // not a single integer after all (a torch tensor of many elements)
    }
    return array_item(it);
}

// The index items of a key (Note [Python subscripts]).
std::vector<index_item> index_items(py::handle key) {
    std::vector<index_item> items;
    if (PyTuple_Check(key.ptr())) {
        items.reserve(static_cast<size_t>(PyTuple_GET_SIZE(key.ptr())));
        bool ellipsis_seen = false;
        for (py::handle it : py::reinterpret_borrow<py::tuple>(key)) {
            // NumPy stops at a second ellipsis, before converting the items after it.
            if (it.ptr() == Py_Ellipsis) {
                ISTHMUS_CHECK(!ellipsis_seen, index_error,
                              "an index can only have a single ellipsis ('...')");
                ellipsis_seen = true;
            }
            items.push_back(index_item_from_py(it));
        }
    } else {
        items.push_back(index_item_from_py(key));
    }
    return items;
}

// Whether an item is an index array or a mask: advanced indexing, a copy (work worth
// releasing the GIL for).
bool has_index_arrays(const std::vector<index_item>& items) {
    for (const index_item& it : items)
        if (it.type() == index_item::kind::tensor &&
            (it.tensor().dim() > 0 || it.tensor().dtype() == dtype::bool_))
            return true;
    return false;
}

// The value assigned through a subscript (Note [Python subscripts]). The key's own errors
// come first, as in NumPy: a value that does not convert raises only for a valid key.
value assigned_through(const tensor& t, const std::vector<index_item>& items, py::handle item) {
    if (!(PyList_Check(item.ptr()) || PyTuple_Check(item.ptr())) || t.dtype() == dtype::bfloat16) {
        try {
            return assigned_value(item, t.dtype());
        } catch (...) {
            (void)index_shape(t, items);
            throw;
        }
    }
    const auto depth = static_cast<int64_t>(index_shape(t, items).size());
    const bool limited = !has_index_arrays(items);
    auto check_depth = [&](int64_t ndim) {
        ISTHMUS_CHECK(!limited || ndim <= depth, value_error,
                      "setting an array element with a sequence. The requested array would "
                      "exceed the maximum number of dimension of ",
                      depth);
    };
    py::object arr;
    try {
        arr = numpy().attr("asarray")(item, numpy_dtype(t.dtype()));
    } catch (py::error_already_set&) {
        // NumPy finds the shape before it converts the numbers: too deep wins.
        if (limited) {
            int64_t ndim = 0;
            try {
                ndim = numpy().attr("ndim")(item).cast<int64_t>();
            } catch (py::error_already_set&) {
            }
            check_depth(ndim);
        }
        throw;
    }
    check_depth(arr.attr("ndim").cast<int64_t>());
    return value(tensor_from_array(arr, copy_policy::if_needed));
}

} // namespace

py::object tensor_getitem(const tensor& t, py::handle key) {
    const std::vector<index_item> items = index_items(key);
    tensor r;
    if (has_index_arrays(items)) {
        native_section nogil;
        r = index(t, items);
    } else {
        r = index(t, items); // a view: cheap, no reason to release the GIL
    }
    // All integers, one per dimension: a scalar, as NumPy.
    return result_out(std::move(r), is_full_integer_index(items, t.dim())
                                        ? result_form::scalar_if_0d
                                        : result_form::tensor);
}

void tensor_setitem(const tensor& t, py::handle key, py::handle item) {
    const std::vector<index_item> items = index_items(key);
    const value src = assigned_through(t, items, item);
    ISTHMUS_CHECK(src.is_scalar() || src.is_tensor(), type_error,
                  "index assignment needs a number or a tensor, got a ", src.kind_name());
    native_section nogil;
    if (src.is_scalar())
        index_put(t, items, src.as_scalar());
    else
        index_put(t, items, src.as_tensor());
}

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
