// All tensor operations: elementwise math, reductions, sorting, linear algebra, indexing,
// shape ops, creation and random numbers.
#pragma once

#include "isthmus/ops/creation.hpp"
#include "isthmus/ops/elementwise.hpp"
#include "isthmus/ops/fused.hpp"
#include "isthmus/ops/indexing.hpp"
#include "isthmus/ops/linalg.hpp"
#include "isthmus/ops/reduce.hpp"
#include "isthmus/ops/shape.hpp"
#include "isthmus/ops/sorting.hpp"
