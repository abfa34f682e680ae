// Module functions: value constructors (value, zeros, ones, uninit), Quasar types, size, print.
#include "bindings.hpp"

#include "isthmus/types.hpp"

#include <pybind11/numpy.h>

#include <cstring>

namespace isthmus::pymod {

namespace {

tensor filled(const py::args& sizes, py::handle dt, const char* fn, std::optional<double> fill) {
    require_init(fn);
    const shape_t shape = sizes_from_args(sizes, fn);
    const dtype d = dt.is_none() ? scalar_dtype() : dtype_from_py(dt);
    native_section nogil;
    tensor t = tensor::empty(shape, d, MEMRESOURCE_CPU);
    if (fill) t.fill(*fill);
    return t;
}

// An address given as an int, a ctypes pointer (c_void_p, POINTER(...)) or None (0).
uintptr_t address_from_py(py::handle p, const char* what) {
    if (p.is_none()) return 0;
    PyObject* o = p.ptr();
    if (PyIndex_Check(o) && !PyBool_Check(o)) {
        py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(o));
        ISTHMUS_CHECK(i.cast<py::int_>() >= py::int_(0), value_error, what,
                      " must be a non-negative address");
        return i.cast<uintptr_t>();
    }
    py::module_ ctypes = py::module_::import("ctypes");
    if (py::isinstance(p, ctypes.attr("c_void_p"))) {
        py::object v = p.attr("value");
        return v.is_none() ? 0 : v.cast<uintptr_t>();
    }
    if (py::isinstance(p, ctypes.attr("_Pointer")) || py::isinstance(p, ctypes.attr("Array"))) {
        py::object v = ctypes.attr("cast")(p, ctypes.attr("c_void_p")).attr("value");
        return v.is_none() ? 0 : v.cast<uintptr_t>();
    }
    ISTHMUS_THROW(type_error, what, " must be an address (int) or a ctypes pointer, got ",
                  type_name(p));
}

type_desc type_from_py(py::handle t, const char* fn) {
    if (py::isinstance<type_desc>(t)) return t.cast<type_desc>();
    ISTHMUS_CHECK(py::isinstance<py::str>(t), type_error, fn,
                  ": expected a type name (str) or a qtype, got ", type_name(t));
    return parse_type(text_from_py(t, fn, "the type name"));
}

} // namespace

void bind_functions(py::module_& m) {
    // ---- constructors ----
    m.def(
        "value",
        [](py::handle obj, py::handle dt, bool requires_grad) {
            require_init("value");
            value v = value_from_py(obj, optional_dtype(dt));
            if (!requires_grad) return v;
            // torch.tensor(3.0, requires_grad=True) is a 0-d tensor: so is a number here.
            if (v.is_scalar()) v = value(v.as_scalar().to_tensor());
            ISTHMUS_CHECK(v.is_tensor(), type_error, "value: requires_grad needs numbers, got a ",
                          v.kind_name(), " value");
            v.as_tensor().set_requires_grad(true);
            return v;
        },
        py::arg("obj") = py::none(), py::arg("dtype") = py::none(), py::kw_only(),
        py::arg("requires_grad") = false,
        "A new qvalue holding a copy of `obj`: a qvalue, a number (scalar), a string, a list\n"
        "(nested lists -> tensor; Python floats give the `scalar` dtype, float32 by default),\n"
        "a NumPy array or anything np.asarray accepts. `dtype` converts (str or NumPy dtype).\n"
        "`requires_grad=True` makes it a leaf of autograd (floating point dtypes; a number\n"
        "becomes a 0-d tensor), as torch.tensor does.");
    m.def(
        "zeros",
        [](py::args sizes, py::handle dt) { return value(filled(sizes, dt, "zeros", 0.0)); },
        py::kw_only(), py::arg("dtype") = py::none(),
        "zeros(*sizes, dtype=None)\n--\n\n"
        "A tensor of zeros: zeros(20, 20, 3) or zeros([20, 20, 3]); dtype defaults to `scalar`.");
    m.def(
        "ones", [](py::args sizes, py::handle dt) { return value(filled(sizes, dt, "ones", 1.0)); },
        py::kw_only(), py::arg("dtype") = py::none(),
        "ones(*sizes, dtype=None)\n--\n\n"
        "A tensor of ones: ones(2, 3) or ones((2, 3)); dtype defaults to `scalar`.");
    m.def(
        "uninit",
        [](py::args sizes, py::handle dt) {
            return value(filled(sizes, dt, "uninit", std::nullopt));
        },
        py::kw_only(), py::arg("dtype") = py::none(),
        "uninit(*sizes, dtype=None)\n--\n\n"
        "An uninitialised tensor: uninit(2, 3) or uninit(list(A.size())).");

    // ---- Quasar types ----
    py::class_<type_desc> qtype(m, "qtype", "A parsed Quasar type name (see typename()).");
    qtype.attr("__module__") = "isthmus";
    qtype.def(
        "__call__",
        [](const type_desc& t, py::args sizes) {
            require_init("qtype()");
            const shape_t shape = sizes_from_args(sizes, t.to_string().c_str());
            return t.construct(shape);
        },
        "Builds a value of this type: typename(\"vec[mat]\")(4), typename(\"mat\")(3, 4).");
    qtype.def("__str__", &type_desc::to_string);
    qtype.def("__repr__", [](const type_desc& t) {
        return "qtype(" + py::repr(py::str(t.to_string())).cast<std::string>() + ")";
    });
    qtype.def("__eq__", [](const type_desc& a, py::handle b) {
        if (py::isinstance<type_desc>(b)) return a == b.cast<const type_desc&>();
        if (py::isinstance<py::str>(b)) {
            try {
                return a == parse_type(b.cast<std::string>());
            } catch (const value_error&) {
                return false;
            }
        }
        return false;
    });
    qtype.def("__hash__", [](const type_desc& t) { return py::hash(py::str(t.to_string())); });
    qtype.def_property_readonly(
        "kind", [](const type_desc& t) { return std::string(name(t.kind())); },
        "\"any\", \"scalar\", \"string\", \"tensor\" or \"cell\".");
    qtype.def_property_readonly(
        "rank",
        [](const type_desc& t) -> py::object {
            if (t.is_any_rank()) return py::none();
            return py::int_(t.rank());
        },
        "The rank, or None for any rank (cube{:}, \?\?).");
    qtype.def_property_readonly(
        "dtype",
        [](const type_desc& t) -> py::object {
            const auto d = t.dtype();
            if (!d) return py::none();
            return dtype_attr(*d);
        },
        "The dtype the type builds (None for ??, string and cells).");
    qtype.def_property_readonly(
        "element", [](const type_desc& t) { return t.element(); },
        "The element type of a cell type.");
    qtype.def(
        "matches", [](const type_desc& t, py::handle v) { return t.matches(asvalue(v)); },
        py::arg("value"), "True when `value` is of this type.");

    m.def(
        "typename",
        [](py::handle name) {
            require_init("typename");
            return parse_type(text_from_py(name, "typename", "the type name"));
        },
        py::arg("name"),
        "Parses a Quasar type name: typename(\"vec[mat]\")(4) builds a cell of 4 matrices.");
    m.def(
        "type",
        [](py::handle v, py::handle t) {
            require_init("type");
            const type_desc td = type_from_py(t, "type");
            return td.matches(asvalue(v));
        },
        py::arg("value"), py::arg("type"),
        "Quasar's type test: type(A, \"cube{:}\") is True when A is a tensor of any rank.");

    // ---- inspection ----
    m.def(
        "size",
        [](py::handle v, py::handle dims) {
            require_init("size");
            return qvalue_of(asvalue(v)).attr("size")(dims);
        },
        py::arg("value"), py::arg("dims") = py::none(),
        "The sizes of a value as a tuple: size(A), size(A, [0, 1]), size(A, 0).");
    m.def(
        "print",
        [](py::args values, py::kwargs kwargs) {
            require_init("print");
            py::list texts;
            for (py::handle v : values) texts.append(py::str(asvalue(v).to_string()));
            py::module_::import("builtins").attr("print")(*texts, **kwargs);
        },
        "print(*values, **kwargs)\n--\n\n"
        "Prints values the way Quasar's print does (keywords go to Python's print).");

    // ---- raw memory ----
    m.def(
        "memcpy",
        [](py::handle dst, py::handle src, py::handle nbytes) {
            require_init("memcpy");
            const uintptr_t d = address_from_py(dst, "memcpy: dst_ptr");
            const uintptr_t s = address_from_py(src, "memcpy: src_ptr");
            ISTHMUS_CHECK(PyIndex_Check(nbytes.ptr()) && !PyBool_Check(nbytes.ptr()), type_error,
                          "memcpy: nbytes must be an int, got ", type_name(nbytes));
            const auto n =
                py::reinterpret_steal<py::object>(PyNumber_Index(nbytes.ptr())).cast<int64_t>();
            ISTHMUS_CHECK(n >= 0, value_error, "memcpy: nbytes must be >= 0, got ", n);
            if (n == 0) return;
            ISTHMUS_CHECK(d != 0 && s != 0, value_error, "memcpy: null ", d == 0 ? "dst" : "src",
                          "_ptr with nbytes = ", n);
            native_section nogil;
            // Note [memcpy overlap]
            // ~~~~~~~~~~~~~~~~~~~~~
            // memmove, so overlapping ranges (two views of one tensor) copy as if through a
            // temporary instead of being undefined.
            std::memmove(reinterpret_cast<void*>(d), reinterpret_cast<const void*>(s),
                         static_cast<size_t>(n));
        },
        py::arg("dst_ptr"), py::arg("src_ptr"), py::arg("nbytes"),
        "Copies nbytes bytes of host memory from src_ptr to dst_ptr (addresses as ints, e.g.\n"
        "from qvalue.lock() or ctypes; ctypes pointers are accepted too). Overlapping ranges\n"
        "are allowed. The caller keeps both ranges valid (locked) during the call.");
}

} // namespace isthmus::pymod
