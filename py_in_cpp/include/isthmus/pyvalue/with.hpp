// Python context managers from C++: isthmus::with and the RAII with_guard.
#pragma once

#include "isthmus/pyvalue/pyapi_members.hpp"

#include <exception>
#include <functional>

namespace isthmus {

/// `with ctx as x: body(x)`: calls __enter__, runs `body` with its result, then __exit__. An
/// exception thrown by `body` is passed to __exit__ as (type, value, traceback): Python
/// exceptions as themselves, isthmus errors as the matching Python exception, other C++
/// exceptions as RuntimeError; when __exit__ returns true it is suppressed, else rethrown as
/// it was. An exception raised by __exit__ itself is thrown as python_error.
ISTHMUS_API void with(const pyvalue& ctx, const std::function<void(pyvalue&)>& body);

/// RAII `with`: the constructor enters, the destructor exits. Exiting normally passes
/// (None, None, None); exiting by a C++ exception (stack unwinding) passes a RuntimeError
/// saying that a C++ exception is propagating (a destructor cannot see the exception itself;
/// use isthmus::with for exact exception info). An exception raised by __exit__ is thrown
/// from the destructor when not unwinding (call exit() to get it at a chosen point) and
/// reported to stderr while unwinding.
class ISTHMUS_API with_guard {
public:
    // Note [uncaught count in the caller]
    // ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    // std::uncaught_exceptions() is read here, inline, in the caller's code. A toolchain that links
    // the C++ runtime statically gives the program and libisthmus a count each, and only the
    // program's sees an exception the program throws.
    explicit with_guard(pyvalue ctx) : uncaught_(std::uncaught_exceptions()) {
        enter(std::move(ctx));
    }
    ~with_guard() noexcept(false) { leave(std::uncaught_exceptions() != uncaught_); }
    with_guard(const with_guard&) = delete;
    with_guard& operator=(const with_guard&) = delete;

    /// The value __enter__ returned (`as x`).
    const pyvalue& value() const noexcept { return entered_; }
    /// Exits now with (None, None, None); the destructor then does nothing.
    void exit();

private:
    void enter(pyvalue ctx);
    void leave(bool unwinding);

    pyvalue ctx_, exit_, entered_;
    int uncaught_;
};

} // namespace isthmus
