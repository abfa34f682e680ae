// Internal: the backend registry, which compute backend runs ops on each resource
// (backend_registry.cpp; devices register theirs through backend::register_compute).
#pragma once

#include "isthmus/backend.hpp"
#include "isthmus/memory.hpp"

namespace isthmus::backend {

/// The backend registered for `resource` (the CPU's for MEMRESOURCE_CPU), or nullptr. Takes no
/// lock: backends are never destroyed once registered (Note [backend registry]).
compute* compute_at(resource_id resource) noexcept;

/// True when a compute backend runs ops on `resource` (the CPU, and devices whose backend module
/// registered one).
bool has_compute(resource_id resource) noexcept;

/// The built-in CPU backend (one per process, never destroyed), which runs every case
/// (Note [cpu backend]).
compute& cpu_compute() noexcept;

} // namespace isthmus::backend
