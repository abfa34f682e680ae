// Ctrl-C during long native operations: the poll isthmus asks, and the exception it stashes.
#include "boundary/errors.hpp"

#include "isthmus/interrupt.hpp"

#include <pybind11/pybind11.h>

#include <atomic>

namespace isthmus::boundary {

namespace py = pybind11;

namespace {

// The exception Python's signal handler raised during a poll, kept until the operation has
// unwound to the binding that raises it (the calling thread's; one at a time).
struct stashed_exception {
    PyObject* type = nullptr;
    PyObject* value = nullptr;
    PyObject* traceback = nullptr;
};
thread_local stashed_exception t_stash;

// Python's main thread (PyThread_get_thread_ident's value), the only one that runs signal
// handlers; recorded when the module is imported.
std::atomic<unsigned long> g_main_thread{0};

// Note [Python's interrupt poll]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Called from the thread that started a long operation. Only Python's main thread runs signal
// handlers, so on any other thread the poll answers at once, without the GIL: a C++ thread of an
// embedding program never waits for the GIL here. On the main thread, which may or may not hold the
// GIL (small ops keep it, long ones release it), PyGILState_Ensure takes it in either case, and
// PyErr_CheckSignals runs the Python handlers of pending signals: the default SIGINT handler raises
// KeyboardInterrupt, a user's handler may raise anything or nothing. A raised exception is stashed
// and the operation stops; the binding's error translation raises it again.
bool poll_python_signals() noexcept {
    if (PyThread_get_thread_ident() != g_main_thread.load(std::memory_order_relaxed)) return false;
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

void install_interrupt_poll() {
    const py::object main = py::module_::import("threading").attr("main_thread")();
    g_main_thread = main.attr("ident").cast<unsigned long>();
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

} // namespace isthmus::boundary
