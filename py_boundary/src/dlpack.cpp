// DLPack, what export and import share: device names, CUDA ordinals, dtype codes, BufferError.
#include "boundary/dlpack.hpp"

#include "boundary/dlpack_formats.hpp"

#include "isthmus/cuda.hpp"

#include <cctype>
#include <iterator>

namespace isthmus::boundary {

// Note [dlpack cuda]
// ~~~~~~~~~~~~~~~~~~
// Device memory crosses without a copy in both directions.
// - Where a value is exported from (`__dlpack_device__`): tensor::location(), i.e. the resource
//   the storage is pinned to, else the default device when the data is valid there, else the
//   lowest resource holding a valid copy (the CPU before any GPU). A location on cuda:n reports
//   (kDLCUDA, n); anything else (kDLCPU, 0). Scalars are (kDLCPU, 0).
// - `__dlpack__` exports from that device, or from `dl_device` when given: it pins the storage
//   there (a transfer when the copy there is stale) and hands out that copy's address, so both
//   sides share one buffer. Only a storage already pinned to another resource (foreign memory
//   wrapped there, or a live export there) cannot move: it is exported as a copy (IS_COPIED;
//   BufferError with copy=False). Streams: Note [dlpack streams].
// - Imports of kDLCUDA tensors wrap the device pointer with tensor::wrap on cuda_resource(n)
//   (pinned there for the storage's life; the producer's deleter as release callback, run once).
//   The devices are registered on first use (cuda::ensure_registered, the default device stays
//   as init() set it); without CUDA the import raises RuntimeError naming the cause. The pointer
//   is checked with cuda::pointer_device, so a producer that mislabels host memory is refused.
//   kDLCPU, kDLCUDAHost, kDLROCMHost and kDLCUDAManaged are host memory, wrapped on the CPU.
//
// Note [dlpack streams]
// ~~~~~~~~~~~~~~~~~~~~~
// The DLPack/array-API rules, as producer and as consumer.
// - Export of CUDA data: `stream` is the consumer's stream. None means the legacy default stream
//   (1), 1 and 2 are the legacy and per-thread default streams, larger ints are cudaStream_t
//   handles: that stream is made to wait (cudaStreamWaitEvent on an event recorded on isthmus's
//   stream; the host never waits) for everything isthmus queued so far, the pinning transfer
//   included. -1 means no synchronisation. 0 is refused (ValueError): it is ambiguous. CPU data
//   takes stream=None only.
// - Import from a kDLCUDA producer: isthmus asks `__dlpack_device__` first and passes its own
//   stream for that device (`stream=<isthmus's cudaStream_t as int>`), so the producer orders
//   its pending work before isthmus's stream (through an exchange table, isthmus's stream waits
//   for the table's current_work_stream: Note [dlpack exchange api]). A bare capsule (no
//   producer to ask) is taken as ready. While isthmus holds an import, later writes by either
//   side are not ordered by DLPack: synchronise them (e.g. torch.cuda.synchronize(),
//   q.cuda_synchronize(), or run torch on isthmus's stream through
//   torch.cuda.ExternalStream(q.cuda_stream())).
// - Release of an export: when the consumer calls the deleter, isthmus's stream waits (an
//   event, no host wait) for the consumer's stream before the pin ends, so a block freed and
//   reused by isthmus is never overwritten while the consumer's queued kernels still read it
//   (Note [export release order] in exchange_streams.hpp). -1 skips that wait too.
// - Release of an import: when the last view of an imported device tensor dies (for a torch
//   tensor passed to an op or a plugin call: when the call returns), the producer's later work
//   is ordered after isthmus's before its deleter runs (Note [import hand-back] in
//   exchange_streams.hpp): the producer's stream waits through an event where an exchange table
//   named it, else the host waits for isthmus's stream (a stream sync, not a device sync). The
//   same precedes the deleter when an import had to copy (read-only, misaligned or copy=True
//   data): the copy is queued on isthmus's stream.

std::optional<int> device_number(const std::string& name) {
    std::string d;
    for (char c : name) d += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (d == "cpu") return -1;
    if (d == "cuda") return 0;
    if (d.rfind("cuda:", 0) != 0 || d.size() <= 5 || d.size() >= 9 ||
        d.find_first_not_of("0123456789", 5) != std::string::npos)
        return std::nullopt;
    return std::stoi(d.substr(5));
}

int cuda_ordinal(resource_id r) {
    if (r < cuda_resource(0) || !cuda::initialized()) return -1;
    const memory_resource* res = find_resource(r);
    if (!res || res->host_accessible() || res->name().rfind("cuda:", 0) != 0) return -1;
    return r - cuda_resource(0);
}

void require_cuda(const std::string& what, int device) {
    if (!cuda::available())
        ISTHMUS_THROW(runtime_error, what,
                      ", and CUDA is not available here: ", cuda::unavailable_reason());
    cuda::ensure_registered();
    const int n = cuda::device_count();
    ISTHMUS_CHECK(device >= 0 && device < n, value_error, what, ", and CUDA device ", device,
                  " does not exist (", n, " device", n == 1 ? "" : "s", " here)");
}

void wait_for_isthmus(int device) noexcept {
    try {
        cuda::synchronize(device);
    } catch (...) { // a release path: the error already surfaced at the failing op
    }
}

void throw_buffer_error(const std::string& msg) {
    throw py::buffer_error(msg);
}

// ---- dtypes ----

dl::DLDataType dl_dtype(dtype dt) {
    const auto bits = static_cast<uint8_t>(itemsize(dt) * 8);
    uint8_t code = dl::kDLFloat;
    if (is_bool(dt))
        code = dl::kDLBool;
    else if (is_signed_int(dt))
        code = dl::kDLInt;
    else if (is_unsigned_int(dt))
        code = dl::kDLUInt;
    else if (dt == dtype::bfloat16)
        code = dl::kDLBfloat;
    else if (is_complex(dt))
        code = dl::kDLComplex;
    return dl::DLDataType{code, bits, 1};
}

std::string dl_dtype_str(const dl::DLDataType& t) {
    static const char* const codes[] = {"int",           "uint",
                                        "float",         "opaque handle",
                                        "bfloat",        "complex",
                                        "bool",          "float8_e3m4",
                                        "float8_e4m3",   "float8_e4m3b11fnuz",
                                        "float8_e4m3fn", "float8_e4m3fnuz",
                                        "float8_e5m2",   "float8_e5m2fnuz"};
    std::string code = t.code < std::size(codes) ? codes[t.code] : "code " + std::to_string(t.code);
    return detail::concat("(", code, ", bits=", int(t.bits), ", lanes=", t.lanes, ")");
}

dtype dtype_from_dl(const dl::DLDataType& t) {
    ISTHMUS_CHECK(t.lanes == 1, type_error, "DLPack dtype ", dl_dtype_str(t),
                  " is a vector type; isthmus tensors have one lane per element");
    switch (t.code) {
    case dl::kDLBool:
        if (t.bits == 8) return dtype::bool_;
        break;
    case dl::kDLInt:
        if (t.bits == 8) return dtype::int8;
        if (t.bits == 16) return dtype::int16;
        if (t.bits == 32) return dtype::int32;
        if (t.bits == 64) return dtype::int64;
        break;
    case dl::kDLUInt:
        if (t.bits == 8) return dtype::uint8;
        if (t.bits == 16) return dtype::uint16;
        if (t.bits == 32) return dtype::uint32;
        if (t.bits == 64) return dtype::uint64;
        break;
    case dl::kDLFloat:
        if (t.bits == 16) return dtype::float16;
        if (t.bits == 32) return dtype::float32;
        if (t.bits == 64) return dtype::float64;
        break;
    case dl::kDLBfloat:
        if (t.bits == 16) return dtype::bfloat16;
        break;
    case dl::kDLComplex:
        if (t.bits == 64) return dtype::complex64;
        if (t.bits == 128) return dtype::complex128;
        break;
    default:
        break;
    }
    ISTHMUS_THROW(type_error, "DLPack dtype ", dl_dtype_str(t),
                  " has no isthmus equivalent (supported: bool, int8..int64, uint8..uint64, "
                  "float16, bfloat16, float32, float64, complex64, complex128)");
}

// ---- devices ----

std::string dl_device_str(int64_t type, int64_t id) {
    const char* name = nullptr;
    switch (type) {
    case dl::kDLCPU:
        name = "kDLCPU";
        break;
    case dl::kDLCUDA:
        name = "kDLCUDA";
        break;
    case dl::kDLCUDAHost:
        name = "kDLCUDAHost";
        break;
    case dl::kDLOpenCL:
        name = "kDLOpenCL";
        break;
    case dl::kDLVulkan:
        name = "kDLVulkan";
        break;
    case dl::kDLMetal:
        name = "kDLMetal";
        break;
    case dl::kDLROCM:
        name = "kDLROCM";
        break;
    case dl::kDLROCMHost:
        name = "kDLROCMHost";
        break;
    case dl::kDLCUDAManaged:
        name = "kDLCUDAManaged";
        break;
    case dl::kDLOneAPI:
        name = "kDLOneAPI";
        break;
    default:
        break;
    }
    return detail::concat("(", type, name ? detail::concat(" = ", name) : std::string(), ", ", id,
                          ")");
}

// Devices whose memory the CPU reads directly (Note [dlpack cuda]).
bool host_accessible(int64_t type) {
    return type == dl::kDLCPU || type == dl::kDLCUDAHost || type == dl::kDLROCMHost ||
           type == dl::kDLCUDAManaged;
}

// A (device_type, device_id) pair given to __dlpack__(dl_device=) or returned by
// __dlpack_device__; `what` names it in messages.
std::pair<int64_t, int64_t> device_pair(py::handle obj, const char* what) {
    const bool seq = py::isinstance<py::tuple>(obj) || py::isinstance<py::list>(obj);
    ISTHMUS_CHECK(seq, type_error, what, " must be a (device_type, device_id) tuple, got ",
                  type_name(obj));
    auto s = py::reinterpret_borrow<py::sequence>(obj);
    ISTHMUS_CHECK(s.size() == 2, value_error, what,
                  " must be a (device_type, device_id) tuple of 2 ints, got ", s.size(),
                  " entries");
    int64_t v[2];
    for (size_t i = 0; i < 2; ++i) {
        py::handle x = s[i];
        ISTHMUS_CHECK(!PyBool_Check(x.ptr()) && PyLong_Check(x.ptr()), type_error, what,
                      " must be a (device_type, device_id) tuple of ints, entry ", i, " is a ",
                      type_name(x));
        v[i] = x.cast<int64_t>();
    }
    return {v[0], v[1]};
}

} // namespace isthmus::boundary
