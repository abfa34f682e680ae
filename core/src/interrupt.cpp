// Stopping long operations: the installed poll function and interrupt_check.
#include "isthmus/interrupt.hpp"

namespace isthmus {

// Note [interrupting long operations]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A Ctrl-C reaches a Python process as SIGINT, whose C handler only sets a flag; Python raises
// KeyboardInterrupt when its main thread next runs bytecode or calls PyErr_CheckSignals, which
// never happens while a native operation holds it. So long operations poll: interrupt_check asks
// the host's poll function from the thread that started the operation (the Python main thread),
// with the GIL taken for the call, every 50 ms of work at most, which bounds the delay between the
// key and the exception by 50 ms plus one piece of work (a panel of a matrix product, a block of a
// kernel launch; each well under a second). Polling from the starting thread only keeps the GIL
// away from worker threads and follows Python's rule that signal handlers run on the main thread.
// The poll is a function pointer the host installs, not a dependency on Python: a C++ host can stop
// operations from a GUI's cancel button the same way. Operations that finish in well under a second
// (every elementwise op and reduction of data that fits in memory bandwidth-bound time) do not
// poll.
namespace {
std::atomic<interrupt_poll_fn> g_poll{nullptr};
constexpr auto k_poll_interval = std::chrono::milliseconds(50);
} // namespace

interrupt_poll_fn set_interrupt_poll(interrupt_poll_fn poll) noexcept {
    return g_poll.exchange(poll);
}

interrupted::~interrupted() = default;

interrupt_check::interrupt_check() noexcept
    : poll_(g_poll.load(std::memory_order_acquire)), owner_(std::this_thread::get_id()),
      next_poll_(std::chrono::steady_clock::now() + k_poll_interval) {}

interrupt_check::interrupt_check(interrupt_poll_fn poll) noexcept
    : poll_(poll), owner_(std::this_thread::get_id()),
      next_poll_(std::chrono::steady_clock::now() + k_poll_interval) {}

bool interrupt_check::stop() noexcept {
    if (stopped_.load(std::memory_order_relaxed)) return true;
    if (poll_ == nullptr || std::this_thread::get_id() != owner_) return false;
    const auto now = std::chrono::steady_clock::now();
    if (now < next_poll_) return false;
    next_poll_ = now + k_poll_interval;
    if (!poll_()) return false;
    stopped_.store(true, std::memory_order_relaxed);
    return true;
}

void interrupt_check::raise_if_stopped(const char* what) const {
    if (stopped()) throw interrupted(std::string(what) + ": interrupted");
}

} // namespace isthmus
