// qvalue.__dlpack__ / __dlpack_device__ as raw CPython methods, and q.from_dlpack.
#include "qvalue/qvalue.hpp"

namespace isthmus::pymod {

namespace {

// The keyword-only parameters of a raw method: their names, and the same names as interned
// Python strings (made on first use, under the GIL), which call sites' keyword names usually are.
template <size_t N>
struct keyword_names {
    const char* names[N];
    PyObject* interned[N] = {};

    PyObject* const* strings() {
        if (!interned[N - 1])
            for (size_t k = 0; k < N; ++k) {
                interned[k] = PyUnicode_InternFromString(names[k]);
                if (!interned[k]) throw py::error_already_set();
            }
        return interned;
    }
};

// Fills given[k] with the keyword argument names[k] of a FASTCALL call (the values follow the
// `nargs` positional ones in `args`); TypeError naming `fn` for any other keyword. Interned keys
// match by address, the others by their text.
template <size_t N>
void keyword_args(const char* fn, keyword_names<N>& kw, PyObject* const* args, Py_ssize_t nargs,
                  PyObject* kwnames, PyObject* (&given)[N]) {
    const Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nk == 0) return;
    PyObject* const* interned = kw.strings();
    for (Py_ssize_t i = 0; i < nk; ++i) {
        PyObject* key = PyTuple_GET_ITEM(kwnames, i);
        size_t k = 0;
        while (k < N && key != interned[k]) ++k;
        if (k == N) {
            k = 0;
            while (k < N && PyUnicode_CompareWithASCIIString(key, kw.names[k]) != 0) ++k;
        }
        ISTHMUS_CHECK(k < N, type_error, fn, "() got an unexpected keyword argument '",
                      py::str(key).cast<std::string>(), "'");
        given[k] = args[nargs + i];
    }
}

// Note [raw dlpack method]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// Consumers call `x.__dlpack__(max_version=..., ...)` with keywords on every exchange
// (torch.from_dlpack always passes max_version); pybind11's keyword matching made that call cost
// more than the export itself. `__dlpack__` is therefore a METH_FASTCALL | METH_KEYWORDS method
// parsing its four keyword-only arguments by hand, then calling dlpack_export as the pybind11
// binding did. `__dlpack_device__`, asked first, is raw too.
PyObject* raw_dlpack(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                     PyObject* kwnames) noexcept {
    try {
        static keyword_names<4> names{{"stream", "max_version", "dl_device", "copy"}};
        PyObject* given[4] = {Py_None, Py_None, Py_None, Py_None};
        ISTHMUS_CHECK(nargs == 0, type_error,
                      "__dlpack__() takes keyword arguments only (stream=, max_version=, "
                      "dl_device=, copy=), got ",
                      nargs, " positional argument", nargs == 1 ? "" : "s");
        keyword_args("__dlpack__", names, args, nargs, kwnames, given);
        const value* v = qvalue_ptr(self);
        ISTHMUS_CHECK(v, type_error, "__dlpack__() needs a qvalue, got a ", type_name(self));
        return dlpack_export(*v, given[0], given[1], given[2], given[3]).release().ptr();
    } catch (...) {
        set_python_error(std::current_exception());
        return nullptr;
    }
}

PyMethodDef raw_dlpack_def = {
    "__dlpack__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(raw_dlpack)),
    METH_FASTCALL | METH_KEYWORDS,
    "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
    "Exports the tensor as a DLPack capsule sharing its memory (docs/interop.md).\n\n"
    "stream: for CUDA data, the consumer's stream, made to wait for isthmus's work\n"
    "  through an event: None or 1 the legacy default stream, 2 the per-thread default\n"
    "  stream, a cudaStream_t as int, -1 no synchronisation (0 is refused). CPU data\n"
    "  takes None only.\n"
    "max_version: the consumer's newest DLPack version; (1, x) or later gives a versioned\n"
    "  \"dltensor_versioned\" capsule, None a legacy \"dltensor\" one.\n"
    "dl_device: None (where the data is: __dlpack_device__), (1, 0) for the CPU or\n"
    "  (2, n) for CUDA device n; other devices raise BufferError.\n"
    "copy: None shares when possible, True exports a copy (flagged IS_COPIED), False\n"
    "  raises BufferError when only a copy could be exported.\n"
    "The storage stays pinned to the exported device until the consumer releases the\n"
    "tensor (docs/interop.md)."};

PyObject* raw_dlpack_device(PyObject* self, PyObject*) noexcept {
    try {
        const value* v = qvalue_ptr(self);
        ISTHMUS_CHECK(v, type_error, "__dlpack_device__() needs a qvalue, got a ", type_name(self));
        return dlpack_device(*v).release().ptr();
    } catch (...) {
        set_python_error(std::current_exception());
        return nullptr;
    }
}

PyMethodDef raw_dlpack_device_def = {
    "__dlpack_device__", raw_dlpack_device, METH_NOARGS,
    "__dlpack_device__()\n--\n\n"
    "The DLPack device of the data: (2, n) (kDLCUDA) when tensor::location() is\n"
    "cuda:n, else (1, 0) (kDLCPU)."};

// q.from_dlpack(obj, /, *, device=None, copy=None), parsed by hand (Note [raw dlpack method]).
PyObject* raw_from_dlpack(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                          PyObject* kwnames) noexcept {
    try {
        static keyword_names<2> names{{"device", "copy"}};
        PyObject* given[2] = {Py_None, Py_None};
        ISTHMUS_CHECK(nargs == 1, type_error,
                      "from_dlpack() takes one positional argument (obj), got ", nargs);
        keyword_args("from_dlpack", names, args, nargs, kwnames, given);
        require_init("from_dlpack");
        return qvalue_of(value_from_dlpack(args[0], given[0], given[1])).release().ptr();
    } catch (...) {
        set_python_error(std::current_exception());
        return nullptr;
    }
}

PyMethodDef raw_from_dlpack_def = {
    "from_dlpack", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(raw_from_dlpack)),
    METH_FASTCALL | METH_KEYWORDS,
    "from_dlpack(obj, /, *, device=None, copy=None)\n--\n\n"
    "A qvalue sharing the memory of any DLPack producer (NumPy array, torch tensor,\n"
    "qvalue, anything with __dlpack__) or of a DLPack capsule.\n\n"
    "device: None (where the producer's data is), \"cpu\"/(1, 0), or \"cuda\"/\"cuda:N\"/(2, N);\n"
    "  the producer is asked for that device, and isthmus copies if it did not comply.\n"
    "CUDA producers are passed isthmus's stream (DLPack stream rules); objects with only\n"
    "__cuda_array_interface__ (CuPy, Numba) are accepted too.\n"
    "copy: None shares when possible and copies read-only or misaligned data; True\n"
    "  always gives memory of its own; False shares or raises ValueError.\n"
    "Torch tensors that require grad raise BufferError (pass t.detach()); conjugate and\n"
    "negative views are resolved into a copy (ValueError with copy=False)."};

// Sets a method of the qvalue class from a CPython method definition.
void set_raw_method(py::handle cls, PyMethodDef& def) {
    PyObject* method = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), &def);
    if (!method) throw py::error_already_set();
    cls.attr(def.ml_name) = py::reinterpret_steal<py::object>(method);
}

} // namespace

void bind_dlpack(py::module_& m) {
    qvalue_class cls(m.attr("qvalue"));
    set_raw_method(cls, raw_dlpack_def);        // Note [raw dlpack method]
    set_raw_method(cls, raw_dlpack_device_def); // asked before every __dlpack__ call
    // See Note [raw dlpack method]: q.from_dlpack is a raw FASTCALL function too
    PyObject* fn = PyCFunction_NewEx(&raw_from_dlpack_def, nullptr, m.attr("__name__").ptr());
    if (!fn) throw py::error_already_set();
    m.attr("from_dlpack") = py::reinterpret_steal<py::object>(fn);
}

} // namespace isthmus::pymod
