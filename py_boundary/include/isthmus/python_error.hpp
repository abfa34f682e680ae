// isthmus::python_error: a Python exception met by C++ code, and its way back into Python.
#pragma once

#include "isthmus/error.hpp"
#include "isthmus/export.hpp"
#include "isthmus/python_ref.hpp"

#include <string>

namespace isthmus {

/// A Python exception raised into C++: the exception's type name ("ValueError",
/// "ModuleNotFoundError"), its message (str(exc)) and the formatted traceback. what() is
/// "<type>: <message>". The exception object itself is kept, so rethrowing the error into
/// Python (returning from a C++ function called by Python) restores the original exception.
class ISTHMUS_API python_error : public error {
public:
    python_error(std::string type_name, std::string message, std::string traceback,
                 _object* exception);
    python_error(const python_error& other);
    python_error& operator=(const python_error& other);
    ~python_error() override;

    /// The Python exception type's name, e.g. "KeyError" (qualified for non-builtins:
    /// "numpy.exceptions.AxisError").
    const std::string& type_name() const noexcept { return type_; }
    /// str() of the exception.
    const std::string& message() const noexcept { return message_; }
    /// The formatted traceback (traceback.format_exception), empty when there is none.
    const std::string& traceback() const noexcept { return traceback_; }
    /// The exception object, borrowed (null when there is none); as a pyvalue: exception_of
    /// (isthmus/pyvalue/object.hpp).
    _object* exception_object() const noexcept { return exc_; }
    /// True when the exception is an instance of the Python class `type_name` (its own type or a
    /// base class, matched by __name__ or qualified name), e.g. matches("LookupError").
    bool matches(const std::string& type_name) const;
    /// Sets this as Python's current exception (the GIL must be held); used when the error
    /// crosses back into Python.
    void restore() const;

private:
    std::string type_, message_, traceback_;
    _object* exc_; // owned reference
};

} // namespace isthmus
