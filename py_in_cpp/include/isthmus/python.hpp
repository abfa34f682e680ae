// The embedded interpreter: starting/attaching, the GIL guards; isthmus::python_error with it.
#pragma once

#include "isthmus/error.hpp"
#include "isthmus/export.hpp"
#include "isthmus/python_error.hpp"

#include <exception>
#include <string>

struct _object; // CPython's PyObject; pybind11 and Python.h stay out of the public headers.

namespace isthmus {

class pyvalue;

namespace detail {
/// What gil_ensure did, for gil_release to undo: `state` < 0 when the calling thread already
/// held the GIL through an enclosing isthmus scope (nothing to undo), else the PyGILState_STATE
/// to restore and the enclosing scope's holder record (Note [GIL fast path] in interpreter.cpp).
struct gil_token {
    int state;
    void* prev;
};
/// Makes sure the calling thread holds the GIL (starting the interpreter on first use).
ISTHMUS_API gil_token gil_ensure();
/// Undoes gil_ensure (the slow case; inline callers skip tokens with state < 0).
ISTHMUS_API void gil_release(gil_token t) noexcept;
} // namespace detail

namespace python {

/// Starts the embedded interpreter on first use, or attaches to the running one when isthmus
/// lives inside a Python process. Idempotent and thread-safe; the interpreter is never
/// finalised (Note [never finalise]). Every pyvalue operation calls this itself.
ISTHMUS_API void ensure();
/// True once an interpreter runs in this process (started by isthmus or by python3).
ISTHMUS_API bool is_initialized() noexcept;
/// True when the calling thread holds the GIL.
ISTHMUS_API bool holds_gil() noexcept;
/// Drops now the Python references that threads without the GIL let go of (they wait for the
/// next thread that takes the GIL through isthmus: Note [deferred decref] in
/// py_boundary/src/gil.cpp), taking the GIL for it. For code that needs those objects finalised
/// at a known point (files closed, device memory back). Does nothing before the interpreter
/// runs or after it is gone.
ISTHMUS_API void drop_pending_references() noexcept;

/// RAII guard that makes sure the interpreter is running (`isthmus::python::interpreter py;` at
/// the top of main). Its destructor does nothing: the interpreter lives until the process exits.
class ISTHMUS_API interpreter {
public:
    interpreter();
    interpreter(const interpreter&) = delete;
    interpreter& operator=(const interpreter&) = delete;
};

/// RAII: holds the GIL for a scope (PyGILState_Ensure/Release; nests, any thread). pyvalue
/// operations take the GIL themselves; hold one explicitly to batch many of them: inside it,
/// each pyvalue operation only checks that the thread still holds the GIL (a few ns).
class ISTHMUS_API gil {
public:
    gil();
    ~gil();
    gil(const gil&) = delete;
    gil& operator=(const gil&) = delete;

private:
    detail::gil_token token_;
};

/// RAII: releases the GIL for a scope of native work when the calling thread holds it (and
/// does nothing when it does not), so that other threads can run Python meanwhile.
class ISTHMUS_API nogil {
public:
    nogil();
    ~nogil();
    nogil(const nogil&) = delete;
    nogil& operator=(const nogil&) = delete;

private:
    void* saved_; // the PyThreadState saved by PyEval_SaveThread, or null
};

/// Prepends `dir` to sys.path (no-op when already there).
ISTHMUS_API void add_sys_path(const std::string& dir);

/// The native module `isthmus._isthmus` (qvalue, init, zeros, ...), imported into this process:
/// through the isthmus package when it is on sys.path, else loaded from this very library and
/// registered as `isthmus._isthmus` and `isthmus` (Note [the native module in a C++ host]).
ISTHMUS_API pyvalue import_isthmus();

} // namespace python

} // namespace isthmus
