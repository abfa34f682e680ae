// Stopping long operations: the host's poll function and the checks long loops make.
#pragma once

#include "isthmus/error.hpp"
#include "isthmus/export.hpp"

#include <atomic>
#include <chrono>
#include <thread>

namespace isthmus {

/// A host's answer to "should the running operation stop?". isthmus asks it from the thread
/// that started a long operation (a large matrix product, a plugin kernel's CPU launch), at
/// most every 50 ms while the operation runs; `true` stops the operation with
/// isthmus::interrupted. The Python module installs one that runs Python's signal handlers,
/// so that Ctrl-C raises KeyboardInterrupt (Note [interrupting long operations]).
using interrupt_poll_fn = bool (*)() noexcept;

/// Installs `poll` (nullptr: operations are never interrupted) and returns the previous one.
ISTHMUS_API interrupt_poll_fn set_interrupt_poll(interrupt_poll_fn poll) noexcept;

/// An operation was stopped by the host's poll (Python: KeyboardInterrupt, or whatever the
/// signal handler raised). Its output is discarded; its inputs are as they were, except the
/// arguments a kernel writes, which hold what the kernel wrote before it stopped.
class ISTHMUS_API interrupted : public error {
public:
    using error::error;
    ~interrupted() override;
};

/// One interruptible operation: made on the thread that starts it, shared by reference with
/// the threads that work for it. Loops call stop() between pieces of work (from any thread;
/// only the starting thread polls the host, at most every 50 ms) and skip the rest once it is
/// true; the starting thread then calls raise_if_stopped() after the threads joined.
class ISTHMUS_API interrupt_check {
public:
    interrupt_check() noexcept;
    /// An operation that `poll` stops instead of the host's (nullptr: nothing stops it): work no
    /// caller waits for, such as a background compile, polled on the thread that made it.
    explicit interrupt_check(interrupt_poll_fn poll) noexcept;
    interrupt_check(const interrupt_check&) = delete;
    interrupt_check& operator=(const interrupt_check&) = delete;

    /// True once the operation should stop. Cheap: an atomic load, and on the starting thread
    /// a clock read (and the host's poll every 50 ms).
    bool stop() noexcept;
    /// Whether stop() has become true (an atomic load; never polls).
    bool stopped() const noexcept { return stopped_.load(std::memory_order_relaxed); }
    /// Throws isthmus::interrupted if the operation was stopped; `what` names it.
    void raise_if_stopped(const char* what) const;

private:
    std::atomic<bool> stopped_{false};
    interrupt_poll_fn poll_;
    std::thread::id owner_;
    std::chrono::steady_clock::time_point next_poll_;
};

} // namespace isthmus
