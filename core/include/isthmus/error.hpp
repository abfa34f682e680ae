// The typed error hierarchy, the user-input check macro, and internal assertions.
#pragma once

#include "isthmus/export.hpp"

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace isthmus {

/// Base of every error isthmus raises. Each subclass maps onto one Python exception type:
/// value_error -> ValueError, type_error -> TypeError, index_error -> IndexError,
/// overflow_error -> OverflowError, memory_error -> MemoryError,
/// not_implemented_error -> NotImplementedError, interrupted (isthmus/interrupt.hpp) ->
/// KeyboardInterrupt, runtime_error (and this base) -> RuntimeError.
class ISTHMUS_API error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
    ~error() override;
};

/// A value has the right type but a wrong content: a bad shape, a malformed type name.
class ISTHMUS_API value_error : public error {
public:
    using error::error;
    ~value_error() override;
};

/// A value of the wrong type or dtype was given.
class ISTHMUS_API type_error : public error {
public:
    using error::error;
    ~type_error() override;
};

/// An index or axis out of range.
class ISTHMUS_API index_error : public error {
public:
    using error::error;
    ~index_error() override;
};

/// A number does not fit the type it is converted to (NumPy 2: "Python integer 300 out of
/// bounds for int8").
class ISTHMUS_API overflow_error : public error {
public:
    using error::error;
    ~overflow_error() override;
};

/// An allocation failed even after eviction.
class ISTHMUS_API memory_error : public error {
public:
    using error::error;
    ~memory_error() override;
};

/// A feature that exists in the API but not for this dtype, device or configuration.
class ISTHMUS_API not_implemented_error : public error {
public:
    using error::error;
    ~not_implemented_error() override;
};

/// A state error: calling before init, a conflicting lock, a failed backend call.
class ISTHMUS_API runtime_error : public error {
public:
    using error::error;
    ~runtime_error() override;
};

/// An internal invariant was broken: a bug in isthmus, never the user's input.
class ISTHMUS_API internal_error : public error {
public:
    using error::error;
    ~internal_error() override;
};

namespace detail {

/// Concatenates any streamable arguments into one message string.
template <typename... Args>
std::string concat(Args&&... args) {
    std::ostringstream os;
    (os << ... << std::forward<Args>(args));
    return os.str();
}

[[noreturn]] ISTHMUS_API void throw_internal(const char* cond, const char* file, int line,
                                             const std::string& msg);

} // namespace detail
} // namespace isthmus

/// Checks a condition on user input; on failure throws `isthmus::ErrType` whose message is the
/// concatenation of the remaining arguments. Use for everything a caller can get wrong.
#define ISTHMUS_CHECK(cond, ErrType, ...)                                                          \
    do {                                                                                           \
        if (!(cond)) [[unlikely]]                                                                  \
            throw ::isthmus::ErrType(::isthmus::detail::concat(__VA_ARGS__));                      \
    } while (0)

/// Throws `isthmus::ErrType` with a message concatenated from the arguments.
#define ISTHMUS_THROW(ErrType, ...) throw ::isthmus::ErrType(::isthmus::detail::concat(__VA_ARGS__))

/// Checks an internal invariant (a bug if it fails); names the condition, file and line.
#define ISTHMUS_ASSERT(cond, ...)                                                                  \
    do {                                                                                           \
        if (!(cond)) [[unlikely]]                                                                  \
            ::isthmus::detail::throw_internal(                                                     \
                #cond, __FILE__, __LINE__,                                                         \
                ::isthmus::detail::concat("" __VA_OPT__(, ) __VA_ARGS__));                         \
    } while (0)
