// qvalue's NumPy exports (the buffer protocol, __array_interface__, __array__) and from_py/asvalue.
#include "qvalue/qvalue.hpp"

#include <pybind11/numpy.h>

#include <memory>
#include <unordered_map>

namespace isthmus::pymod {

// Note [export pins]
// ~~~~~~~~~~~~~~~~~~
// Memory that NumPy can see must stay put (docs/memory-model.md, "Pinning"). Every live export
// therefore holds a small owner object (export_owner) that pins the storage to the CPU when it is
// made and unpins it when it is destroyed:
// - the buffer protocol puts the owner in Py_buffer::obj, so NumPy's array (through its
//   memoryview base) keeps it, and PyBuffer_Release drops it when the last view is gone; the
//   exporting qvalue itself may die first;
// - `__array_interface__` has no slot for an owner (NumPy keeps the qvalue as the array's base),
//   so the first access pins for the rest of that qvalue's life (a weakref callback drops it).
// Explicit conversions (`to_py()`, `value(ndarray)`, `from_py(..., copy=True)`) copy and pin
// nothing. Arrays wrapped by `from_py`/`asvalue` are pinned by tensor::wrap for the storage's
// life, and the storage holds a reference to the array (Note [array release]).

namespace {

struct export_owner {
    tensor t;
    std::vector<Py_ssize_t> shape, strides;
    void* data = nullptr; // element 0 on the CPU, valid while pinned
    bool pinned = false;

    export_owner() = default;
    export_owner(const export_owner&) = delete;
    export_owner& operator=(const export_owner&) = delete;
    ~export_owner() {
        if (!pinned) return;
        try {
            t.storage()->unpin(MEMRESOURCE_CPU);
        } catch (...) { // never throw from a destructor; the pin count is the storage's
        }
    }
};

// True when the storage is pinned to a resource other than the CPU (foreign device memory, or
// a live device export): NumPy cannot share it, since a storage is pinned to one resource.
bool pinned_away(const tensor& t) {
    const resource_id p = t.storage()->pinned_to();
    return p != -1 && p != MEMRESOURCE_CPU;
}

const tensor& exportable_tensor(const value& v, const char* what) {
    require_init(what);
    ISTHMUS_CHECK(v.is_tensor(), type_error, what,
                  ": only tensor values can be shared with NumPy, ", "this value is a ",
                  v.kind_name());
    return v.as_tensor();
}

// Pins `t`'s storage to the CPU and returns the address of element 0 there (valid while pinned).
std::unique_ptr<export_owner> pin_for_export(const tensor& t, void*& data) {
    auto owner = std::make_unique<export_owner>();
    owner->t = t;
    const auto isz = static_cast<Py_ssize_t>(t.itemsize());
    for (int64_t d = 0; d < t.dim(); ++d) {
        owner->shape.push_back(static_cast<Py_ssize_t>(t.size(d)));
        owner->strides.push_back(static_cast<Py_ssize_t>(t.stride(d)) * isz);
    }
    native_section nogil; // may transfer from a device
    data = t.pin(MEMRESOURCE_CPU);
    owner->pinned = true;
    return owner;
}

bool is_f_contiguous(const tensor& t) {
    int64_t expected = 1;
    for (int64_t d = 0; d < t.dim(); ++d) {
        if (t.size(d) == 0) return true;
        if (t.size(d) != 1 && t.stride(d) != expected) return false;
        expected *= t.size(d);
    }
    return true;
}

// bf_getbuffer of qvalue (see Note [export pins]).
int qvalue_getbuffer(PyObject* self, Py_buffer* view, int flags) {
    view->obj = nullptr;
    try {
        const value& v = qvalue_ref(self);
        const tensor& t = exportable_tensor(v, "buffer export");
        const char* format = buffer_format(t.dtype());
        const bool c_contig = t.is_contiguous();
        const bool f_contig = is_f_contiguous(t);
        if ((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS && !c_contig)
            throw py::buffer_error("the tensor is not C-contiguous (use A.contiguous())");
        if ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS && !f_contig)
            throw py::buffer_error("the tensor is not Fortran-contiguous");
        if ((flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS && !c_contig && !f_contig)
            throw py::buffer_error("the tensor is not contiguous (use A.contiguous())");
        // See Note [read-only broadcast views]: exported read-only; a consumer that needs to write
        // gets BufferError, as for a read-only NumPy array.
        if ((flags & PyBUF_WRITABLE) == PyBUF_WRITABLE && !t.is_writable())
            throw py::buffer_error("the tensor is a read-only broadcast view (copy it first)");
        if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !c_contig)
            throw py::buffer_error("the tensor is strided and the consumer asked for no strides");

        void* data = nullptr;
        auto owner = pin_for_export(t, data);
        export_owner& o = *owner;
        o.data = data;
        py::object holder = py::cast(std::move(owner));

        view->buf = data;
        view->len = static_cast<Py_ssize_t>(t.nbytes());
        view->readonly = t.is_writable() ? 0 : 1;
        view->itemsize = static_cast<Py_ssize_t>(t.itemsize());
        view->format = (flags & PyBUF_FORMAT) ? const_cast<char*>(format) : nullptr;
        view->ndim = static_cast<int>(t.dim());
        view->shape = (flags & PyBUF_ND) ? o.shape.data() : nullptr;
        view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? o.strides.data() : nullptr;
        view->suboffsets = nullptr;
        view->internal = nullptr;
        view->obj = holder.release().ptr();
        return 0;
    } catch (...) {
        set_python_error(std::current_exception());
        return -1;
    }
}

} // namespace

namespace {

// Pins held by `__array_interface__` exports, by qvalue (see Note [export pins]). GIL-guarded.
std::unordered_map<PyObject*, py::object>& interface_pins() {
    static auto* pins = new std::unordered_map<PyObject*, py::object>();
    return *pins;
}

py::dict array_interface(py::object self) {
    const value& v = qvalue_ref(self);
    if (!v.is_tensor()) // lets NumPy move on to __array__ (scalars) or fail cleanly
        throw py::attribute_error("__array_interface__: only tensor values have one, this is a " +
                                  v.kind_name());
    const tensor& t = exportable_tensor(v, "__array_interface__");
    if (pinned_away(t)) // NumPy moves on to __array__, which copies
        throw py::attribute_error(
            "__array_interface__: the storage is pinned to " +
            get_resource(t.storage()->pinned_to()).name() +
            " (shared with a foreign library there), so NumPy cannot share it on the CPU");
    const char* format = buffer_format(t.dtype()); // bfloat16: TypeError
    (void)format;
    void* data = nullptr;
    PyObject* key = self.ptr();
    auto& pins = interface_pins();
    if (pins.find(key) == pins.end()) {
        py::object owner = py::cast(pin_for_export(t, data));
        py::cpp_function on_death([owner, key](py::handle) { interface_pins().erase(key); });
        pins.emplace(key, py::weakref(self, on_death));
    } else {
        native_section nogil;
        data = t.lock(LOCK_READ, MEMRESOURCE_CPU);
        t.unlock(LOCK_READ, MEMRESOURCE_CPU);
    }
    const auto isz = static_cast<int64_t>(t.itemsize());
    py::list shape, strides;
    for (int64_t d = 0; d < t.dim(); ++d) {
        shape.append(t.size(d));
        strides.append(t.stride(d) * isz);
    }
    py::dict out;
    out["version"] = 3;
    out["shape"] = py::tuple(shape);
    out["typestr"] = numpy_dtype(t.dtype()).attr("str");
    out["descr"] = numpy_dtype(t.dtype()).attr("descr");
    out["data"] = py::make_tuple(reinterpret_cast<uintptr_t>(data), !t.is_writable());
    out["strides"] = t.is_contiguous() ? py::object(py::none()) : py::object(py::tuple(strides));
    return out;
}

// NumPy 2's __array__(dtype=None, copy=None).
py::object array_protocol(py::object self, py::object dtype_arg, py::object copy) {
    const value& v = qvalue_ref(self);
    require_init("__array__");
    py::object arr;
    bool must_copy = !copy.is_none() && copy.cast<bool>();
    if (v.is_tensor() && pinned_away(v.as_tensor())) {
        ISTHMUS_CHECK(copy.is_none() || must_copy, value_error,
                      "__array__: the storage is pinned to ",
                      get_resource(v.as_tensor().storage()->pinned_to()).name(),
                      " (shared with a foreign library there), so a NumPy array of it is a copy, "
                      "and copy=False was given");
        must_copy = true;
    }
    if (v.is_tensor() && !must_copy) {
        buffer_format(v.as_tensor().dtype()); // bfloat16: TypeError
        arr = numpy().attr("asarray")(py::memoryview(self));
    } else if (v.is_tensor() || v.is_scalar()) {
        arr = to_py(v);
        if (v.is_scalar()) arr = numpy().attr("asarray")(arr);
    } else {
        ISTHMUS_THROW(type_error, "a ", v.kind_name(), " value cannot become a NumPy array");
    }
    if (!dtype_arg.is_none()) {
        py::object want = numpy().attr("dtype")(dtype_arg);
        if (!want.equal(arr.attr("dtype"))) {
            ISTHMUS_CHECK(copy.is_none() || copy.cast<bool>(), value_error,
                          "__array__: converting to ", py::str(want).cast<std::string>(),
                          " needs a copy, and copy=False was given");
            arr = arr.attr("astype")(want);
        }
    }
    return arr;
}

} // namespace

void bind_buffer(py::module_& m) {
    // The owner object behind every buffer export (see Note [export pins]).
    // It exports the same memory again, so consumers that re-export from a Py_buffer's obj
    // (pickle.PickleBuffer.raw(), memoryview(view.obj)) see the tensor, as the qvalue would.
    py::class_<export_owner>(m, "_export_owner", py::buffer_protocol(),
                             "Keeps a tensor's storage pinned while NumPy shares its memory.")
        .def_buffer([](export_owner& o) {
            const tensor& t = o.t;
            return py::buffer_info(o.data, static_cast<py::ssize_t>(t.itemsize()),
                                   buffer_format(t.dtype()), static_cast<py::ssize_t>(t.dim()),
                                   o.shape, o.strides, !t.is_writable());
        });

    qvalue_class cls(m.attr("qvalue"));
    // The buffer slots of our own type (Note [qvalue type]): they pin and hand the consumer an
    // owner object, and need no releasebuffer (see Note [export pins]).
    auto* heap = reinterpret_cast<PyHeapTypeObject*>(cls.ptr());
    heap->as_buffer.bf_getbuffer = &qvalue_getbuffer;
    heap->as_buffer.bf_releasebuffer = nullptr;

    cls.def_property_readonly("__array_interface__", &array_interface,
                              "NumPy's array interface (v3), zero-copy; pins the storage to the "
                              "CPU for the rest of this qvalue's life.");
    cls.def("__array__", &array_protocol, py::arg("dtype") = py::none(), py::kw_only(),
            py::arg("copy") = py::none(),
            "A NumPy array sharing the tensor's memory (a copy when copy=True or a dtype "
            "conversion needs one).");
    cls.def(
        "to_py",
        [](const value& v) {
            require_init("to_py");
            return to_py(v);
        },
        "A copy as a Python object: a NumPy array for tensors, a NumPy scalar for scalars, str "
        "for strings, None for none, nested lists for cells.");

    m.def(
        "from_py",
        [](py::object obj, py::object copy) {
            require_init("from_py");
            return value_in(obj, {copy_policy_of(copy, "from_py"), std::nullopt, "from_py"});
        },
        py::arg("obj"), py::kw_only(), py::arg("copy") = py::none(),
        "A tensor from a NumPy array, a torch tensor or other DLPack producer (or anything "
        "np.asarray accepts), sharing its memory when possible.\n\ncopy=None: share when possible, "
        "else copy; copy=True: always copy; "
        "copy=False: share or raise ValueError.");
    m.def(
        "asvalue",
        [](py::object obj) -> py::object {
            require_init("asvalue");
            if (is_qvalue(obj)) return obj;
            return qvalue_of(asvalue(obj));
        },
        py::arg("obj"),
        "Like np.asarray: a qvalue is returned as is, a NumPy array or torch tensor (any "
        "DLPack producer) is shared without a copy when possible, anything else is converted "
        "as by value().");
}

} // namespace isthmus::pymod
