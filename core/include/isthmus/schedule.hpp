// The scheduling rule from C++: where an op runs, scoped overrides, the transfer threshold.
#pragma once

#include "isthmus/export.hpp"
#include "isthmus/memory.hpp"
#include "isthmus/tensor.hpp"

#include <cstdint>
#include <span>

namespace isthmus {

/// The resource an op on `inputs` runs on (null entries and undefined tensors are ignored):
/// the scheduling rule of docs/memory-model.md, with resources that have no compute backend
/// mapped to the CPU. Deterministic; ops, parallel_do and the Python `q.placement` all use it.
ISTHMUS_API resource_id choose_resource(std::span<const tensor* const> inputs);

/// Runs the ops started on this thread, while the scope lives, on `resource` (MEMRESOURCE_CPU,
/// cuda_resource(n), or MEMRESOURCE_DEVICE0 for the default device), whatever their inputs:
/// inputs valid elsewhere are copied there through the coherence model. Scopes nest; the
/// innermost wins. Throws value_error for a resource that is not registered.
class ISTHMUS_API device_scope {
public:
    explicit device_scope(resource_id resource);
    ~device_scope();
    device_scope(const device_scope&) = delete;
    device_scope& operator=(const device_scope&) = delete;

private:
    resource_id previous_;
};

/// The resource of the innermost device_scope on this thread, or -1 when there is none.
ISTHMUS_API resource_id scoped_resource() noexcept;

/// `t` with its data valid on `resource` (transferred there now if it was not; the copies
/// elsewhere stay valid), so ops choosing by the scheduling rule run there without a transfer;
/// returns `t` itself. A pinned value keeps following its pin (see Note [pinning]); with
/// `copy` true the result is instead a new C-contiguous value made on `resource`.
ISTHMUS_API tensor to_resource(const tensor& t, resource_id resource, bool copy = false);

/// Ops whose inputs are valid only away from the default device move there when they read at
/// least this many elements in all (default 65536, or $ISTHMUS_TRANSFER_MIN_ELEMENTS): large
/// work pays for the transfer, small work stays where its data is. 0 always moves.
ISTHMUS_API void set_transfer_threshold(int64_t elements);
/// The current transfer threshold in elements.
ISTHMUS_API int64_t transfer_threshold() noexcept;

} // namespace isthmus
