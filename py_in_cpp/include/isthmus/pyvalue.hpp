// pyvalue: a Python object in C++ (attributes, calls, operators, subscripts, iteration).
#pragma once

// The parts, by concept (each includes what it needs; this header includes them all):
#include "isthmus/pyvalue/builders.hpp"  // pyimport, pyeval/pyexec, pyint, pytuple, pydict, ...
#include "isthmus/pyvalue/core.hpp"      // pyvalue, attr_ref, item_ref, kwargs, calls, iteration
#include "isthmus/pyvalue/functions.hpp" // pyfunc, py_callback, py_function
#include "isthmus/pyvalue/operators.hpp" // +, -, ==, ... with Python's semantics; printing
#include "isthmus/pyvalue/with.hpp"      // context managers: with(), with_guard

#include "isthmus/py_convert.hpp" // the converters the templates above instantiate
