// Tensor operations: indexing (declarations land with the core-ops work).
#pragma once

#include "isthmus/tensor.hpp"
#include "isthmus/value.hpp"
