// The embedded interpreter: start once or attach, the GIL guards, sys.path, the native module.
#include "embed.hpp"

#include <atomic>
#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <string>

namespace isthmus {

// Note [never finalise]
// ~~~~~~~~~~~~~~~~~~~~~
// The interpreter is started at most once per process and never finalised: NumPy (and most C
// extensions) cannot be initialised twice in one process, and pyvalues held in static storage may
// be destroyed after main returns. Destroying a pyvalue after the interpreter is gone leaks the
// reference instead (detail::decref).
//
// Note [start and attach]
// ~~~~~~~~~~~~~~~~~~~~~~~
// ensure() checks Py_IsInitialized(). When isthmus was imported by python3 (or the host started
// Python itself) it attaches: nothing is started, and pyvalue operations take the GIL through
// PyGILState, which works on the interpreter's own threads and on threads Python has never seen.
// Otherwise it starts the interpreter from a PyConfig:
// - signal handlers stay the host's (install_signal_handlers = 0), argv is not parsed;
// - virtual environments: Python finds a venv through the pyvenv.cfg next to its executable,
//   and a C++ host's executable is not python; when $VIRTUAL_ENV names a venv, its
//   bin/python3 is given as the executable, so the venv's prefix and site-packages are used
//   exactly as when that venv's python runs (PYTHONPATH and PYTHONHOME work as usual too);
// - after Py_InitializeFromConfig the starting thread holds the GIL; it is released at once
//   (PyEval_SaveThread), or any other thread that wants Python would wait forever
//   (pybind11 #1273). From then on every thread, the starting one included, takes the GIL
//   through PyGILState_Ensure like any other.
namespace {

std::atomic<bool> g_ready{false};
std::once_flag g_once;

void start_interpreter() {
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.install_signal_handlers = 0;
    config.parse_argv = 0;
    PyStatus status = PyStatus_Ok();
    if (const char* venv = std::getenv("VIRTUAL_ENV"); venv && *venv) {
        const std::string exe = std::string(venv) + "/bin/python3";
        status = PyConfig_SetBytesString(&config, &config.executable, exe.c_str());
    }
    if (!PyStatus_Exception(status)) status = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(status))
        ISTHMUS_THROW(runtime_error, "could not start the Python interpreter: ",
                      status.err_msg ? status.err_msg : "unknown error",
                      status.func ? std::string(" (in ") + status.func + ")" : std::string());
    (void)PyEval_SaveThread(); // See Note [start and attach]: release the GIL
}

} // namespace

// Note [GIL fast path]
// ~~~~~~~~~~~~~~~~~~~~
// PyGILState_Ensure/Release cost ~10-20 ns each even when the thread already holds the GIL (a TSS
// lookup, the holder check, the counter), and a C++ -> Python call through pyvalue used to pay them
// for the call, for each converted argument and for each reference it dropped. Now an isthmus scope
// that takes the GIL (gil_acquire: python::gil, pyapi::operator(), the exported operations) records
// the thread state it took it under in the thread-local t_gil_holder, and restores the enclosing
// scope's record when it ends; a C++ callback entered from Python records the calling thread state
// the same way (python_holds). Nested operations then check `t_gil_holder && current thread state
// == t_gil_holder`: a thread-local read and one pointer compare, no PyGILState call. The check
// proves the GIL is held, not merely that a scope is open: whoever releases the GIL inside a scope
// (python::nogil, pybind11's gil_scoped_release, Py_BEGIN_ALLOW_THREADS in an extension,
// time.sleep) detaches the thread state, so the current one is null or another thread's and the
// operation falls back to PyGILState_Ensure, which re-takes the GIL correctly. The recorded thread
// state cannot be freed and reused by another thread while the record lives: the scope that
// recorded it holds a PyGILState count on it (or Python holds it for the running call).
detail::gil_token embed::gil_acquire() {
    python::ensure();
    const detail::gil_token t{static_cast<int>(PyGILState_Ensure()), t_gil_holder};
    t_gil_holder = _PyThreadState_UncheckedGet();
    boundary::drain_pending_decrefs(); // Note [deferred decref]
    return t;
}

void embed::gil_restore(detail::gil_token t) noexcept {
    t_gil_holder = static_cast<PyThreadState*>(t.prev);
    PyGILState_Release(static_cast<PyGILState_STATE>(t.state));
}

namespace python {

void ensure() {
    if (g_ready.load(std::memory_order_acquire)) [[likely]]
        return;
    std::call_once(g_once, [] {
        if (!Py_IsInitialized()) start_interpreter();
        g_ready.store(true, std::memory_order_release);
    });
}

bool is_initialized() noexcept {
    return Py_IsInitialized() != 0;
}

bool holds_gil() noexcept {
    return Py_IsInitialized() && PyGILState_Check();
}

void drop_pending_references() noexcept {
    if (!boundary::python_alive()) return;
    const PyGILState_STATE s = PyGILState_Ensure();
    boundary::drain_pending_decrefs();
    PyGILState_Release(s);
}

interpreter::interpreter() {
    ensure();
}

gil::gil() : token_(detail::gil_ensure()) {}
gil::~gil() {
    detail::gil_release(token_);
}

nogil::nogil() : saved_(nullptr) {
    if (holds_gil()) saved_ = PyEval_SaveThread();
}
nogil::~nogil() {
    if (saved_) PyEval_RestoreThread(static_cast<PyThreadState*>(saved_));
}

void add_sys_path(const std::string& dir) {
    gil g;
    PyObject* path = PySys_GetObject("path"); // borrowed
    ISTHMUS_CHECK(path && PyList_Check(path), runtime_error, "sys.path is not a list");
    pyvalue d = embed::check(PyUnicode_FromStringAndSize(dir.data(), Py_ssize_t(dir.size())));
    const int has = PySequence_Contains(path, d.get());
    if (has < 0) embed::throw_python_error();
    if (has == 0 && PyList_Insert(path, 0, d.get()) < 0) embed::throw_python_error();
}

// Note [the native module in a C++ host]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// qvalues (runtime values seen from Python) are instances of classes that the `_isthmus` extension
// module registers when it is imported; its init function lives in this very library. In a C++ host
// nothing imports it, so import_isthmus() does, in this order:
// 1. `isthmus._isthmus` already in sys.modules (the library was imported by Python, or an
//    earlier call): use it;
// 2. the isthmus package is importable from sys.path: `import isthmus` (its _isthmus file is
//    a link to, or a copy of, this library; glibc maps a file once by device and inode, so
//    the same code and the same static state serve both names);
// 3. otherwise, load this library file itself (found by dladdr on one of its own functions)
//    with importlib's ExtensionFileLoader under the name `isthmus._isthmus`, which runs
//    PyInit__isthmus with whatever init protocol pybind11 uses (single- or multi-phase),
//    and register it in sys.modules as `isthmus._isthmus` and as `isthmus`.
// No second copy of the library is ever loaded and nothing depends on the file's name.
pyvalue import_isthmus() {
    gil g;
    PyObject* modules = PyImport_GetModuleDict(); // borrowed
    if (PyObject* m = PyDict_GetItemString(modules, "isthmus._isthmus")) return pyvalue::borrow(m);
    pyvalue util = pyimport("importlib.util");
    if (!util.attr("find_spec")("isthmus").is_none()) {
        pyimport("isthmus");
        return pyimport("isthmus._isthmus");
    }
    Dl_info info{};
    ISTHMUS_CHECK(dladdr(reinterpret_cast<void*>(&import_isthmus), &info) && info.dli_fname,
                  runtime_error, "import_isthmus: cannot find the path of libisthmus");
    pyvalue machinery = pyimport("importlib.machinery");
    pyvalue loader = machinery.attr("ExtensionFileLoader")("isthmus._isthmus", info.dli_fname);
    pyvalue spec = util.attr("spec_from_file_location")("isthmus._isthmus", info.dli_fname,
                                                        kw("loader") = loader);
    pyvalue mod = util.attr("module_from_spec")(spec);
    if (PyDict_SetItemString(modules, "isthmus._isthmus", mod.get()) < 0)
        embed::throw_python_error();
    try {
        loader.attr("exec_module")(mod);
    } catch (...) {
        PyDict_DelItemString(modules, "isthmus._isthmus");
        throw;
    }
    if (!PyDict_GetItemString(modules, "isthmus"))
        if (PyDict_SetItemString(modules, "isthmus", mod.get()) < 0) embed::throw_python_error();
    return mod;
}

} // namespace python
} // namespace isthmus
