// Helpers shared by the embedded-Python suites: error capture, optional modules, references.
#pragma once

#include "error_text.hpp"

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
