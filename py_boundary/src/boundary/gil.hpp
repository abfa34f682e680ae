// The GIL at the Python boundary: who holds it (the fast path), and native sections that release
// it.
#pragma once

#include <pybind11/pybind11.h>

#include <atomic>
#include <cstdint>

namespace isthmus::boundary {

namespace py = pybind11;

/// The thread state under which an isthmus scope on this thread took the GIL (null outside
/// any scope; Note [GIL fast path] in py_in_cpp/src/interpreter.cpp). constinit and hidden: the
/// compiler then knows it needs no dynamic initialisation and lives in this library; the
/// initial-exec model makes a read one instruction (Note [static TLS for the GIL record]).
extern
    __attribute__((visibility("hidden"),
                   tls_model("initial-exec"))) thread_local constinit PyThreadState* t_gil_holder;

/// True when an enclosing isthmus scope took the GIL on this thread and the thread still holds
/// it (nobody released it meanwhile): a thread-local read and one pointer compare.
inline bool holds_gil_fast() noexcept {
    PyThreadState* h = t_gil_holder;
    return h && _PyThreadState_UncheckedGet() == h;
}

/// Drops the references that threads without the GIL left pending (Note [deferred decref] in
/// gil.cpp). The caller holds the GIL.
void drain_pending_decrefs() noexcept;

/// True while an interpreter runs and is not finalising (references may be touched).
inline bool python_alive() noexcept {
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsInitialized() && !Py_IsFinalizing();
#else
    return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}

/// True when this thread holds the GIL: the thread state that holds it is this thread's own
/// (PyGILState_Check without its "always true with sub-interpreters" shortcut).
inline bool this_thread_holds_gil() noexcept {
    PyThreadState* holder = _PyThreadState_UncheckedGet();
    return holder && holder == PyGILState_GetThisThreadState();
}

/// Counters of native sections (Note [native sections]).
struct native_counters {
    std::atomic<int> active{0};      ///< threads inside a native section now
    std::atomic<int> max_active{0};  ///< the most seen at once since the last reset
    std::atomic<int64_t> entered{0}; ///< sections entered since the last reset

    /// Counts a thread entering a section (three relaxed atomic operations).
    void enter() noexcept {
        entered.fetch_add(1, std::memory_order_relaxed);
        const int now = active.fetch_add(1, std::memory_order_relaxed) + 1;
        int seen = max_active.load(std::memory_order_relaxed);
        while (now > seen &&
               !max_active.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
        }
    }
    /// Counts a thread leaving a section.
    void leave() noexcept { active.fetch_sub(1, std::memory_order_relaxed); }

    /// Counts a section that keeps the GIL (Note [small ops keep the GIL] in
    /// cpp_in_py/src/qvalue/operators.cpp): the GIL orders such sections, so these plain fields
    /// need no atomic operations (three of them were 2% of a 1k-element add); the section sees the
    /// GIL-free ones that run meanwhile through `active`. Read and reset under the GIL.
    void enter_holding_gil() noexcept {
        ++held_entered;
        const int now = active.load(std::memory_order_relaxed) + 1;
        if (now > held_max) held_max = now;
    }
    int64_t held_entered = 0; ///< sections that kept the GIL, since the last reset
    int held_max = 0;         ///< the most threads inside at once seen by such a section
};
/// The process's counters (`isthmus._native_stats()` reports them).
extern __attribute__((visibility("hidden"))) constinit native_counters g_native_counters;
inline native_counters& native_stats() noexcept {
    return g_native_counters;
}

/// Releases the GIL for native work (like py::gil_scoped_release) and counts the threads inside.
///
/// Note [native sections]
/// ~~~~~~~~~~~~~~~~~~~~~~
/// Every binding that computes (ops, copies, transfers) runs its native part inside a
/// native_section, so other Python threads run meanwhile and two threads doing large ops use two
/// cores. The section also counts how many threads are inside at once, which
/// `isthmus._native_stats()` reports: the GIL test proves overlap by that count rather than by
/// timing. Three relaxed atomic operations per section cost a few nanoseconds.
class native_section {
public:
    native_section() noexcept { native_stats().enter(); }
    ~native_section() { native_stats().leave(); }
    native_section(const native_section&) = delete;
    native_section& operator=(const native_section&) = delete;

private:
    py::gil_scoped_release release_;
};

} // namespace isthmus::boundary
