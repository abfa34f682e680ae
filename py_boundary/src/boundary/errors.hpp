// Errors across the Python boundary, both ways: C++ exceptions into Python, Python's into C++.
#pragma once

#include "isthmus/error.hpp"
#include "isthmus/interrupt.hpp"
#include "isthmus/python_error.hpp"

#include <exception>

namespace isthmus::boundary {

/// Sets the Python error for a C++ exception (Note [error mapping]): isthmus errors raise the
/// matching built-in type, python_error restores its own exception, `interrupted` raises what the
/// signal handler raised, pybind11 errors as pybind11 would, other std::exceptions RuntimeError.
/// For C callbacks that must return -1/NULL; the GIL must be held.
void set_python_error(std::exception_ptr p) noexcept;
/// set_python_error, and the exception_ptr rides along on the Python exception so that it can be
/// rethrown as it was when it reaches C++ again (Note [exception round trip]): C++ callbacks
/// called from Python.
void raise_in_python(std::exception_ptr p) noexcept;
/// Turns Python's current exception into a C++ exception and throws it: the original C++
/// exception when the Python one carries it (Note [exception round trip]), else python_error.
/// The GIL must be held and an exception must be set.
[[noreturn]] void throw_python_error();
/// Registers the isthmus error -> Python exception translation with pybind11 (once; global, so
/// that functions bound by any layer raise the same types).
void register_error_translator();

/// Makes long native operations interruptible by Ctrl-C: installs the interrupt poll that runs
/// Python's signal handlers (Note [Python's interrupt poll], interrupts.cpp).
void install_interrupt_poll();
/// Raises the exception that stopped an interrupted operation (KeyboardInterrupt, or what a
/// user's signal handler raised).
void raise_interrupted(const interrupted& e) noexcept;

} // namespace isthmus::boundary
