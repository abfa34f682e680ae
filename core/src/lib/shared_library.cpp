// Anchors libisthmus.so: the parts that exist only in the shared library (its version query).
#include "isthmus/version.hpp"

namespace isthmus {

const char* version() noexcept {
#define ISTHMUS_STR2(x) #x
#define ISTHMUS_STR(x) ISTHMUS_STR2(x)
    return ISTHMUS_STR(ISTHMUS_VERSION_MAJOR) "." ISTHMUS_STR(
        ISTHMUS_VERSION_MINOR) "." ISTHMUS_STR(ISTHMUS_VERSION_PATCH);
}

} // namespace isthmus
