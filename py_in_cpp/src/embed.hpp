// Internal helpers shared by the py_in_cpp sources: raising Python errors into C++ and back.
#pragma once

#include "isthmus/py.hpp"

#include <Python.h>

#include <exception>

namespace isthmus::embed {

/// Turns Python's current exception into a C++ exception and throws it: the original C++
/// exception when the Python one carries it (Note [exception round trip]), else python_error.
/// The GIL must be held and an exception must be set.
[[noreturn]] void throw_python_error();
/// Throws the current Python exception when `r` is null; returns `r` as a pyvalue otherwise.
inline pyvalue check(PyObject* r) {
    if (!r) throw_python_error();
    return pyvalue::steal(r);
}
/// Sets Python's current exception for the C++ exception `p` (the GIL must be held):
/// python_error restores its Python exception, isthmus errors map to the matching Python type,
/// and the exception_ptr rides along so that it can be rethrown as it was.
void raise_in_python(std::exception_ptr p) noexcept;

} // namespace isthmus::embed
