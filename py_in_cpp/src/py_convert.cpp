// Conversions: C++ scalars, strings and containers, runtime values and zero-copy tensors.
#include "embed.hpp"

#include "boundary/arrays.hpp"
#include "boundary/conversions.hpp"
#include "boundary/dlpack.hpp"
#include "boundary/dtypes.hpp"
#include "boundary/qvalue_handle.hpp"

#include "isthmus/cuda.hpp"

#include <pybind11/numpy.h>

#include <limits>

namespace isthmus {

namespace py = pybind11;

namespace {
using embed::gil_hold;

// Runs pybind11 code, turning its error_already_set into python_error (or the original C++
// exception, Note [exception round trip]).
template <typename F>
auto guarded(F&& f) -> decltype(f()) {
    try {
        return f();
    } catch (py::error_already_set& e) {
        e.restore();
        embed::throw_python_error();
    } catch (const py::builtin_exception& e) { // BufferError from the boundary, ...: C++ hosts
        e.set_error();                         // see python_error, never a pybind11 type
        embed::throw_python_error();
    }
}

pyvalue from_py_object(py::object o) {
    return pyvalue::steal(o.release().ptr());
}

std::string tname(PyObject* o) {
    return Py_TYPE(o)->tp_name;
}

// Note [tensor hand-over]
// ~~~~~~~~~~~~~~~~~~~~~~~
// to_numpy(t) makes a NumPy array over t's memory in constant time: the storage is pinned to the
// CPU (docs/memory-model.md, "Pinning"), element 0's address is taken, and the array is created
// over it with t's shape and byte strides; its base is a capsule owning a tensor handle and the
// pin. The capsule dies with the last NumPy view of the memory (views of views keep their base),
// which unpins; the tensor handle keeps the storage alive that long. torch.from_numpy on that array
// shares the same memory (it keeps the array alive), so a torch tensor is the same hand-over plus
// one torch call. This is the path cpp_in_py's buffer export uses, built here directly so that it
// needs neither the qvalue class nor q.init() in a C++ host.
struct handover {
    tensor t;
    bool pinned = false;
    ~handover() {
        if (!pinned) return;
        try {
            t.storage()->unpin(MEMRESOURCE_CPU);
        } catch (...) { // never throw from a destructor
        }
    }
};
constexpr const char* handover_capsule = "isthmus.tensor_handover";
void delete_handover(PyObject* cap) {
    delete static_cast<handover*>(PyCapsule_GetPointer(cap, handover_capsule));
}

bool is_torch_tensor(PyObject* o) {
    // torch.Tensor and subclasses (Parameter), without importing torch.
    for (PyTypeObject* t = Py_TYPE(o); t; t = t->tp_base)
        if (std::string_view(t->tp_name) == "torch._C.TensorBase" ||
            std::string_view(t->tp_name) == "torch._C._TensorBase")
            return true;
    return false;
}
} // namespace

pyvalue to_numpy(const tensor& t) {
    ISTHMUS_CHECK(t.defined(), value_error, "to_numpy: the tensor is undefined");
    ISTHMUS_CHECK(t.dtype() != dtype::bfloat16, type_error,
                  "to_numpy: bfloat16 has no NumPy dtype; convert first (t.to(dtype::float32))");
    gil_hold g;
    return guarded([&] {
        py::object np_dt = boundary::numpy_dtype(t.dtype());
        std::vector<py::ssize_t> shape, strides;
        const auto isz = static_cast<py::ssize_t>(t.itemsize());
        for (int64_t d = 0; d < t.dim(); ++d) {
            shape.push_back(static_cast<py::ssize_t>(t.size(d)));
            strides.push_back(static_cast<py::ssize_t>(t.stride(d)) * isz);
        }
        if (t.numel() == 0) // nothing to share
            return from_py_object(py::array(py::reinterpret_borrow<py::dtype>(np_dt), shape));
        auto owner = std::make_unique<handover>();
        owner->t = t;
        void* data = nullptr;
        {
            py::gil_scoped_release nogil; // may transfer from a device
            data = t.pin(MEMRESOURCE_CPU);
            owner->pinned = true;
        }
        PyObject* cap = PyCapsule_New(owner.get(), handover_capsule, &delete_handover);
        if (!cap) throw py::error_already_set();
        owner.release();
        py::object base = py::reinterpret_steal<py::object>(cap);
        py::array arr(py::reinterpret_borrow<py::dtype>(np_dt), shape, strides, data, base);
        return from_py_object(std::move(arr));
    });
}

// Note [to_torch through DLPack]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// to_torch hands torch a DLPack capsule made here (torch._C._from_dlpack, the C function behind
// torch.from_dlpack) rather than calling torch.from_numpy on a NumPy view: no NumPy array is built,
// and torch's DLPack import is cheaper than its from_numpy (measured: ~0.6 us against ~0.8 us,
// bench/README.md). The capsule pins the storage to the CPU until torch drops the memory, as the
// NumPy view does. Tensors with negative strides (which torch's DLPack import does not accept) and
// empty tensors keep the NumPy route, so the results are the same as before. A tensor located on a
// CUDA device (and not pinned elsewhere) crosses as a CUDA tensor on that device, torch's current
// stream made to wait for isthmus's stream (the DLPack stream rules, Note [dlpack streams] in
// py_boundary/src/dlpack.cpp).
pyvalue to_torch(const tensor& t) {
    ISTHMUS_CHECK(t.defined(), value_error, "to_torch: the tensor is undefined");
    ISTHMUS_CHECK(t.dtype() != dtype::bfloat16, type_error,
                  "to_torch: bfloat16 has no NumPy dtype; convert first (t.to(dtype::float32))");
    bool negative = false;
    for (int64_t d = 0; d < t.dim(); ++d)
        if (t.size(d) > 1 && t.stride(d) < 0) negative = true;
    gil_hold g;
    static PyObject* from_numpy = nullptr;  // Note [never finalise]
    static PyObject* from_dlpack = nullptr; // Note [never finalise]
    if (!from_numpy) {
        pyvalue torch = pyimport("torch");
        pyvalue fd = torch.hasattr("_C") && torch.attr("_C").hasattr("_from_dlpack")
                         ? pyvalue(torch.attr("_C").attr("_from_dlpack"))
                         : pyvalue(torch.attr("from_dlpack"));
        pyvalue fn = torch.attr("from_numpy");
        from_dlpack = fd.release();
        from_numpy = fn.release();
    }
    if (negative || t.numel() == 0) return pyvalue::borrow(from_numpy)(to_numpy(t));
    const int dev = boundary::cuda_ordinal(t.location());
    const resource_id pinned = t.storage()->pinned_to();
    if (dev >= 0 && (pinned == -1 || pinned == cuda_resource(dev))) {
        pyvalue cap = guarded([&] {
            py::object stream =
                py::module_::import("torch").attr("cuda").attr("current_stream")(dev);
            auto s = stream.attr("cuda_stream").cast<uintptr_t>();
            if (s == 0) s = 1; // torch's default stream is the legacy default stream
            return from_py_object(boundary::dlpack_capsule(t, dev, reinterpret_cast<void*>(s)));
        });
        return pyvalue::borrow(from_dlpack)(cap);
    }
    pyvalue cap = guarded([&] { return from_py_object(boundary::dlpack_capsule(t)); });
    return pyvalue::borrow(from_dlpack)(cap);
}

tensor tensor_from_py(const pyvalue& obj, bool allow_copy) {
    gil_hold g;
    PyObject* o = obj.get();
    const auto policy =
        allow_copy ? boundary::copy_policy::if_needed : boundary::copy_policy::never;
    return guarded([&]() -> tensor {
        py::handle h(o);
        if (boundary::is_qvalue(h)) {
            const value& v = boundary::qvalue_ref(h);
            ISTHMUS_CHECK(v.is_tensor(), type_error, "from_py<tensor>: the qvalue holds a ",
                          v.kind_name(), ", not a tensor");
            return v.as_tensor();
        }
        // See Note [inbound rule]: arrays, torch tensors (DLPack, CPU and CUDA), buffers and lists
        // as every Python entry point takes them.
        return boundary::tensor_in(h, {policy, std::nullopt, "from_py<tensor>"});
    });
}

namespace detail {

pyvalue py_long(long long v) {
    gil_hold g;
    return embed::check(PyLong_FromLongLong(v));
}
pyvalue py_ulong(unsigned long long v) {
    gil_hold g;
    return embed::check(PyLong_FromUnsignedLongLong(v));
}
pyvalue py_float(double v) {
    gil_hold g;
    return embed::check(PyFloat_FromDouble(v));
}
pyvalue py_complex(double re, double im) {
    gil_hold g;
    return embed::check(PyComplex_FromDoubles(re, im));
}
pyvalue py_bool(bool v) {
    gil_hold g;
    return pyvalue::steal(PyBool_FromLong(v ? 1 : 0));
}
pyvalue py_str(std::string_view v) {
    gil_hold g;
    return embed::check(PyUnicode_FromStringAndSize(v.data(), Py_ssize_t(v.size())));
}

// Note [strict numbers]
// ~~~~~~~~~~~~~~~~~~~~~
// from_py follows Python's own rules for implicit conversion: integers accept int, bool and
// anything with __index__ (NumPy integers), never float or str; floating types accept anything with
// __float__ or __index__ (int, NumPy scalars, 0-d arrays), never str; bool accepts only bool and
// NumPy bool (not 0/1, as pybind11 without convert). Out of range values raise value_error instead
// of wrapping.
long long as_long(_object* o, long long lo, long long hi, const char* target) {
    gil_hold g;
    if (PyFloat_Check(o) || PyUnicode_Check(o) || !PyIndex_Check(o))
        ISTHMUS_THROW(type_error, "from_py: expected an int for ", target, ", got a ", tname(o));
    int overflow = 0;
    pyvalue idx = embed::check(PyNumber_Index(o));
    const long long v = PyLong_AsLongLongAndOverflow(idx.get(), &overflow);
    if (v == -1 && PyErr_Occurred()) embed::throw_python_error();
    if (overflow != 0 || v < lo || v > hi)
        ISTHMUS_THROW(value_error, "from_py: ", str(o), " is out of range for ", target, " [", lo,
                      ", ", hi, "]");
    return v;
}

unsigned long long as_ulong(_object* o, unsigned long long hi, const char* target) {
    gil_hold g;
    if (PyFloat_Check(o) || PyUnicode_Check(o) || !PyIndex_Check(o))
        ISTHMUS_THROW(type_error, "from_py: expected an int for ", target, ", got a ", tname(o));
    pyvalue idx = embed::check(PyNumber_Index(o));
    const int neg = PyObject_RichCompareBool(idx.get(), pyvalue(py_long(0)).get(), Py_LT);
    if (neg < 0) embed::throw_python_error();
    unsigned long long v = 0;
    if (!neg) {
        v = PyLong_AsUnsignedLongLong(idx.get());
        if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
            PyErr_Clear();
            ISTHMUS_THROW(value_error, "from_py: ", str(o), " is out of range for ", target,
                          " [0, ", hi, "]");
        }
    }
    if (neg || v > hi)
        ISTHMUS_THROW(value_error, "from_py: ", str(o), " is out of range for ", target, " [0, ",
                      hi, "]");
    return v;
}

double as_double(_object* o, const char* target) {
    gil_hold g;
    if (PyUnicode_Check(o) || PyBytes_Check(o) || PyComplex_Check(o) ||
        !(PyFloat_Check(o) || PyIndex_Check(o) || PyNumber_Check(o)))
        ISTHMUS_THROW(type_error, "from_py: expected a real number for ", target, ", got a ",
                      tname(o));
    const double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred()) embed::throw_python_error();
    return v;
}

std::complex<double> as_complex(_object* o) {
    gil_hold g;
    if (PyUnicode_Check(o) || PyBytes_Check(o) || !PyNumber_Check(o))
        ISTHMUS_THROW(type_error, "from_py: expected a number for std::complex, got a ", tname(o));
    const Py_complex c = PyComplex_AsCComplex(o);
    if (c.real == -1.0 && PyErr_Occurred()) embed::throw_python_error();
    return {c.real, c.imag};
}

bool as_bool(_object* o) {
    gil_hold g;
    if (PyBool_Check(o)) return o == Py_True;
    if (std::string_view(Py_TYPE(o)->tp_name) == "numpy.bool" ||
        std::string_view(Py_TYPE(o)->tp_name) == "numpy.bool_")
        return PyObject_IsTrue(o) == 1;
    ISTHMUS_THROW(type_error, "from_py: expected a bool, got a ", tname(o),
                  " (use bool(x) or pyvalue's explicit operator bool for truthiness)");
}

std::string as_string(_object* o) {
    gil_hold g;
    if (PyBytes_Check(o))
        return std::string(PyBytes_AS_STRING(o), static_cast<size_t>(PyBytes_GET_SIZE(o)));
    ISTHMUS_CHECK(PyUnicode_Check(o), type_error, "from_py: expected a str for std::string, got a ",
                  tname(o));
    Py_ssize_t n = 0;
    const char* c = PyUnicode_AsUTF8AndSize(o, &n);
    if (!c) embed::throw_python_error();
    return std::string(c, static_cast<size_t>(n));
}

std::vector<pyvalue> items_of(const pyvalue& v, const char* target) {
    gil_hold g;
    PyObject* o = v.get();
    if (PyUnicode_Check(o) || PyBytes_Check(o) || PyDict_Check(o))
        ISTHMUS_THROW(type_error, "from_py: expected a sequence for ", target, ", got a ",
                      tname(o));
    PyObject* it = PyObject_GetIter(o);
    if (!it) {
        PyErr_Clear();
        ISTHMUS_THROW(type_error, "from_py: expected an iterable for ", target, ", got a ",
                      tname(o));
    }
    pyvalue iter = pyvalue::steal(it);
    std::vector<pyvalue> out;
    while (PyObject* x = PyIter_Next(it)) out.push_back(pyvalue::steal(x));
    if (PyErr_Occurred()) embed::throw_python_error();
    return out;
}

std::vector<std::pair<pyvalue, pyvalue>> mapping_items(const pyvalue& v, const char* target) {
    gil_hold g;
    PyObject* o = v.get();
    ISTHMUS_CHECK(PyMapping_Check(o) && PyObject_HasAttrString(o, "items"), type_error,
                  "from_py: expected a mapping (dict) for ", target, ", got a ", tname(o));
    pyvalue items = embed::check(PyMapping_Items(o));
    std::vector<std::pair<pyvalue, pyvalue>> out;
    for (const pyvalue& kv : items_of(items, target))
        out.emplace_back(pyvalue(kv[0]), pyvalue(kv[1]));
    return out;
}

void dict_set(const pyvalue& d, const pyvalue& k, const pyvalue& v) {
    gil_hold g;
    if (PyDict_SetItem(d.get(), k.get(), v.get()) < 0) embed::throw_python_error();
}

pyvalue slice_to_py(const index_slice& s) {
    auto part = [](const std::optional<int64_t>& x) { return x ? py_long(*x) : none(); };
    return make_slice(part(s.start).get(), part(s.stop).get(), part(s.step).get());
}

pyvalue ellipsis() {
    gil_hold g;
    return pyvalue::borrow(Py_Ellipsis);
}

pyvalue scalar_to_py(const scalar& s) {
    const dtype dt = s.type();
    if (dt == dtype::bool_) return py_bool(s.to<bool>());
    if (is_complex(dt)) {
        const auto c = s.to<complex128_t>();
        return py_complex(c.real(), c.imag());
    }
    if (is_floating(dt)) return py_float(s.to<double>());
    if (dt == dtype::uint64) return py_ulong(s.to<uint64_t>());
    return py_long(s.to<int64_t>());
}

scalar scalar_from_py(const pyvalue& v) {
    gil_hold g;
    PyObject* o = v.get();
    ISTHMUS_CHECK(boundary::is_py_number(py::handle(o)), type_error,
                  "from_py<scalar>: expected a number, got a ", tname(o));
    return guarded([&] { return boundary::scalar_from_py(py::handle(o), std::nullopt); });
}

} // namespace detail

// ---- runtime values ----

namespace {
// Note [Python objects in runtime values]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A Python object that has no runtime counterpart (a function, a module, a dict) is carried in a
// value as an `object` of kind "pyvalue", so it survives a round trip through C++ code that passes
// values along (value_to_py returns the same object).
class py_object final : public object {
public:
    explicit py_object(pyvalue v) : v_(std::move(v)) {}
    std::string kind() const override { return "pyvalue"; }
    std::string to_string() const override { return v_.repr(); }
    const pyvalue& get() const noexcept { return v_; }

private:
    pyvalue v_;
};

} // namespace

namespace detail {
// Python's recursion check (with the GIL held) around conversions that recurse into cells or
// nested lists: a list that contains itself, or nesting thousands deep, raises RecursionError
// as a python_error instead of overflowing the C stack (Note [cell cycles]).
class py_recursion_guard {
public:
    explicit py_recursion_guard(const char* where) {
        if (Py_EnterRecursiveCall(where) != 0) embed::throw_python_error();
    }
    ~py_recursion_guard() { Py_LeaveRecursiveCall(); }
    py_recursion_guard(const py_recursion_guard&) = delete;
    py_recursion_guard& operator=(const py_recursion_guard&) = delete;
};
} // namespace detail

namespace {
pyvalue cell_to_py(const cell& c, size_t dim, size_t& pos) {
    gil_hold g;
    detail::py_recursion_guard guard(" while converting a cell to a list");
    if (c.shape.empty()) return detail::value_to_py(c.items.at(pos++));
    std::vector<pyvalue> items;
    const int64_t n = c.shape[dim];
    for (int64_t i = 0; i < n; ++i) {
        if (dim + 1 == c.shape.size())
            items.push_back(detail::value_to_py(c.items.at(pos++)));
        else
            items.push_back(cell_to_py(c, dim + 1, pos));
    }
    return detail::make_list(items.data(), items.size());
}
} // namespace

namespace detail {

pyvalue value_to_py(const value& v) {
    switch (v.kind()) {
    case value_kind::none:
        return none();
    case value_kind::scalar:
        return scalar_to_py(v.as_scalar());
    case value_kind::string:
        return py_str(v.as_string());
    case value_kind::tensor:
        return to_numpy(v.as_tensor());
    case value_kind::cell: {
        size_t pos = 0;
        return cell_to_py(v.as_cell(), 0, pos);
    }
    case value_kind::object: {
        if (auto p = std::dynamic_pointer_cast<py_object>(v.as_object())) return p->get();
        // registers the qvalue class (See Note [the native module in a C++ host])
        python::import_isthmus();
        gil_hold g;
        return guarded([&] {
            py::object q = boundary::qvalue_of(v);
            return from_py_object(std::move(q));
        });
    }
    }
    ISTHMUS_THROW(internal_error, "value_to_py: unknown value kind");
}

value value_from_py(const pyvalue& v) {
    gil_hold g;
    PyObject* o = v.get();
    if (o == Py_None) return value();
    if (boundary::is_qvalue(py::handle(o))) return boundary::qvalue_ref(py::handle(o));
    if (PyUnicode_Check(o)) return value(as_string(o));
    if (boundary::is_py_number(py::handle(o))) return value(scalar_from_py(v));
    if (is_torch_tensor(o) || py::isinstance<py::array>(py::handle(o)))
        return value(tensor_from_py(v));
    if (PyList_Check(o) || PyTuple_Check(o)) {
        py_recursion_guard guard(" while converting a nested list to a cell");
        std::vector<pyvalue> items = items_of(v, "a cell");
        value c = value::make_cell({static_cast<int64_t>(items.size())});
        for (size_t i = 0; i < items.size(); ++i) c.as_cell().items[i] = value_from_py(items[i]);
        return c;
    }
    return value(std::shared_ptr<object>(std::make_shared<py_object>(v)));
}

} // namespace detail
} // namespace isthmus
