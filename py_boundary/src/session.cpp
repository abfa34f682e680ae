// The Python session's state: between q.init() and q.destroy() (Note [init state]).
#include "boundary/session.hpp"

#include "isthmus/error.hpp"

#include <atomic>

namespace isthmus::boundary {

// Note [init state] (cpp_in_py/src/module.cpp) describes the rule; the state lives here because
// the exchanges (DLPack, the CUDA array interface) check it as the module functions do.
namespace {
std::atomic<session_state> g_state{session_state::never};
} // namespace

session_state session() noexcept {
    return g_state.load(std::memory_order_relaxed);
}

void set_session(session_state s) noexcept {
    g_state.store(s, std::memory_order_relaxed);
}

bool initialized() noexcept {
    return session() == session_state::running;
}

void require_init(const char* what) {
    switch (session()) {
    case session_state::running:
        return;
    case session_state::never:
        ISTHMUS_THROW(runtime_error, what,
                      ": isthmus is not initialised; call isthmus.init() first, e.g. "
                      "q.init(\"cpu\")");
    case session_state::destroyed:
        ISTHMUS_THROW(runtime_error, what,
                      ": isthmus was shut down by destroy(); call isthmus.init() again first");
    }
}

} // namespace isthmus::boundary
