// Internal helpers shared by the py_in_cpp sources: taking the GIL, raising Python errors into C++.
#pragma once

#include "boundary/errors.hpp"
#include "boundary/gil.hpp"

#include "isthmus/py.hpp"

#include <Python.h>

#include <exception>

namespace isthmus::embed {

// The holder record and its check live in the boundary (boundary/gil.hpp), which the error
// mapping and the reference helpers share; the embedding sets the record when it takes the GIL.
using boundary::holds_gil_fast;
using boundary::raise_in_python;
using boundary::t_gil_holder;
using boundary::throw_python_error;

/// The slow half of detail::gil_ensure: PyGILState_Ensure, recording this thread as holder
/// (out of line, so the fast check inlines wherever a GIL is held).
[[gnu::noinline]] detail::gil_token gil_acquire();
/// Undoes gil_acquire.
void gil_restore(detail::gil_token t) noexcept;

/// RAII GIL holder for the library's own functions: nothing to do when an enclosing scope
/// holds the GIL already, else one PyGILState_Ensure/Release pair.
class gil_hold {
public:
    [[gnu::always_inline]] gil_hold()
        : t_(holds_gil_fast() ? detail::gil_token{-1, nullptr} : gil_acquire()) {}
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

/// Throws the current Python exception when `r` is null; returns `r` as a pyvalue otherwise.
inline pyvalue check(PyObject* r) {
    if (!r) throw_python_error();
    return pyvalue::steal(r);
}
} // namespace isthmus::embed
