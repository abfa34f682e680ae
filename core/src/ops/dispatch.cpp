// The scheduling rule: which resource an op runs on (the backend registry, backend_registry.cpp,
// says which backend runs there), device scopes and the transfer threshold.
#include "ops/dispatch.hpp"
#include "isthmus/schedule.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <vector>

namespace isthmus::ops {

namespace {
thread_local resource_id t_scoped = -1;

std::atomic<int64_t>& threshold() {
    static std::atomic<int64_t> t{[] {
        const char* env = std::getenv("ISTHMUS_TRANSFER_MIN_ELEMENTS");
        if (env && *env) {
            char* end = nullptr;
            const long long v = std::strtoll(env, &end, 10);
            if (end && *end == '\0' && v >= 0) return static_cast<int64_t>(v);
        }
        return int64_t{65536};
    }()};
    return t;
}
} // namespace

resource_id pick_resource(std::initializer_list<const tensor*> inputs) {
    return pick_resource(std::span<const tensor* const>(inputs.begin(), inputs.size()));
}

resource_id pick_resource(std::span<const tensor* const> inputs) {
    auto usable = [](resource_id r) { return backend::has_compute(r) ? r : MEMRESOURCE_CPU; };
    if (t_scoped >= 0) return usable(t_scoped); // resolved by device_scope
    for (const tensor* t : inputs)
        if (t && t->defined())
            if (resource_id p = t->storage()->pinned_to(); p >= 0) return usable(p);
    const resource_id def = default_resource();
    // Fast path (no allocation): every input is valid on the default device.
    bool all_on_default = true;
    for (const tensor* t : inputs)
        if (t && t->defined() && !t->storage()->valid_on(def)) all_on_default = false;
    if (all_on_default) return usable(def);
    // Resources valid for every input.
    std::vector<resource_id> common;
    bool first = true;
    int64_t elements = 0;
    for (const tensor* t : inputs) {
        if (!t || !t->defined()) continue;
        elements += t->numel();
        auto v = t->storage()->valid_resources();
        if (first) {
            common = v;
            first = false;
        } else {
            std::vector<resource_id> both;
            std::set_intersection(common.begin(), common.end(), v.begin(), v.end(),
                                  std::back_inserter(both));
            common = std::move(both);
        }
    }
    if (common.empty()) return usable(def);
    // Note [transfer threshold]
    // ~~~~~~~~~~~~~~~~~~~~~~~~~
    // Inputs valid together only away from the default device stay there for small work (a transfer
    // would cost more than the op) and move to the default device, when it has a backend, for work
    // of at least transfer_threshold() elements; once moved they stay valid there, so the ops after
    // it run there without transfers.
    if (def != MEMRESOURCE_CPU && backend::has_compute(def) && elements >= threshold().load())
        return def;
    return usable(common.front());
}

} // namespace isthmus::ops

namespace isthmus {

resource_id choose_resource(std::span<const tensor* const> inputs) {
    return ops::pick_resource(inputs);
}

device_scope::device_scope(resource_id resource) : previous_(ops::t_scoped) {
    const resource_id r = resolve_resource(resource);
    ISTHMUS_CHECK(find_resource(r) != nullptr, value_error, "device_scope: resource ", resource,
                  " is not registered (call init for its device first)");
    ops::t_scoped = r;
}

device_scope::~device_scope() {
    ops::t_scoped = previous_;
}

resource_id scoped_resource() noexcept {
    return ops::t_scoped;
}

tensor to_resource(const tensor& t, resource_id resource, bool copy) {
    ISTHMUS_CHECK(t.defined(), value_error, "to_resource: the tensor is undefined");
    const resource_id r = resolve_resource(resource);
    ISTHMUS_CHECK(find_resource(r) != nullptr, value_error, "to_resource: resource ", resource,
                  " is not registered (call init for its device first)");
    if (copy) {
        tensor out = tensor::empty(t.shape(), t.dtype(), r);
        device_scope here(r);
        out.copy_from(t);
        return out;
    }
    if (t.numel() > 0) {
        t.lock(lock_mode::read, r);
        t.unlock(lock_mode::read, r);
    }
    return t;
}

void set_transfer_threshold(int64_t elements) {
    ISTHMUS_CHECK(elements >= 0, value_error,
                  "set_transfer_threshold: expected a count of elements >= 0, got ", elements);
    ops::threshold().store(elements);
}

int64_t transfer_threshold() noexcept {
    return ops::threshold().load();
}

} // namespace isthmus
