// Ctrl-C during long native operations: the poll isthmus asks, and the exception it stashes.
#include "bindings.hpp"

#include "isthmus/interrupt.hpp"

namespace isthmus::pymod {

namespace {

// The exception Python's signal handler raised during a poll, kept until the operation has
// unwound to the binding that raises it (the calling thread's; one at a time).
struct stashed_exception {
    PyObject* type = nullptr;
    PyObject* value = nullptr;
    PyObject* traceback = nullptr;
};
thread_local stashed_exception t_stash;

// Note [Python's interrupt poll]: called from the thread that started a long operation, which
// may or may not hold the GIL (small ops keep it, long ones release it): PyGILState_Ensure
// takes it in either case. PyErr_CheckSignals runs the Python handlers of pending signals on
// the main thread (elsewhere it returns 0): the default SIGINT handler raises
// KeyboardInterrupt, a user's handler may raise anything or nothing. A raised exception is
// stashed and the operation stops; the binding's error translation raises it again.
bool poll_python_signals() noexcept {
    if (Py_IsInitialized() == 0) return false;
    const PyGILState_STATE gil = PyGILState_Ensure();
    bool stop = false;
    if (PyErr_CheckSignals() != 0) {
        Py_XDECREF(t_stash.type);
        Py_XDECREF(t_stash.value);
        Py_XDECREF(t_stash.traceback);
        PyErr_Fetch(&t_stash.type, &t_stash.value, &t_stash.traceback);
        stop = true;
    }
    PyGILState_Release(gil);
    return stop;
}

} // namespace

void install_interrupt_poll() noexcept {
    set_interrupt_poll(&poll_python_signals);
}

void raise_interrupted(const interrupted& e) noexcept {
    if (t_stash.type != nullptr) {
        PyErr_Restore(t_stash.type, t_stash.value, t_stash.traceback);
        t_stash = {};
        return;
    }
    PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
}

} // namespace isthmus::pymod
