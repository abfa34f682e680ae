// Internal: what DLPack export and import share: dtype codes, device pairs, BufferError.
#pragma once

#include "boundary/dlpack_abi.hpp"

#include "isthmus/dtype.hpp"

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <utility>

namespace isthmus::boundary {

namespace py = pybind11;
namespace dl = dlpack;

/// Raises Python's BufferError (DLPack's error for what cannot be exchanged).
[[noreturn]] void throw_buffer_error(const std::string& msg);
/// The DLPack dtype of an isthmus dtype.
dl::DLDataType dl_dtype(dtype dt);
/// A DLPack dtype for messages: "(float, bits=32, lanes=1)".
std::string dl_dtype_str(const dl::DLDataType& t);
/// The isthmus dtype of a DLPack dtype; TypeError for vector lanes and dtypes isthmus lacks.
dtype dtype_from_dl(const dl::DLDataType& t);
/// A DLPack device for messages: "(2 = kDLCUDA, 0)".
std::string dl_device_str(int64_t type, int64_t id);
/// True for the DLPack devices whose memory the CPU reads directly (Note [dlpack cuda]).
bool host_accessible(int64_t type);
/// A (device_type, device_id) pair given as dl_device= or returned by __dlpack_device__; `what`
/// names it in the TypeError/ValueError.
std::pair<int64_t, int64_t> device_pair(py::handle obj, const char* what);

} // namespace isthmus::boundary
