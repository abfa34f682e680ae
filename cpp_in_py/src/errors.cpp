// Exception translation: each isthmus error type raises the matching built-in Python exception.
#include "bindings.hpp"

#include "isthmus/python.hpp"

namespace isthmus::pymod {

// Note [error mapping]: the C++ hierarchy (core/include/isthmus/error.hpp) maps one to one onto
// Python's built-in exceptions, message unchanged, so Python code catches what it would catch
// from NumPy: value_error -> ValueError, type_error -> TypeError, index_error -> IndexError,
// overflow_error -> OverflowError, memory_error -> MemoryError, not_implemented_error ->
// NotImplementedError, interrupted -> KeyboardInterrupt (or what the signal handler raised),
// and runtime_error, internal_error and the base error -> RuntimeError. An
// isthmus::python_error (a Python exception that C++ code met through pyvalue) raises the original
// exception again. The translator is global (not module-local) so that functions bound by later
// layers (plugins) raise the same types.
namespace {

// Raises the Python exception for an isthmus error; rethrows anything else.
void translate(std::exception_ptr p) {
    try {
        if (p) std::rethrow_exception(p);
    } catch (const python_error& e) { // a Python exception that went through C++ (py_in_cpp)
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
    } catch (py::error_already_set& e) {
        e.restore();
    } catch (const py::builtin_exception& e) {
        e.set_error();
    } catch (const std::bad_alloc&) {
        PyErr_NoMemory();
    } catch (const std::exception& e) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (...) {
        PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception");
    }
}

void bind_errors(py::module_& m) {
    py::register_exception_translator(&translate);

    // Test hook: raises the isthmus error named `kind` with `message` (tests/python checks the
    // mapping of every type through it).
    m.def(
        "_raise_error",
        [](const std::string& kind, const std::string& message) {
            if (kind == "value_error") throw value_error(message);
            if (kind == "type_error") throw type_error(message);
            if (kind == "index_error") throw index_error(message);
            if (kind == "memory_error") throw memory_error(message);
            if (kind == "overflow_error") throw overflow_error(message);
            if (kind == "not_implemented_error") throw not_implemented_error(message);
            if (kind == "runtime_error") throw runtime_error(message);
            if (kind == "internal_error") throw internal_error(message);
            if (kind == "error") throw error(message);
            if (kind == "interrupted") throw interrupted(message);
            throw value_error("_raise_error: unknown kind \"" + kind + "\"");
        },
        py::arg("kind"), py::arg("message"));
}

} // namespace isthmus::pymod
