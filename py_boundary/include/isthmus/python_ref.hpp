// References to Python objects that any thread may take and drop, with or without the GIL.
#pragma once

#include "isthmus/export.hpp"

struct _object; // CPython's PyObject; pybind11 and Python.h stay out of the public headers.

namespace isthmus::detail {

/// Py_INCREF with the GIL: nothing to take when the calling thread holds it (Note [GIL fast
/// path]), else one PyGILState_Ensure/Release pair; nothing after the interpreter is gone.
ISTHMUS_API void incref(_object* o) noexcept;
/// Py_DECREF the same way; at process exit, after the interpreter is gone, the reference is
/// leaked instead (Note [never finalise]).
ISTHMUS_API void decref(_object* o) noexcept;

} // namespace isthmus::detail
