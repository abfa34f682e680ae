// Internal helpers shared by the py_in_cpp sources: raising Python errors into C++ and back.
#pragma once

#include "isthmus/py.hpp"

#include <Python.h>

#include <exception>

namespace isthmus::embed {

/// The thread state under which an isthmus scope on this thread took the GIL (null outside
/// any scope; Note [GIL fast path] in interpreter.cpp).
extern thread_local PyThreadState* t_gil_holder;

/// True when an enclosing isthmus scope took the GIL on this thread and the thread still holds
/// it (nobody released it meanwhile): a thread-local read and one pointer compare.
inline bool holds_gil_fast() noexcept {
    PyThreadState* h = t_gil_holder;
    return h && _PyThreadState_UncheckedGet() == h;
}
/// The slow half of detail::gil_ensure: PyGILState_Ensure, recording this thread as holder.
detail::gil_token gil_acquire();
/// Undoes gil_acquire.
void gil_restore(detail::gil_token t) noexcept;

/// RAII GIL holder for the library's own functions: nothing to do when an enclosing scope
/// holds the GIL already, else one PyGILState_Ensure/Release pair.
class gil_hold {
public:
    gil_hold() : t_(holds_gil_fast() ? detail::gil_token{-1, nullptr} : gil_acquire()) {}
    ~gil_hold() {
        if (t_.state >= 0) gil_restore(t_);
    }
    gil_hold(const gil_hold&) = delete;
    gil_hold& operator=(const gil_hold&) = delete;

private:
    detail::gil_token t_;
};

/// RAII for entry points that Python calls with the GIL held (C++ callbacks): records this
/// thread as holder so that pyvalue operations inside take the fast path.
class python_holds {
public:
    python_holds() noexcept : prev_(t_gil_holder) { t_gil_holder = _PyThreadState_UncheckedGet(); }
    ~python_holds() { t_gil_holder = prev_; }
    python_holds(const python_holds&) = delete;
    python_holds& operator=(const python_holds&) = delete;

private:
    PyThreadState* prev_;
};

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
