// DLPack and the CUDA array interface across the Python boundary: tensors out and in, streams.
#pragma once

#include "boundary/arrays.hpp"

#include "isthmus/memory.hpp"
#include "isthmus/tensor.hpp"
#include "isthmus/value.hpp"

#include <pybind11/pybind11.h>

#include <optional>
#include <string>

namespace isthmus::boundary {

namespace py = pybind11;

/// True for objects with `__dlpack__` or `__cuda_array_interface__` other than qvalues and NumPy
/// arrays (torch tensors, CuPy, Numba or JAX arrays, ...): the ones that cross through DLPack
/// (or the CUDA array interface) rather than the NumPy paths.
bool is_dlpack_producer(py::handle obj);
/// True when `obj`'s type is already known to carry a DLPack exchange table (a torch tensor seen
/// before; Note [dlpack exchange api]): a lookup in a small cache that asks Python nothing, for
/// conversions to try first.
bool has_known_exchange_api(py::handle obj);
/// A tensor from a DLPack producer or capsule: zero-copy (the producer's memory, released through
/// its deleter) unless `policy` or the data (read-only, misaligned) asks for a copy. `device` is
/// from_dlpack's keyword (None, "cpu", "cuda[:n]", (1, 0), (2, n)). CUDA producers get isthmus's
/// stream (Note [dlpack streams]). Throws BufferError for unsupported devices and for tensors
/// that require grad, RuntimeError for CUDA data without CUDA, ValueError when policy is never
/// and a copy is needed. `transient`: the tensor is dropped before control returns to Python (a
/// kernel launch's argument), so host data may be read through the producer's borrowed
/// descriptor (Note [borrowed dlpack tensors]).
tensor tensor_from_dlpack(py::handle obj, copy_policy policy, py::handle device = py::none(),
                          bool transient = false);
/// `q.from_dlpack(obj, device=, copy=)`: a qvalue is returned itself (or moved/copied as asked),
/// anything else through tensor_from_dlpack. The caller checks the session.
value value_from_dlpack(py::handle obj, py::handle device, py::handle copy);
/// `A.__dlpack__(stream=, max_version=, dl_device=, copy=)` (Note [dlpack export]).
py::object dlpack_export(const value& v, py::handle stream, py::handle max_version,
                         py::handle dl_device, py::handle copy);
/// `A.__dlpack_device__()`: (2, n) for data located on cuda:n, else (1, 0).
py::tuple dlpack_device(const value& v);
/// A legacy DLPack capsule ("dltensor") sharing `t`'s memory as it is laid out (no checks, no
/// q.init() needed; the GIL must be held). The storage is pinned to the CPU (cuda_device -1) or
/// to CUDA device `cuda_device` until the consumer calls the deleter; for a device,
/// `consumer_stream` (a cudaStream_t, 1 the legacy default stream; nullptr: none) is made to
/// wait for isthmus's stream. Negative strides are passed as they are: callers exclude them.
py::object dlpack_capsule(const tensor& t, int cuda_device = -1, void* consumer_stream = nullptr);

/// A device name ("cpu", "cuda", "cuda:N", any case): -1 for the CPU, N for CUDA device N;
/// nullopt for anything else (each caller raises ValueError with its own message).
std::optional<int> device_number(const std::string& name);
/// The CUDA ordinal of resource `r` (cuda:n -> n), or -1 when `r` is not a registered CUDA device.
int cuda_ordinal(resource_id r);
/// Registers the CUDA devices when needed (keeping the default device) and checks that `device`
/// exists; RuntimeError "<what>, and CUDA is not available here: <cause>" without CUDA,
/// ValueError for a device number out of range.
void require_cuda(const std::string& what, int device);
/// Waits for isthmus's stream on `device` (a stream sync), swallowing errors: release paths of
/// foreign device memory (Note [dlpack streams] in dlpack.cpp).
void wait_for_isthmus(int device) noexcept;

/// `A.__cuda_array_interface__` (version 3) for a tensor located on a CUDA device; AttributeError
/// for other values, so that consumers testing hasattr move on to DLPack or NumPy.
py::dict cuda_array_interface(py::object self);
/// A tensor sharing the device memory that `interface` (the value of `obj`'s
/// `__cuda_array_interface__`: CuPy, Numba, torch) describes: `obj` is kept alive, the `stream`
/// entry waited for (an event), read-only data copied (ValueError with policy never).
/// RuntimeError without CUDA.
tensor tensor_from_cuda_array_interface(py::handle obj, py::handle interface, copy_policy policy);

} // namespace isthmus::boundary
