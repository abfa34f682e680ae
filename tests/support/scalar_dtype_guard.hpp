// What C++ suites that change the scalar precision share: a guard that restores it.
#pragma once

#include <isthmus/config.hpp>

/// Restores the scalar precision when a test ends, even on failure.
struct scalar_dtype_guard {
    isthmus::dtype saved = isthmus::scalar_dtype();
    ~scalar_dtype_guard() { isthmus::set_scalar_dtype(saved); }
};
