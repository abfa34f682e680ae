// pyvalue: a Python object in C++ (attributes, calls, operators, subscripts, iteration).
#pragma once

// The parts, by concept (each includes what it needs; this header includes them all):
#include "isthmus/pyvalue/builders.hpp"   // pyimport, pyeval/pyexec, pyint, pytuple, pydict, ...
#include "isthmus/pyvalue/call_args.hpp"  // keyword arguments (kw, "name"_kw), call arguments
#include "isthmus/pyvalue/functions.hpp"  // pyfunc, py_callback, py_function
#include "isthmus/pyvalue/object.hpp"     // pyvalue, attr_ref, item_ref
#include "isthmus/pyvalue/operators.hpp"  // +, -, ==, ... with Python's semantics; printing
#include "isthmus/pyvalue/primitives.hpp" // the exported calls behind pyapi's members
#include "isthmus/pyvalue/pyapi.hpp"      // pyapi: attributes, items, calls, iteration, type checks
#include "isthmus/pyvalue/pyapi_members.hpp" // pyapi's inline members and iterator
#include "isthmus/pyvalue/with.hpp"          // context managers: with(), with_guard

#include "isthmus/py_convert.hpp" // the converters the templates above instantiate
