// The scheduling rule (which resource an op runs on) and the backend registry (which backend
// runs there).
#include "ops/dispatch.hpp"
#include "isthmus/schedule.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace isthmus::ops {

namespace {

// Note [backend registry]
// ~~~~~~~~~~~~~~~~~~~~~~~
// One slot per resource id holds a raw pointer that ops read without a lock (every op asks). The
// CPU's slot holds the built-in CPU backend from the start; a device's slot is set by
// backend::register_compute. Registered backends are never destroyed: the registry keeps every
// shared_ptr it was given, also after the slot is cleared or replaced, so a pointer read by an op
// on another thread stays valid (backends live until exit anyway).
struct backend_registry {
    std::array<std::atomic<backend::compute*>, max_resource_id + 1> slots{};
    std::mutex mu;
    std::array<std::shared_ptr<backend::compute>, max_resource_id + 1> owners; // guarded by mu
    std::vector<std::shared_ptr<backend::compute>> retired;                    // guarded by mu
    std::shared_ptr<backend::compute> cpu;
    backend_registry() {
        cpu = std::shared_ptr<backend::compute>(&cpu_compute_instance(), [](backend::compute*) {});
        slots[MEMRESOURCE_CPU].store(cpu.get());
        owners[MEMRESOURCE_CPU] = cpu;
    }
};

backend_registry& backends() {
    static auto* r = new backend_registry; // never destroyed: ops may run during teardown
    return *r;
}

} // namespace

backend::compute* compute_at(resource_id resource) noexcept {
    if (resource < 0 || resource > max_resource_id) return nullptr;
    return backends().slots[static_cast<size_t>(resource)].load(std::memory_order_acquire);
}

target cpu_target() noexcept {
    return {MEMRESOURCE_CPU, &cpu_compute_instance()};
}

bool has_backend(resource_id resource) noexcept {
    return compute_at(resource) != nullptr;
}

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
    auto usable = [](resource_id r) { return has_backend(r) ? r : MEMRESOURCE_CPU; };
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
    if (def != MEMRESOURCE_CPU && has_backend(def) && elements >= threshold().load()) return def;
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

void register_compute(resource_id resource, std::shared_ptr<compute> backend) {
    ISTHMUS_CHECK(resource > MEMRESOURCE_CPU && resource <= max_resource_id, value_error,
                  "register_compute: resource ", resource, " is not a device slot");
    auto& r = ops::backends();
    std::lock_guard lk(r.mu);
    auto& owner = r.owners[static_cast<size_t>(resource)];
    if (owner) r.retired.push_back(owner); // See Note [backend registry]: never destroyed
    owner = std::move(backend);
    r.slots[static_cast<size_t>(resource)].store(owner.get(), std::memory_order_release);
}

std::shared_ptr<compute> find_compute(resource_id resource) noexcept {
    if (resource < 0 || resource > max_resource_id) return nullptr;
    auto& r = ops::backends();
    std::lock_guard lk(r.mu);
    return r.owners[static_cast<size_t>(resource)];
}

} // namespace isthmus::backend
