// Umbrella header: the whole public C++ API of the core runtime.
#pragma once

#include "isthmus/config.hpp"
#include "isthmus/dtype.hpp"
#include "isthmus/error.hpp"
#include "isthmus/interrupt.hpp"
#include "isthmus/memory.hpp"
#include "isthmus/ops.hpp"
#include "isthmus/schedule.hpp"
#include "isthmus/storage.hpp"
#include "isthmus/tensor.hpp"
#include "isthmus/types.hpp"
#include "isthmus/value.hpp"
#include "isthmus/version.hpp"
