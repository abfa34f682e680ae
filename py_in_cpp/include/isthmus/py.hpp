// Python from C++ in one include: the interpreter and GIL, pyvalue, and the conversions.
#pragma once

#include "isthmus/py_convert.hpp"
#include "isthmus/python.hpp"
#include "isthmus/pyvalue.hpp"
