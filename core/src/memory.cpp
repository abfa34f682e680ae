// The memory-resource registry, the host (CPU) resource, and copies between resources.
#include "isthmus/memory.hpp"
#include "isthmus/error.hpp"

#include "host_cache.hpp"

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace isthmus {

memory_resource::~memory_resource() = default;

bool memory_resource::copy_from_peer(void*, const memory_resource&, const void*, size_t) {
    return false;
}

namespace {

/// Host memory, 64-byte aligned so vector loads never split a cache line at the start.
class cpu_resource final : public memory_resource {
public:
    resource_id id() const noexcept override { return MEMRESOURCE_CPU; }
    std::string name() const override { return "cpu"; }
    bool host_accessible() const noexcept override { return true; }
    void* allocate(size_t nbytes) noexcept override { return detail::host_allocate(nbytes); }
    void deallocate(void* p, size_t nbytes) noexcept override {
        detail::host_deallocate(p, nbytes);
    }
    void copy_from_host(void* dst, const void* src, size_t n) override {
        std::memmove(dst, src, n);
    }
    void copy_to_host(void* dst, const void* src, size_t n) override { std::memmove(dst, src, n); }
    void copy_within(void* dst, const void* src, size_t n) override { std::memmove(dst, src, n); }
};

struct registry {
    std::mutex mu;
    std::array<std::shared_ptr<memory_resource>, max_resource_id + 1> slots;
    std::atomic<resource_id> default_id{MEMRESOURCE_CPU};
    memory_resource* cpu = nullptr; // slots[MEMRESOURCE_CPU], fixed for the process's lifetime
    registry() {
        slots[MEMRESOURCE_CPU] = std::make_shared<cpu_resource>();
        cpu = slots[MEMRESOURCE_CPU].get();
    }
};

registry& reg() {
    static registry* r = new registry; // never destroyed: storages may outlive static teardown
    return *r;
}

} // namespace

// Note [cpu fast path]
// ~~~~~~~~~~~~~~~~~~~~
// The host resource is registered when the registry is made and can never be unregistered
// (unregister_resource refuses it), so lookups of it skip the registry's mutex: every lock/unlock
// of every small op asks for it several times.
memory_resource* find_resource(resource_id id) noexcept {
    if (id == MEMRESOURCE_CPU) return reg().cpu;
    if (id < 0 || id > max_resource_id) return nullptr;
    auto& r = reg();
    std::lock_guard lk(r.mu);
    return r.slots[static_cast<size_t>(id)].get();
}

std::shared_ptr<memory_resource> resource_handle(resource_id id) {
    if (id == MEMRESOURCE_CPU) return reg().slots[MEMRESOURCE_CPU]; // Note [cpu fast path]
    id = resolve_resource(id);
    auto& r = reg();
    std::lock_guard lk(r.mu);
    return r.slots[static_cast<size_t>(id)];
}

memory_resource& get_resource(resource_id id) {
    return *resource_handle(id);
}

void register_resource(std::shared_ptr<memory_resource> res) {
    ISTHMUS_CHECK(res != nullptr, value_error, "register_resource: null resource");
    resource_id id = res->id();
    ISTHMUS_CHECK(id >= MEMRESOURCE_DEVICE2 && id <= max_resource_id, value_error,
                  "register_resource: id ", id, " is not a device slot (expected ",
                  MEMRESOURCE_DEVICE2, "..", max_resource_id, ")");
    auto& r = reg();
    std::lock_guard lk(r.mu);
    ISTHMUS_CHECK(!r.slots[static_cast<size_t>(id)], value_error, "register_resource: id ", id,
                  " is already taken by ", r.slots[static_cast<size_t>(id)]->name());
    r.slots[static_cast<size_t>(id)] = std::move(res);
}

void unregister_resource(resource_id id) {
    ISTHMUS_CHECK(id >= MEMRESOURCE_DEVICE2 && id <= max_resource_id, value_error,
                  "unregister_resource: id ", id, " is not a device slot");
    auto& r = reg();
    std::lock_guard lk(r.mu);
    ISTHMUS_CHECK(r.slots[static_cast<size_t>(id)] != nullptr, value_error,
                  "unregister_resource: no resource has id ", id);
    if (r.default_id.load() == id) r.default_id.store(MEMRESOURCE_CPU);
    r.slots[static_cast<size_t>(id)].reset();
}

resource_id default_resource() noexcept {
    return reg().default_id.load();
}

void set_default_resource(resource_id id) {
    id = resolve_resource(id);
    reg().default_id.store(id);
}

resource_id resolve_resource(resource_id id) {
    if (id == MEMRESOURCE_CPU) return id; // Note [cpu fast path]
    ISTHMUS_CHECK(id != MEMRESOURCE_SINGLE_OPENCL, not_implemented_error,
                  "MEMRESOURCE_SINGLE_OPENCL: OpenCL is not supported by isthmus");
    if (id == MEMRESOURCE_DEVICE0) id = default_resource();
    ISTHMUS_CHECK(find_resource(id) != nullptr, value_error, "unknown memory resource ", id,
                  id >= MEMRESOURCE_DEVICE2 && id <= max_resource_id
                      ? " (no device is registered there; did init select a CUDA device?)"
                      : " (expected MEMRESOURCE_CPU, MEMRESOURCE_DEVICE0 + n)");
    return id;
}

void copy_bytes(memory_resource& dst_res, void* dst, memory_resource& src_res, const void* src,
                size_t nbytes) {
    if (nbytes == 0) return;
    const bool dh = dst_res.host_accessible(), sh = src_res.host_accessible();
    if (&dst_res == &src_res) return dst_res.copy_within(dst, src, nbytes);
    if (dh && sh) {
        std::memmove(dst, src, nbytes);
    } else if (sh) {
        dst_res.copy_from_host(dst, src, nbytes);
    } else if (dh) {
        src_res.copy_to_host(dst, src, nbytes);
    } else if (!dst_res.copy_from_peer(dst, src_res, src, nbytes)) {
        std::vector<unsigned char> stage(nbytes);
        src_res.copy_to_host(stage.data(), src, nbytes);
        dst_res.copy_from_host(dst, stage.data(), nbytes);
    }
}

} // namespace isthmus
