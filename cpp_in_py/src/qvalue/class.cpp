// The qvalue class: isthmus::value in Python (attributes, repr, locks, cells, subscripts).
#include "qvalue/qvalue.hpp"

#include "isthmus/ops/creation.hpp"

#include <pybind11/numpy.h>

#include <string>

namespace isthmus::pymod {

namespace {

py::tuple shape_tuple(const shape_t& shape) {
    py::tuple out(shape.size());
    for (size_t i = 0; i < shape.size(); ++i) out[i] = py::int_(shape[i]);
    return out;
}

// The shape of any value that has one: tensors, cells, and scalars (0-d).
const shape_t& shape_of(const value& v) {
    static const shape_t none;
    if (v.is_tensor()) return v.as_tensor().shape();
    if (v.is_cell()) return v.as_cell().shape;
    if (v.is_scalar()) return none;
    ISTHMUS_THROW(type_error, "a ", v.kind_name(), " value has no shape");
}

// NumPy's repr style: `qvalue([1., 2.], dtype=float32)`, continuation lines indented.
std::string repr_of(const value& v) {
    std::string body;
    switch (v.kind()) {
    case value_kind::tensor:
    case value_kind::scalar: {
        const dtype dt = v.is_tensor() ? v.as_tensor().dtype() : v.as_scalar().type();
        std::string text = v.to_string();
        std::string indented;
        for (char c : text) {
            indented += c;
            if (c == '\n') indented += "       "; // len("qvalue(")
        }
        return "qvalue(" + indented + ", dtype=" + std::string(name(dt)) + ")";
    }
    case value_kind::string:
        return "qvalue(" + py::repr(py::str(v.as_string())).cast<std::string>() + ")";
    case value_kind::none:
        return "qvalue(None)";
    case value_kind::cell:
        return "qvalue(cell " + shape_str(v.as_cell().shape) + ": " + v.to_string() + ")";
    case value_kind::object:
        break;
    }
    return "qvalue(<" + v.kind_name() + ">)";
}

// ---- indexing: tensors through tensor_getitem / tensor_setitem (operators.cpp), cells here ----

bool is_int_index(py::handle h) {
    return !PyBool_Check(h.ptr()) && PyIndex_Check(h.ptr()) && !py::isinstance<py::array>(h) &&
           !is_qvalue(h) && !is_dlpack_producer(h);
}

// Cells index flat (C order) with an int, or with one int per dimension.
size_t cell_index(const cell& c, py::handle key) {
    const auto n = static_cast<int64_t>(c.items.size());
    if (is_int_index(key)) {
        int64_t i = key.cast<int64_t>();
        ISTHMUS_CHECK(i >= -n && i < n, index_error, "cell index ", i,
                      " is out of range for a cell of ", n, " elements");
        return static_cast<size_t>(i < 0 ? i + n : i);
    }
    ISTHMUS_CHECK(py::isinstance<py::tuple>(key), type_error,
                  "cells are indexed with integers, got ", type_name(key));
    auto idx = py::reinterpret_borrow<py::tuple>(key);
    ISTHMUS_CHECK(idx.size() == c.shape.size(), index_error, "a cell of shape ", shape_str(c.shape),
                  " needs ", c.shape.size(), " indices, got ", idx.size());
    int64_t flat = 0;
    for (size_t d = 0; d < c.shape.size(); ++d) {
        ISTHMUS_CHECK(is_int_index(idx[d]), type_error, "cells are indexed with integers");
        int64_t i = idx[d].cast<int64_t>();
        ISTHMUS_CHECK(i >= -c.shape[d] && i < c.shape[d], index_error, "cell index ", i,
                      " is out of range for dimension ", d, " of size ", c.shape[d]);
        flat = flat * c.shape[d] + (i < 0 ? i + c.shape[d] : i);
    }
    return static_cast<size_t>(flat);
}

// Note [subscripts of scalar values]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Indexing a tensor down to one element gives a scalar value, and a scalar indexes as a 0-d
// array, as NumPy's scalars do: `s[()]` is s itself, `s[...]` a 0-d tensor, `s[True]` a
// one-element tensor; keys a 0-d array refuses raise its IndexError. The array API standard and
// its test suite rely on it (`a[()]` makes 0-d inputs).
py::object getitem(py::handle self, const value& v, py::handle key) {
    if (v.is_cell()) return qvalue_of(v.as_cell().items[cell_index(v.as_cell(), key)]);
    require_init("indexing");
    if (v.is_scalar()) {
        if (PyTuple_Check(key.ptr()) && PyTuple_GET_SIZE(key.ptr()) == 0)
            return py::reinterpret_borrow<py::object>(self);
        const scalar& s = v.as_scalar();
        return tensor_getitem(full({}, s, s.type()), key);
    }
    return tensor_getitem(tensor_of(v, "indexing"), key);
}

void setitem(const value& v, py::handle key, py::handle item) {
    if (v.is_cell()) {
        const size_t i = cell_index(v.as_cell(), key);
        v.as_cell().set(i, asvalue(item)); // refuses a cycle (Note [cell cycles])
        return;
    }
    require_init("index assignment");
    tensor_setitem(tensor_of(v, "index assignment"), key, item);
}

// The value as one Python number (scalars and one-element tensors).
scalar single_number(const value& v, const char* what) {
    if (v.is_scalar()) return v.as_scalar();
    ISTHMUS_CHECK(v.is_tensor() && v.as_tensor().numel() == 1, type_error, what,
                  ": only scalars and one-element tensors convert to a Python number, this is a ",
                  v.is_tensor() ? "tensor of shape " + shape_str(v.as_tensor().shape())
                                : v.kind_name());
    return scalar_from_tensor(v.as_tensor());
}

lock_mode lock_mode_of(int mode) {
    ISTHMUS_CHECK(mode >= 1 && mode <= 3, value_error, "invalid lock mode ", mode,
                  "; expected LOCK_READ (1), LOCK_WRITE (2) or LOCK_READWRITE (3)");
    return static_cast<lock_mode>(mode);
}

} // namespace

void bind_qvalue(py::module_& m) {
    qvalue_class cls = make_qvalue_type(m); // construction: qvalue(obj, dtype), tp_new

    // ---- what the value is ----
    cls.def_property_readonly(
        "kind", [](const value& v) { return v.kind_name(); },
        "\"tensor\", \"scalar\", \"string\", \"cell\", \"none\" or an object's kind.");
    cls.def_property_readonly(
        "shape", [](const value& v) { return shape_tuple(shape_of(v)); },
        "The sizes, as a tuple (() for scalars).");
    cls.def_property_readonly(
        "ndim", [](const value& v) { return static_cast<int64_t>(shape_of(v).size()); },
        "The number of dimensions.");
    cls.def_property_readonly(
        "dtype",
        [](const value& v) -> py::object {
            if (v.is_tensor()) return dtype_attr(v.as_tensor().dtype());
            if (v.is_scalar()) return dtype_attr(v.as_scalar().type());
            return py::none();
        },
        "The element type as a numpy.dtype (the string \"bfloat16\" for bfloat16; None for "
        "strings, cells and none).");
    cls.def_property_readonly(
        "device",
        [](const value& v) {
            if (!v.is_tensor()) return std::string("cpu");
            return get_resource(v.as_tensor().location()).name();
        },
        "Where the data is now (\"cpu\", \"cuda:0\", ...).");
    cls.def_property_readonly(
        "__cuda_array_interface__", &cuda_array_interface,
        "The CUDA array interface (v3) of a tensor located on a CUDA device, zero-copy: pins the\n"
        "storage to that device for the rest of this qvalue's life; `stream` is isthmus's\n"
        "stream. AttributeError for other values (docs/interop.md).");
    cls.def_property_readonly(
        "nbytes", [](const value& v) { return tensor_of(v, "nbytes").nbytes(); },
        "Bytes of the tensor's elements.");
    cls.def_property_readonly(
        "itemsize", [](const value& v) { return tensor_of(v, "itemsize").itemsize(); },
        "Bytes per element.");
    cls.def(
        "size",
        [](const value& v, py::handle dims) -> py::object {
            const shape_t& s = shape_of(v);
            if (dims.is_none()) return shape_tuple(s);
            const auto rank = static_cast<int64_t>(s.size());
            if (is_int_index(dims))
                return py::int_(s[static_cast<size_t>(wrap_axis(dims.cast<int64_t>(), rank))]);
            shape_t out;
            for (py::handle d : dims)
                out.push_back(s[static_cast<size_t>(wrap_axis(d.cast<int64_t>(), rank))]);
            return shape_tuple(out);
        },
        py::arg("dims") = py::none(),
        "The sizes as a tuple (like the PyQuasar manual's A.size()); one int for an int `dims`, a "
        "tuple for "
        "a list of dims.");
    cls.def(
        "numel", [](const value& v) { return numel_of(shape_of(v)); }, "The number of elements.");
    cls.def(
        "is_contiguous",
        [](const value& v) { return tensor_of(v, "is_contiguous").is_contiguous(); },
        "True for C-order contiguous tensors.");
    cls.def("__len__", [](const value& v) -> int64_t {
        if (v.is_cell()) return static_cast<int64_t>(v.as_cell().items.size());
        if (v.is_string()) return static_cast<int64_t>(v.as_string().size());
        const tensor& t = tensor_of(v, "len()");
        ISTHMUS_CHECK(t.dim() > 0, type_error, "len() of a 0-d tensor");
        return t.size(0);
    });
    // Iteration by __getitem__ (0, 1, ... until IndexError), except where NumPy refuses it: a
    // 0-d tensor would otherwise iterate as empty (its [0] raises IndexError at once), and a
    // scalar, as NumPy's scalars, is not iterable.
    cls.def("__iter__", [](py::handle self) {
        const value& v = qvalue_ref(self);
        ISTHMUS_CHECK(!v.is_scalar(), type_error,
                      "iteration over a 0-d array (a scalar value is not iterable)");
        ISTHMUS_CHECK(!v.is_tensor() || v.as_tensor().dim() > 0, type_error,
                      "iteration over a 0-d array");
        PyObject* it = PySeqIter_New(self.ptr());
        if (!it) throw py::error_already_set();
        return py::reinterpret_steal<py::iterator>(it);
    });

    // ---- text ----
    cls.def("__repr__", &repr_of);
    cls.def("__str__", [](const value& v) { return v.to_string(); });

    // ---- numbers ----
    cls.def("__bool__", [](const value& v) {
        if (v.is_none()) return false;
        if (v.is_string()) return !v.as_string().empty();
        if (v.is_cell()) return !v.as_cell().items.empty();
        if (v.is_tensor())
            ISTHMUS_CHECK(v.as_tensor().numel() == 1, value_error,
                          "the truth value of a tensor with ", v.as_tensor().numel(),
                          " elements is ambiguous; use .any() or .all()");
        return single_number(v, "bool()").to<bool>();
    });
    cls.def("__float__", [](const value& v) {
        const scalar s = single_number(v, "float()");
        ISTHMUS_CHECK(!is_complex(s.type()), type_error, "float(): the value is complex");
        return s.to<double>();
    });
    cls.def("__complex__", [](const value& v) {
        return std::complex<double>(single_number(v, "complex()").to<complex128_t>());
    });
    cls.def("__int__", [](const value& v) -> py::object {
        const scalar s = single_number(v, "int()");
        ISTHMUS_CHECK(!is_complex(s.type()), type_error, "int(): the value is complex");
        if (s.type() == dtype::uint64) return py::int_(s.to<uint64_t>());
        if (is_floating(s.type())) return py::int_(py::float_(s.to<double>()));
        return py::int_(s.to<int64_t>());
    });
    cls.def("__index__", [](const value& v) -> py::object {
        const scalar s = single_number(v, "index");
        ISTHMUS_CHECK(is_integer(s.type()) || is_bool(s.type()), type_error,
                      "only integer values can be used as an index, this one is ", name(s.type()));
        if (s.type() == dtype::uint64) return py::int_(s.to<uint64_t>());
        return py::int_(s.to<int64_t>());
    });
    cls.def(
        "item",
        [](const value& v) -> py::object {
            require_init("item");
            const scalar s = single_number(v, "item()");
            // bfloat16 has no NumPy scalar to ask; it is exact as a Python float
            if (s.type() == dtype::bfloat16) return py::float_(s.to<double>());
            return to_py(value(s)).attr("item")();
        },
        "The single element as a Python number.");

    // ---- indexing and cells ----
    cls.def("__getitem__",
            [](py::handle self, py::handle key) { return getitem(self, qvalue_ref(self), key); });
    cls.def("__setitem__", &setitem);

    // ---- copies and views ----
    cls.def(
        "copy",
        [](const value& v) {
            require_init("copy");
            return value_from_py(py::cast(v), std::nullopt);
        },
        "A copy (tensors: new memory; cells: a new cell sharing the elements).");
    cls.def(
        "astype",
        [](const value& v, py::handle dt) -> value {
            require_init("astype");
            const dtype to = dtype_from_py(dt);
            if (v.is_scalar()) return value(scalar_from_py(to_py(v), to));
            const tensor& t = tensor_of(v, "astype");
            native_section nogil;
            return value(t.to(to, true));
        },
        py::arg("dtype"), "A copy converted to `dtype` (NumPy's astype).");
    cls.def(
        "contiguous",
        [](const value& v) -> value {
            require_init("contiguous");
            const tensor& t = tensor_of(v, "contiguous");
            native_section nogil;
            return value(t.contiguous());
        },
        "This tensor when C-contiguous, else a C-contiguous copy.");

    // ---- memory: the PyQuasar manual's lock/unlock ----
    cls.def(
        "lock",
        [](const value& v, int mode, int resource) {
            require_init("lock");
            const tensor& t = tensor_of(v, "lock()");
            const lock_mode lm = lock_mode_of(mode);
            void* p = nullptr;
            {
                native_section nogil;
                p = t.lock(lm, resource);
            }
            return reinterpret_cast<uintptr_t>(p);
        },
        py::arg("mode"), py::arg("resource") = MEMRESOURCE_CPU,
        "Locks the data on `resource` (MEMRESOURCE_*) for `mode` (LOCK_READ, LOCK_WRITE,\n"
        "LOCK_READWRITE) and returns the address of element 0 as an int (usable with ctypes).\n"
        "The address is valid until the matching unlock(mode, resource).");
    cls.def(
        "_pinned_to",
        [](const value& v) { return tensor_of(v, "_pinned_to").storage()->pinned_to(); },
        "The resource the tensor's storage is pinned to, or -1 (for tests and debugging).");
    cls.def(
        "unlock",
        [](const value& v, int mode, int resource) {
            const tensor& t = tensor_of(v, "unlock()");
            const lock_mode lm = lock_mode_of(mode);
            native_section nogil;
            t.unlock(lm, resource);
        },
        py::arg("mode"), py::arg("resource") = MEMRESOURCE_CPU,
        "Releases a lock taken by lock() with the same arguments.");
}

} // namespace isthmus::pymod
