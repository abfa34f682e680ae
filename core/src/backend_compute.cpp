// The compute contract's optional entries: what a backend without one answers (the op then composes
// the case or hands it to the CPU; see Note [one dispatch]).
#include "isthmus/backend.hpp"
#include "isthmus/error.hpp"

namespace isthmus::backend {

compute::~compute() = default;

// The optional entries: a backend without them says so, and the op composes or falls back.
bool compute::supports_variance(dtype) const {
    return false;
}
void compute::variance(const tensor&, void*, const tensor&, const void*, const std::vector<bool>&,
                       double, bool) {
    ISTHMUS_ASSERT(false, name(), ": variance called without supports_variance");
}
bool compute::supports_sort(dtype) const {
    return false;
}
void compute::sort(const tensor&, const void*, void*, int64_t*, bool) {
    ISTHMUS_ASSERT(false, name(), ": sort called without supports_sort");
}
bool compute::supports_searchsorted(dtype) const {
    return false;
}
void compute::searchsorted(const tensor&, const void*, const tensor&, const void*, int64_t*, bool) {
    ISTHMUS_ASSERT(false, name(), ": searchsorted called without supports_searchsorted");
}
bool compute::supports_linear(dtype) const {
    return false;
}
void compute::linear(dtype, void*, int64_t, const linear_spec&) {
    ISTHMUS_ASSERT(false, name(), ": linear called without supports_linear");
}
bool compute::supports_dotc(dtype) const {
    return false;
}
void compute::dotc(dtype, int64_t, const void*, const void*, void*) {
    ISTHMUS_ASSERT(false, name(), ": dotc called without supports_dotc");
}

} // namespace isthmus::backend
