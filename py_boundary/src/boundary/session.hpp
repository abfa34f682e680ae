// The Python session's state: between q.init() and q.destroy() (Note [init state]).
#pragma once

namespace isthmus::boundary {

/// Where the session stands: never initialised, running, or ended by destroy().
enum class session_state : int { never, running, destroyed };

/// The current state (a relaxed atomic read).
session_state session() noexcept;
/// Sets the state; the module's init() and destroy() call it under their own lock.
void set_session(session_state s) noexcept;
/// True between init() and destroy().
bool initialized() noexcept;
/// Throws runtime_error naming `what` unless init() was called (and destroy() was not since).
void require_init(const char* what);

} // namespace isthmus::boundary
