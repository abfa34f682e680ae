// Out-of-line members of the error hierarchy (anchors their vtables in libisthmus).
#include "isthmus/error.hpp"

namespace isthmus {

error::~error() = default;
value_error::~value_error() = default;
type_error::~type_error() = default;
index_error::~index_error() = default;
memory_error::~memory_error() = default;
overflow_error::~overflow_error() = default;
not_implemented_error::~not_implemented_error() = default;
runtime_error::~runtime_error() = default;
internal_error::~internal_error() = default;

namespace detail {
void throw_internal(const char* cond, const char* file, int line, const std::string& msg) {
    throw internal_error(concat("internal error (a bug in isthmus): ", cond, " failed at ", file,
                                ":", line, msg.empty() ? "" : ": ", msg));
}
} // namespace detail
} // namespace isthmus
