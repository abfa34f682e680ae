// The GIL at the Python boundary: the holder record, references dropped anywhere, native counters.
#include "boundary/gil.hpp"

#include "isthmus/python_ref.hpp"

namespace isthmus {

thread_local PyThreadState* boundary::t_gil_holder = nullptr;

boundary::native_counters& boundary::native_stats() noexcept {
    static native_counters counters;
    return counters;
}

// Note [GIL per operation] (py_in_cpp/src/pyvalue.cpp): references are taken and dropped with
// the GIL, the enclosing scope's when it holds one, else a PyGILState pair; after the
// interpreter is gone (process exit) they are leaked instead (Note [never finalise]).
void detail::incref(_object* o) noexcept {
    if (boundary::holds_gil_fast()) { // Note [GIL fast path]
        Py_INCREF(o);
        return;
    }
    if (!boundary::python_alive()) return;
    if (boundary::this_thread_holds_gil()) {
        Py_INCREF(o);
        return;
    }
    const PyGILState_STATE s = PyGILState_Ensure();
    Py_INCREF(o);
    PyGILState_Release(s);
}

void detail::decref(_object* o) noexcept {
    if (boundary::holds_gil_fast()) { // Note [GIL fast path]
        Py_DECREF(o);
        return;
    }
    if (!boundary::python_alive()) return; // Note [never finalise]: leak at exit
    if (boundary::this_thread_holds_gil()) {
        Py_DECREF(o);
        return;
    }
    const PyGILState_STATE s = PyGILState_Ensure();
    Py_DECREF(o);
    PyGILState_Release(s);
}

} // namespace isthmus
