// Call contexts: one per host -> plugin call, its first error and what the plugin allocated
// (See Note [call context]).
#include "call_context.hpp"

namespace isthmus::plugin_host::detail {

call_context::call_context() {
    base.host = &host_table();
    base.ctx = this;
}

call_context::~call_context() {
    finish();
}

void call_context::fail(int32_t c, const char* msg, std::exception_ptr e) {
    std::lock_guard lk(mu);
    if (code != 0) return; // the first error wins
    code = c == 0 ? ISTHMUS_ERR_RUNTIME : c;
    message = msg ? msg : "";
    cause = std::move(e);
}

void call_context::rethrow(const std::string& prefix) const {
    if (cause) std::rethrow_exception(cause);
    const std::string m = prefix + message;
    switch (code) {
    case ISTHMUS_ERR_VALUE:
        throw value_error(m);
    case ISTHMUS_ERR_TYPE:
        throw type_error(m);
    case ISTHMUS_ERR_INDEX:
        throw index_error(m);
    case ISTHMUS_ERR_MEMORY:
        throw memory_error(m);
    case ISTHMUS_ERR_OVERFLOW:
        throw overflow_error(m);
    default:
        throw runtime_error(m);
    }
}

void call_context::finish() {
    for (auto& o : results)
        if (o && o->t.defined() && !o->taken) {
            try {
                o->t.unlock(o->mode, MEMRESOURCE_CPU);
            } catch (...) {
            }
            o->t = tensor();
        }
}

} // namespace isthmus::plugin_host::detail
