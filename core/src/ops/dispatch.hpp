// Internal: where an op runs (the scheduling rule) and RAII host access to tensor memory.
#pragma once

#include "isthmus/memory.hpp"
#include "isthmus/tensor.hpp"

#include <initializer_list>
#include <span>

namespace isthmus::ops {

/// True when a compute backend can run ops on `resource` (only the CPU until the CUDA backend
/// registers itself).
bool has_backend(resource_id resource) noexcept;
/// Declares that a compute backend runs ops on `resource` (used by the CUDA backend module).
void set_backend(resource_id resource, bool available);

/// The resource an op with these inputs runs on.
///
/// Note [scheduling rule]: (1) a pinned input decides (its memory is shared with a foreign
/// library, so results and in-place writes belong there); (2) otherwise the resource where the
/// inputs are valid, preferring the default device (init's) when several qualify; (3) inputs
/// valid nowhere in common go to the default device. A resource with no compute backend falls
/// back to the CPU. The rule is deterministic and inspectable through tensor::location().
resource_id pick_resource(std::initializer_list<const tensor*> inputs);
resource_id pick_resource(std::span<const tensor* const> inputs);

/// Locks a tensor for the lifetime of the object and unlocks it on destruction.
class access {
public:
    access(const tensor& t, lock_mode mode, resource_id resource)
        : t_(t), mode_(mode), resource_(resource), ptr_(t.lock(mode, resource)) {}
    ~access() {
        try {
            t_.unlock(mode_, resource_);
        } catch (...) {
        }
    }
    access(const access&) = delete;
    access& operator=(const access&) = delete;
    /// Address of element 0 of the view.
    void* data() const noexcept { return ptr_; }
    template <typename T>
    T* as() const noexcept {
        return static_cast<T*>(ptr_);
    }

private:
    tensor t_;
    lock_mode mode_;
    resource_id resource_;
    void* ptr_;
};

/// Host read access (the CPU backend's inputs).
inline access read_host(const tensor& t) {
    return access(t, lock_mode::read, MEMRESOURCE_CPU);
}
/// Host write access (the CPU backend's fresh outputs).
inline access write_host(const tensor& t) {
    return access(t, lock_mode::write, MEMRESOURCE_CPU);
}
/// Host read-write access (in-place outputs).
inline access readwrite_host(const tensor& t) {
    return access(t, lock_mode::readwrite, MEMRESOURCE_CPU);
}

} // namespace isthmus::ops
