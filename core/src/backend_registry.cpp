// The backend registry: which compute backend runs ops on each resource (the built-in CPU backend
// from the start, a device's once its module registers one).
#include "backend_registry.hpp"
#include "cpu/backend.hpp"
#include "isthmus/error.hpp"

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

namespace isthmus::backend {

namespace {

// Note [backend registry]
// ~~~~~~~~~~~~~~~~~~~~~~~
// One slot per resource id holds a raw pointer that ops read without a lock (every op asks). The
// CPU's slot holds the built-in CPU backend from the start; a device's slot is set by
// backend::register_compute. Registered backends are never destroyed: the registry keeps every
// shared_ptr it was given, also after the slot is cleared or replaced, so a pointer read by an op
// on another thread stays valid (backends live until exit anyway).
struct backend_registry {
    std::array<std::atomic<compute*>, max_resource_id + 1> slots{};
    std::mutex mu;
    std::array<std::shared_ptr<compute>, max_resource_id + 1> owners; // guarded by mu
    std::vector<std::shared_ptr<compute>> retired;                    // guarded by mu
    backend_registry() {
        slots[MEMRESOURCE_CPU].store(&cpu_compute());
        owners[MEMRESOURCE_CPU] = std::shared_ptr<compute>(&cpu_compute(), [](compute*) {});
    }
};

backend_registry& backends() {
    static auto* r = new backend_registry; // never destroyed: ops may run during teardown
    return *r;
}

} // namespace

compute* compute_at(resource_id resource) noexcept {
    if (resource < 0 || resource > max_resource_id) return nullptr;
    return backends().slots[static_cast<size_t>(resource)].load(std::memory_order_acquire);
}

bool has_compute(resource_id resource) noexcept {
    return compute_at(resource) != nullptr;
}

compute& cpu_compute() noexcept {
    static cpu::cpu_compute* c = new cpu::cpu_compute; // never destroyed: ops may run at teardown
    return *c;
}

void register_compute(resource_id resource, std::shared_ptr<compute> backend) {
    ISTHMUS_CHECK(resource > MEMRESOURCE_CPU && resource <= max_resource_id, value_error,
                  "register_compute: resource ", resource, " is not a device slot");
    auto& r = backends();
    std::lock_guard lk(r.mu);
    auto& owner = r.owners[static_cast<size_t>(resource)];
    if (owner) r.retired.push_back(owner); // See Note [backend registry]: never destroyed
    owner = std::move(backend);
    r.slots[static_cast<size_t>(resource)].store(owner.get(), std::memory_order_release);
}

std::shared_ptr<compute> find_compute(resource_id resource) noexcept {
    if (resource < 0 || resource > max_resource_id) return nullptr;
    auto& r = backends();
    std::lock_guard lk(r.mu);
    return r.owners[static_cast<size_t>(resource)];
}

} // namespace isthmus::backend
