// The library's version, as compiled in and as loaded at run time.
#pragma once

#include "isthmus/export.hpp"

namespace isthmus {

#define ISTHMUS_VERSION_MAJOR 0
#define ISTHMUS_VERSION_MINOR 1
#define ISTHMUS_VERSION_PATCH 0

/// The version string of the loaded libisthmus ("0.1.0").
ISTHMUS_API const char* version() noexcept;

} // namespace isthmus
