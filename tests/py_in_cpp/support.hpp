// Helpers shared by the embedded-Python suites: error capture, optional modules, references.
#pragma once

#include <doctest/doctest.h>
#include <isthmus/py.hpp>

#include <functional>
#include <iostream>
#include <string>

/// Runs `f` and returns the python_error it threw; fails the test when it threw nothing.
inline isthmus::python_error python_error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const isthmus::python_error& e) {
        return e;
    }
    FAIL("expected an isthmus::python_error");
    throw std::logic_error("unreachable");
}

/// The message of what `f` threw, or "<no error>".
inline std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "<no error>";
}

inline bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

/// True when `name` imports; prints a skip message otherwise (tests then return early).
inline bool have_module(const char* name) {
    try {
        isthmus::pyimport(name);
        return true;
    } catch (const isthmus::python_error&) {
        std::cout << "skipped: Python module " << name << " is not installed\n";
        return false;
    }
}

/// Evaluates a Python expression with the variables of `vars` (a dict).
inline isthmus::pyvalue py_ref(const std::string& expr, const isthmus::pyvalue& vars) {
    return isthmus::pyeval(expr, isthmus::pyvalue(vars.attr("copy")()));
}
