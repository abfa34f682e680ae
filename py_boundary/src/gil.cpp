// The GIL at the Python boundary: the holder record, references dropped anywhere, native counters.
#include "boundary/gil.hpp"

#include "isthmus/python_ref.hpp"

#include <atomic>
#include <thread>
#include <vector>

namespace isthmus {

// Note [static TLS for the GIL record]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Every pyvalue operation reads t_gil_holder (Note [GIL fast path]). In a shared library the
// default (general-dynamic) model reads it through a call to __tls_get_addr, which was a third of
// pyvalue's overhead over a bare pybind11 call (bench/README.md). The initial-exec model makes the
// read one instruction at a fixed offset from the thread pointer; the price is that the library's
// TLS block (112 bytes: this record, pybind11's and a few of the runtime's) must fit glibc's static
// TLS reserve when the library is dlopen'd (`import isthmus`). glibc keeps a surplus for exactly
// this use (512 bytes or more since 2.32, the rtld.optional_static_tls tunable), as libGL and
// jemalloc rely on; a process that has spent it gets "cannot allocate memory in static TLS block"
// at import, which GLIBC_TUNABLES=glibc.rtld.optional_static_tls=<bytes> raises. C++ programs that
// link the library directly get the block at startup and cannot fail this way. TLS descriptors
// (-mtls-dialect=gnu2) would avoid the reserve, but glibc before 2.39 clobbers vector registers in
// their slow path.
thread_local constinit PyThreadState* boundary::t_gil_holder = nullptr;

constinit boundary::native_counters boundary::g_native_counters;

// Note [GIL per operation] (py_in_cpp/src/pyvalue.cpp): references are taken and dropped with
// the GIL, the enclosing scope's when it holds one, else a PyGILState pair; after the
// interpreter is gone (process exit) they are leaked instead (Note [never finalise]).
namespace {

[[gnu::noinline]] void incref_slow(PyObject* o) noexcept {
    if (!boundary::python_alive()) return;
    if (boundary::this_thread_holds_gil()) {
        Py_INCREF(o);
        return;
    }
    const PyGILState_STATE s = PyGILState_Ensure();
    Py_INCREF(o);
    PyGILState_Release(s);
}

} // namespace

void detail::incref(_object* o) noexcept {
    if (boundary::holds_gil_fast()) [[likely]] { // Note [GIL fast path]
        Py_INCREF(o);
        return;
    }
    incref_slow(o); // out of line: the fast path needs no stack frame
}

// Note [deferred decref]
// ~~~~~~~~~~~~~~~~~~~~~~
// A reference dropped on a thread without the GIL used to take the GIL for one Py_DECREF (a
// PyGILState_Ensure/Release pair, ~50 ns), and the most common case is the result of a call made
// from such a thread, dropped right after the call gave the GIL back: every such call paid for the
// GIL twice. Now the reference goes into a pending list (a spin lock and a push) and is dropped by
// the next thread that takes the GIL through isthmus (boundary::drain_pending_decrefs in
// gil_acquire; PyO3's reference pool works the same way). When the list reaches 16 entries,
// CPython's main thread is also asked to drop them at its next check for pending calls
// (Py_AddPendingCall, which needs no GIL; asking on every drop cost more than the GIL pair it
// saves), and past 256 they are dropped at once under the GIL, so memory held this way stays
// bounded. What changes for users: an object whose last reference a GIL-less thread drops is
// finalised later, on another thread (as when Python's cyclic collector frees it): at the latest
// when a thread next takes the GIL through isthmus, or at python::drop_pending_references(); after
// the interpreter is gone references are leaked as before (Note [never finalise]).
namespace {

struct pending_decrefs {
    std::atomic_flag busy = ATOMIC_FLAG_INIT;
    std::atomic<size_t> count{0};
    std::vector<PyObject*> objects;

    // Held for a push or a swap only: a spin lock, yielding under contention.
    void lock() noexcept {
        while (busy.test_and_set(std::memory_order_acquire))
            while (busy.test(std::memory_order_relaxed)) std::this_thread::yield();
    }
    void unlock() noexcept { busy.clear(std::memory_order_release); }
};

pending_decrefs& pending() noexcept {
    static auto* p = new pending_decrefs; // never destroyed: threads may drop references at exit
    return *p;
}

constexpr size_t pending_call_at = 16, pending_limit = 256;

int drain_from_pending_call(void*) {
    boundary::drain_pending_decrefs();
    return 0;
}

} // namespace

void boundary::drain_pending_decrefs() noexcept {
    pending_decrefs& p = pending();
    if (p.count.load(std::memory_order_relaxed) == 0) return;
    std::vector<PyObject*> taken;
    p.lock();
    taken.swap(p.objects);
    p.count.store(0, std::memory_order_relaxed);
    p.unlock();
    for (PyObject* o : taken) Py_DECREF(o); // may run __del__, which may drop more
    taken.clear();
    p.lock();
    if (p.objects.empty()) p.objects.swap(taken); // keeps the capacity: pushes need no malloc
    p.unlock();
}

namespace {

[[gnu::noinline]] void decref_slow(PyObject* o) noexcept {
    if (!boundary::python_alive()) return; // See Note [never finalise]: leak at exit
    if (boundary::this_thread_holds_gil()) {
        Py_DECREF(o);
        return;
    }
    // See Note [deferred decref]
    pending_decrefs& p = pending();
    size_t n = 0;
    p.lock();
    try {
        p.objects.push_back(o);
        n = p.objects.size();
        p.count.store(n, std::memory_order_relaxed);
    } catch (...) { // no memory for the list: drop it now, with the GIL
        p.unlock();
        const PyGILState_STATE s = PyGILState_Ensure();
        Py_DECREF(o);
        PyGILState_Release(s);
        return;
    }
    p.unlock();
    if (n == pending_call_at) {
        Py_AddPendingCall(&drain_from_pending_call, nullptr); // a full queue: the next taker
    } else if (n > pending_limit) {
        const PyGILState_STATE s = PyGILState_Ensure();
        boundary::drain_pending_decrefs();
        PyGILState_Release(s);
    }
}

} // namespace

void detail::decref(_object* o) noexcept {
    if (boundary::holds_gil_fast()) [[likely]] { // Note [GIL fast path]
        Py_DECREF(o);
        return;
    }
    decref_slow(o);
}

} // namespace isthmus
