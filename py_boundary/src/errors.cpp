// Errors across the Python boundary, both ways: the one mapping, python_error, the round trip.
#include "boundary/errors.hpp"

#include "boundary/gil.hpp"

#include <pybind11/pybind11.h>

#include <new>

namespace isthmus {

// Note [exception round trip]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A C++ exception thrown by a C++ callback that Python called (py_callback, py_function) becomes
// the matching Python exception (see Note [error mapping]: value_error -> ValueError, ...; other
// std::exceptions -> RuntimeError), so Python code can catch it. The exception_ptr travels with the
// Python exception object, in a capsule attribute `__isthmus_cpp_exception__`; when the exception
// reaches C++ again (a pyvalue operation fails with it), the original C++ exception is rethrown,
// with its own type and message, instead of a python_error. A python_error thrown by a callback
// restores its own Python exception unchanged, so Python sees what was raised.
namespace {

constexpr const char* cpp_exception_attr = "__isthmus_cpp_exception__";
constexpr const char* capsule_name = "isthmus.cpp_exception";

void delete_exception_capsule(PyObject* cap) {
    delete static_cast<std::exception_ptr*>(PyCapsule_GetPointer(cap, capsule_name));
}

std::string str_or(PyObject* o, const char* fallback) {
    PyObject* s = o ? PyObject_Str(o) : nullptr;
    if (!s) {
        PyErr_Clear();
        return fallback;
    }
    Py_ssize_t n = 0;
    const char* c = PyUnicode_AsUTF8AndSize(s, &n);
    std::string out = c ? std::string(c, static_cast<size_t>(n)) : std::string(fallback);
    if (!c) PyErr_Clear();
    Py_DECREF(s);
    return out;
}

// "ValueError" for built-ins, "module.QualName" for the rest.
std::string exception_type_name(PyObject* type) {
    PyObject* mod = PyObject_GetAttrString(type, "__module__");
    PyObject* qual = PyObject_GetAttrString(type, "__qualname__");
    std::string name =
        qual ? str_or(qual, "?") : std::string(reinterpret_cast<PyTypeObject*>(type)->tp_name);
    if (!qual) PyErr_Clear();
    if (mod) {
        const std::string m = str_or(mod, "");
        if (!m.empty() && m != "builtins") name = m + "." + name;
    } else {
        PyErr_Clear();
    }
    Py_XDECREF(mod);
    Py_XDECREF(qual);
    return name;
}

std::string format_traceback(PyObject* exc) {
    PyObject* tb = PyException_GetTraceback(exc); // new reference; only its presence matters
    if (!tb) return {};
    Py_DECREF(tb);
    PyObject* tb_mod = PyImport_ImportModule("traceback");
    PyObject* lines = tb_mod ? PyObject_CallMethod(tb_mod, "format_exception", "O", exc) : nullptr;
    std::string out;
    if (lines) {
        PyObject* empty = PyUnicode_FromString("");
        PyObject* joined = empty ? PyUnicode_Join(empty, lines) : nullptr;
        out = str_or(joined, "");
        Py_XDECREF(joined);
        Py_XDECREF(empty);
    }
    if (PyErr_Occurred()) PyErr_Clear();
    Py_XDECREF(lines);
    Py_XDECREF(tb_mod);
    return out;
}

} // namespace

python_error::python_error(std::string type_name, std::string message, std::string traceback,
                           _object* exception)
    : error(type_name + ": " + message), type_(std::move(type_name)), message_(std::move(message)),
      traceback_(std::move(traceback)), exc_(exception) {}

python_error::python_error(const python_error& o)
    : error(o), type_(o.type_), message_(o.message_), traceback_(o.traceback_), exc_(o.exc_) {
    if (exc_) detail::incref(exc_);
}

python_error& python_error::operator=(const python_error& o) {
    if (this == &o) return *this;
    error::operator=(o);
    if (o.exc_) detail::incref(o.exc_);
    if (exc_) detail::decref(exc_);
    type_ = o.type_;
    message_ = o.message_;
    traceback_ = o.traceback_;
    exc_ = o.exc_;
    return *this;
}

python_error::~python_error() {
    if (exc_) detail::decref(exc_);
}

bool python_error::matches(const std::string& name) const {
    if (!exc_ || !boundary::python_alive()) return false;
    struct gil_pair { // exc_ is set, so an interpreter runs; any thread may ask
        PyGILState_STATE s = PyGILState_Ensure();
        ~gil_pair() { PyGILState_Release(s); }
    } gil;
    PyObject* mro = Py_TYPE(exc_)->tp_mro; // a tuple of the classes, own type first
    for (Py_ssize_t i = 0; mro && i < PyTuple_GET_SIZE(mro); ++i) {
        PyObject* t = PyTuple_GET_ITEM(mro, i);
        if (exception_type_name(t) == name ||
            std::string(reinterpret_cast<PyTypeObject*>(t)->tp_name) == name)
            return true;
        PyObject* n = PyObject_GetAttrString(t, "__name__");
        const bool same = n && str_or(n, "") == name;
        if (!n) PyErr_Clear();
        Py_XDECREF(n);
        if (same) return true;
    }
    return false;
}

void python_error::restore() const {
    if (!exc_) {
        PyErr_SetString(PyExc_RuntimeError, what());
        return;
    }
    Py_INCREF(exc_);
    PyObject* tb = PyException_GetTraceback(exc_); // new reference or null
    PyErr_Restore(Py_NewRef(reinterpret_cast<PyObject*>(Py_TYPE(exc_))), exc_, tb);
}

namespace boundary {

// Note [error mapping]
// ~~~~~~~~~~~~~~~~~~~~
// The C++ hierarchy (core/include/isthmus/error.hpp) maps one to one onto Python's built-in
// exceptions, message unchanged, so Python code catches what it would catch from NumPy:
// value_error -> ValueError, type_error -> TypeError, index_error -> IndexError, overflow_error ->
// OverflowError, memory_error -> MemoryError, not_implemented_error -> NotImplementedError,
// interrupted -> KeyboardInterrupt (or what the signal handler raised), and runtime_error,
// internal_error and the base error -> RuntimeError. An isthmus::python_error (a Python exception
// that C++ code met through pyvalue) raises the original exception again. This is the only mapping:
// pybind11's translator (registered once, globally, so that functions bound by later layers such as
// plugins raise the same types), the C callbacks (buffer protocol, raw methods, number slots) and
// the embedding's C++ callbacks all use it.
namespace {

// Raises the Python exception for an isthmus error; rethrows anything else.
void translate(std::exception_ptr p) {
    try {
        if (p) std::rethrow_exception(p);
    } catch (const python_error& e) { // a Python exception that went through C++
        e.restore();
    } catch (const interrupted& e) { // Ctrl-C during a long operation (interrupts.cpp)
        raise_interrupted(e);
    } catch (const value_error& e) {
        PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const type_error& e) {
        PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const index_error& e) {
        PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const overflow_error& e) {
        PyErr_SetString(PyExc_OverflowError, e.what());
    } catch (const memory_error& e) {
        PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const not_implemented_error& e) {
        PyErr_SetString(PyExc_NotImplementedError, e.what());
    } catch (const error& e) { // runtime_error, internal_error, the base
        PyErr_SetString(PyExc_RuntimeError, e.what());
    }
}

} // namespace

void set_python_error(std::exception_ptr p) noexcept {
    try {
        translate(p);
    } catch (pybind11::error_already_set& e) {
        e.restore();
    } catch (const pybind11::builtin_exception& e) {
        e.set_error();
    } catch (const std::bad_alloc&) {
        PyErr_NoMemory();
    } catch (const std::exception& e) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (...) {
        PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception");
    }
}

void register_error_translator() {
    pybind11::register_exception_translator(&translate);
}

void throw_python_error() {
    PyObject *type = nullptr, *val = nullptr, *tb = nullptr;
    PyErr_Fetch(&type, &val, &tb);
    if (!type) ISTHMUS_THROW(internal_error, "a Python call failed without setting an exception");
    PyErr_NormalizeException(&type, &val, &tb);
    if (tb && val) PyException_SetTraceback(val, tb);
    Py_XDECREF(tb);
    if (!val) { // cannot normally happen after normalisation
        const std::string n = exception_type_name(type);
        Py_DECREF(type);
        throw python_error(n, "", "", nullptr);
    }
    // See Note [exception round trip]: the original C++ exception, when there is one.
    if (PyObject* cap = PyObject_GetAttrString(val, cpp_exception_attr)) {
        auto* p = static_cast<std::exception_ptr*>(PyCapsule_GetPointer(cap, capsule_name));
        std::exception_ptr original = p ? *p : std::exception_ptr();
        PyErr_Clear();
        Py_DECREF(cap);
        if (original) {
            Py_DECREF(type);
            Py_DECREF(val);
            std::rethrow_exception(original);
        }
    } else {
        PyErr_Clear();
    }
    std::string name = exception_type_name(type);
    std::string message = str_or(val, "<unprintable exception>");
    std::string traceback = format_traceback(val);
    Py_DECREF(type);
    throw python_error(std::move(name), std::move(message), std::move(traceback), val);
}

void raise_in_python(std::exception_ptr p) noexcept {
    try {
        std::rethrow_exception(p);
    } catch (const python_error& e) {
        e.restore();
        return;
    } catch (...) {
    }
    set_python_error(p);
    PyObject *type = nullptr, *val = nullptr, *tb = nullptr;
    PyErr_Fetch(&type, &val, &tb);
    PyErr_NormalizeException(&type, &val, &tb);
    if (val) {
        auto* holder = new (std::nothrow) std::exception_ptr(p);
        PyObject* cap =
            holder ? PyCapsule_New(holder, capsule_name, &delete_exception_capsule) : nullptr;
        if (cap) {
            if (PyObject_SetAttrString(val, cpp_exception_attr, cap) < 0) PyErr_Clear();
            Py_DECREF(cap);
        } else {
            delete holder;
            PyErr_Clear();
        }
    }
    PyErr_Restore(type, val, tb);
}

} // namespace boundary
} // namespace isthmus
