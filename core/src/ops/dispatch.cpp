// The scheduling rule: which resource an op runs on, and which resources have a backend.
#include "ops/dispatch.hpp"
#include "isthmus/backend.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>

namespace isthmus::ops {

namespace {
std::array<std::atomic<bool>, max_resource_id + 1>& backends() {
    static std::array<std::atomic<bool>, max_resource_id + 1> b{};
    static const bool init = [] {
        b[MEMRESOURCE_CPU].store(true);
        return true;
    }();
    (void)init;
    return b;
}
} // namespace

bool has_backend(resource_id resource) noexcept {
    return resource >= 0 && resource <= max_resource_id &&
           backends()[static_cast<size_t>(resource)].load();
}

void set_backend(resource_id resource, bool available) {
    ISTHMUS_CHECK(resource > MEMRESOURCE_CPU && resource <= max_resource_id, value_error,
                  "set_backend: resource ", resource, " is not a device slot");
    backends()[static_cast<size_t>(resource)].store(available);
}

resource_id pick_resource(std::initializer_list<const tensor*> inputs) {
    auto usable = [](resource_id r) { return has_backend(r) ? r : MEMRESOURCE_CPU; };
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
    for (const tensor* t : inputs) {
        if (!t || !t->defined()) continue;
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
    if (std::find(common.begin(), common.end(), def) != common.end()) return usable(def);
    return usable(common.front());
}

} // namespace isthmus::ops

namespace isthmus::backend {

compute::~compute() = default;

namespace {
struct compute_registry {
    std::mutex mu;
    std::array<std::shared_ptr<compute>, max_resource_id + 1> slots;
};
compute_registry& computes() {
    static auto* r = new compute_registry; // never destroyed: backends live until exit
    return *r;
}
} // namespace

void register_compute(resource_id resource, std::shared_ptr<compute> backend) {
    ISTHMUS_CHECK(resource > MEMRESOURCE_CPU && resource <= max_resource_id, value_error,
                  "register_compute: resource ", resource, " is not a device slot");
    const bool on = backend != nullptr;
    {
        auto& r = computes();
        std::lock_guard lk(r.mu);
        r.slots[static_cast<size_t>(resource)] = std::move(backend);
    }
    ops::set_backend(resource, on);
}

std::shared_ptr<compute> find_compute(resource_id resource) noexcept {
    if (resource <= MEMRESOURCE_CPU || resource > max_resource_id) return nullptr;
    auto& r = computes();
    std::lock_guard lk(r.mu);
    return r.slots[static_cast<size_t>(resource)];
}

} // namespace isthmus::backend
