// DLPack exchange: tensors out (__dlpack__, capsules for C++ hosts) and in (from_dlpack, capsules).
#include "boundary/dlpack.hpp"

#include "boundary/dlpack_abi.hpp"
#include "boundary/exchange_streams.hpp"
#include "boundary/qvalue_handle.hpp"
#include "boundary/session.hpp"

#include "isthmus/cuda.hpp"
#include "isthmus/schedule.hpp"

#include <pybind11/numpy.h>

#include <cctype>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>

namespace isthmus::boundary {

// Note [dlpack export]: `A.__dlpack__()` hands the consumer a capsule holding a
// DLManagedTensor(Versioned) whose manager_ctx is an export_ctx: the storage handle (keeping the
// memory alive) plus the shape/strides arrays the DLTensor points into (Note [export context]).
// Making it pins the storage to the exported device, the CPU or a CUDA device (Note [export pins]
// in buffer.cpp, Note [dlpack cuda], docs/memory-model.md "Pinning"); the deleter unpins and frees
// it. The deleter runs exactly once: called by the consumer when it is done with the memory (after
// renaming the capsule "used_dltensor[_versioned]"), or by the capsule's destructor when no
// consumer ever took it. It needs no GIL and may run on any thread. The capsule is versioned
// (DLPack 1.x) when the consumer passes max_version >= (1, 0), else legacy (DLPack 0.x, no flags).
// READ_ONLY is set on read-only broadcast views only (Note [read-only broadcast views]); IS_COPIED
// is set on copies (copy=True, scalars, Note [negative strides]). `data` is element 0's address and
// byte_offset is 0, as NumPy and PyTorch do on the CPU.
//
// Note [dlpack import]: `q.from_dlpack(x)` calls
// `x.__dlpack__(max_version=(1, 1), copy=..., dl_device=...)`, falling back to a bare
// `x.__dlpack__()` for producers that predate those keywords (TypeError). It renames the capsule
// "used_..." and wraps the memory without a copy (tensor::wrap: pinned to the CPU or to the
// CUDA device, the producer's deleter as the release callback, run once when the last view of the
// storage is gone). Everything is validated before the capsule is renamed, so a capsule refused
// with an error still belongs to its producer, whose capsule destructor frees it. A copy is made
// instead (and the deleter called at once) when the tensor is read-only (isthmus tensors are
// writable, as for NumPy arrays: Note [wrapping rules]), misaligned (host memory only: misaligned
// device data raises ValueError, Note [misaligned device data]), empty, or copy=True was asked
// and the producer did not set IS_COPIED; with copy=False those cases raise ValueError.
//
// Note [dlpack cuda]: device memory crosses without a copy in both directions.
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
// Note [dlpack streams]: the DLPack/array-API rules, as producer and as consumer.
// - Export of CUDA data: `stream` is the consumer's stream. None means the legacy default stream
//   (1), 1 and 2 are the legacy and per-thread default streams, larger ints are cudaStream_t
//   handles: that stream is made to wait (cudaStreamWaitEvent on an event recorded on isthmus's
//   stream; the host never waits) for everything isthmus queued so far, the pinning transfer
//   included. -1 means no synchronisation. 0 is refused (ValueError): it is ambiguous. CPU data
//   takes stream=None only.
// - Import from a kDLCUDA producer: isthmus asks `__dlpack_device__` first and passes its own
//   stream for that device (`stream=<isthmus's cudaStream_t as int>`), so the producer orders
//   its pending work before isthmus's stream. A bare capsule (no producer to ask) is taken as
//   ready. Later writes by either side are not ordered by DLPack: synchronise them (e.g.
//   torch.cuda.synchronize(), q.cuda_synchronize(), or run torch on isthmus's stream through
//   torch.cuda.ExternalStream(q.cuda_stream())).
// - Release of an export: when the consumer calls the deleter, isthmus's stream waits (an
//   event, no host wait) for the consumer's stream before the pin ends, so a block freed and
//   reused by isthmus is never overwritten while the consumer's queued kernels still read it
//   (Note [export release order] in exchange_streams.hpp). -1 skips that wait too.
// - Release of an import: when the last view of an imported device tensor dies, isthmus waits
//   for its own stream (a stream sync, not a device sync) before calling the producer's deleter,
//   because DLPack has no way to hand a stream back with the memory and the producer may reuse
//   it at once. The same wait precedes the deleter when an import had to copy (read-only,
//   misaligned or copy=True data): the copy is queued on isthmus's stream.

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

namespace {

namespace dl = dlpack;

[[noreturn]] void throw_buffer_error(const std::string& msg) {
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

// ---- arguments ----

// max_version: None (legacy capsule) or (major, minor). Returns true for a versioned capsule.
bool wants_versioned(py::handle max_version) {
    if (max_version.is_none()) return false;
    const bool seq =
        py::isinstance<py::tuple>(max_version) || py::isinstance<py::list>(max_version);
    ISTHMUS_CHECK(seq, type_error,
                  "__dlpack__: max_version must be None or a (major, minor) tuple of ints, got ",
                  type_name(max_version));
    const bool tuple = PyTuple_Check(max_version.ptr());
    const Py_ssize_t n =
        tuple ? PyTuple_GET_SIZE(max_version.ptr()) : PyList_GET_SIZE(max_version.ptr());
    ISTHMUS_CHECK(n == 2, value_error,
                  "__dlpack__: max_version must be a (major, minor) tuple, got ", n, " entries");
    long long v[2];
    for (Py_ssize_t i = 0; i < 2; ++i) {
        PyObject* x =
            tuple ? PyTuple_GET_ITEM(max_version.ptr(), i) : PyList_GET_ITEM(max_version.ptr(), i);
        ISTHMUS_CHECK(!PyBool_Check(x) && PyLong_Check(x), type_error,
                      "__dlpack__: max_version must hold ints, entry ", i, " is a ", type_name(x));
        int overflow = 0;
        v[i] = PyLong_AsLongLongAndOverflow(x, &overflow);
        if (overflow != 0) v[i] = overflow > 0 ? std::numeric_limits<long long>::max() : -1;
        ISTHMUS_CHECK(v[i] >= 0, value_error, "__dlpack__: max_version entries must be >= 0, got ",
                      py::repr(max_version).cast<std::string>());
    }
    return v[0] >= 1;
}

// `stream=` as an int: TypeError for anything but None or an int, ValueError past 64 bits.
std::optional<int64_t> stream_int(py::handle stream, const char* what) {
    if (stream.is_none()) return std::nullopt;
    ISTHMUS_CHECK(!PyBool_Check(stream.ptr()) && PyLong_Check(stream.ptr()), type_error, what,
                  ": stream must be None or an int (a cudaStream_t, 1, 2 or -1), got a ",
                  type_name(stream));
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(stream.ptr(), &overflow);
    ISTHMUS_CHECK(overflow == 0, value_error, what, ": stream ",
                  py::str(stream).cast<std::string>(), " is not a stream handle");
    return static_cast<int64_t>(v);
}

// The stream rule for CPU data: stream must be None.
void check_cpu_stream(py::handle stream) {
    if (stream.is_none()) return;
    ISTHMUS_CHECK(!PyBool_Check(stream.ptr()) && PyLong_Check(stream.ptr()), type_error,
                  "__dlpack__: stream must be None for a CPU tensor, got a ", type_name(stream));
    ISTHMUS_THROW(value_error, "__dlpack__: stream must be None for a CPU tensor (streams order ",
                  "work on CUDA/ROCm devices), got ", py::str(stream).cast<std::string>());
}

// The consumer's stream for an export of CUDA data (Note [dlpack streams]): the cudaStream_t to
// make wait for isthmus's stream, or nullptr for -1 (no synchronisation).
void* consumer_stream(py::handle stream) {
    return dlpack_consumer_stream(stream_int(stream, "__dlpack__"));
}

// dl_device=: nullopt (None), -1 for (kDLCPU, 0), n for (kDLCUDA, n); BufferError otherwise.
std::optional<int> export_device_arg(py::handle dl_device) {
    if (dl_device.is_none()) return std::nullopt;
    const auto [type, id] = device_pair(dl_device, "__dlpack__: dl_device");
    if (type == dl::kDLCPU) {
        if (id != 0)
            throw_buffer_error(detail::concat("__dlpack__: dl_device ", dl_device_str(type, id),
                                              ": the CPU device id must be 0"));
        return -1;
    }
    if (type == dl::kDLCUDA) {
        if (!cuda::available())
            throw_buffer_error(detail::concat(
                "__dlpack__: cannot export to DLPack device ", dl_device_str(type, id),
                ": CUDA is not available: ", cuda::unavailable_reason()));
        cuda::ensure_registered();
        const int n = cuda::device_count();
        if (id < 0 || id >= n)
            throw_buffer_error(detail::concat("__dlpack__: dl_device ", dl_device_str(type, id),
                                              ": CUDA device ", id, " does not exist (", n,
                                              " device", n == 1 ? "" : "s", " here)"));
        return static_cast<int>(id);
    }
    throw_buffer_error(detail::concat(
        "__dlpack__: cannot export to DLPack device ", dl_device_str(type, id),
        "; isthmus exports to the CPU (kDLCPU, 0) and to CUDA devices (kDLCUDA, n) only"));
}

// ---- export ----

// Note [export context]: one heap block per export. The context keeps the storage (not a
// tensor: the shape and strides live here once) and holds the shape and strides the DLTensor
// points into, inline up to `inline_dims` dimensions (a second block beyond), so an export costs
// this block and the capsule.
struct export_ctx {
    static constexpr int64_t inline_dims = 8;

    std::shared_ptr<storage> st; // keeps the memory alive; pinned to `resource` while `pinned`
    bool pinned = false;
    resource_id resource = MEMRESOURCE_CPU; // where the storage is pinned for the consumer
    int device = -1;                        // its CUDA ordinal (-1: the CPU)
    void* release_wait = nullptr; // the stream isthmus's stream waits for at release (or none)
    int64_t dims[2 * inline_dims] = {};   // shape then strides when ndim <= inline_dims
    std::unique_ptr<int64_t[]> more_dims; // otherwise
    dl::DLManagedTensor legacy{};
    dl::DLManagedTensorVersioned versioned{};

    explicit export_ctx(int64_t ndim)
        : more_dims(ndim > inline_dims ? std::make_unique<int64_t[]>(2 * ndim) : nullptr) {}
    export_ctx(const export_ctx&) = delete;
    export_ctx& operator=(const export_ctx&) = delete;
    ~export_ctx() {
        if (!pinned) return;
        if (device >= 0 && release_wait) {
            try { // Note [export release order]
                cuda::stream_wait_for(device, release_wait);
            } catch (...) { // never throw from a deleter; at exit CUDA may be gone already
            }
        }
        try {
            st->unpin(resource);
        } catch (...) { // never throw from a deleter; the pin count is the storage's
        }
    }

    int64_t* shape() noexcept { return more_dims ? more_dims.get() : dims; }
};

// The deleters handed to consumers: plain C++, no GIL needed, any thread.
void delete_legacy(dl::DLManagedTensor* self) {
    if (self) delete static_cast<export_ctx*>(self->manager_ctx);
}
void delete_versioned(dl::DLManagedTensorVersioned* self) {
    if (self) delete static_cast<export_ctx*>(self->manager_ctx);
}

// The capsule destructor: frees the tensor unless a consumer renamed (took) the capsule.
void capsule_destructor(PyObject* cap) {
    // A destructor may run while an exception is being raised: keep it.
#if PY_VERSION_HEX >= 0x030C0000
    PyObject* raised = PyErr_GetRaisedException();
#else
    PyObject *type, *val, *tb;
    PyErr_Fetch(&type, &val, &tb);
#endif
    // The name is usually the very pointer the capsule was made with (a consumer that took it
    // renamed it "used_..."); the text comparison covers any other spelling.
    const char* name = PyCapsule_GetName(cap);
    if (name == dl::capsule_versioned ||
        (name != dl::capsule_legacy && PyCapsule_IsValid(cap, dl::capsule_versioned))) {
        auto* m = static_cast<dl::DLManagedTensorVersioned*>(PyCapsule_GetPointer(cap, name));
        if (m && m->deleter) m->deleter(m);
    } else if (name == dl::capsule_legacy || PyCapsule_IsValid(cap, dl::capsule_legacy)) {
        auto* m = static_cast<dl::DLManagedTensor*>(PyCapsule_GetPointer(cap, name));
        if (m && m->deleter) m->deleter(m);
    }
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(raised);
#else
    PyErr_Restore(type, val, tb);
#endif
}

bool has_negative_stride(const tensor& t) {
    const shape_t& shape = t.shape();
    const shape_t& strides = t.strides();
    for (size_t d = 0; d < shape.size(); ++d)
        if (shape[d] > 1 && strides[d] < 0) return true;
    return false;
}

py::object export_capsule(const tensor& t, bool versioned, bool copied, resource_id resource,
                          void* consumer);

// The resource an export to `cuda_device` (-1: the CPU) pins.
resource_id export_resource(int cuda_device) {
    return cuda_device < 0 ? MEMRESOURCE_CPU : cuda_resource(cuda_device);
}

} // namespace

py::object dlpack_export(const value& v, py::handle stream, py::handle max_version,
                         py::handle dl_device, py::handle copy) {
    // Validate every argument before touching the value.
    const copy_policy policy = copy_policy_of(copy, "__dlpack__");
    const bool versioned = wants_versioned(max_version);
    const std::optional<int> asked = export_device_arg(dl_device);
    stream_int(stream, "__dlpack__"); // the type, for every device
    require_init("__dlpack__");
    if (!v.is_tensor() && !v.is_scalar())
        throw_buffer_error(detail::concat("__dlpack__: only tensor and scalar values can be "
                                          "exported through DLPack, this value is a ",
                                          v.kind_name()));

    // Note [dlpack cuda]: from where the data is, or from the device the consumer asked for.
    const int source = v.is_tensor() ? cuda_ordinal(v.as_tensor().location()) : -1;
    const int target = asked.value_or(source);
    void* wait_stream = nullptr;
    if (target < 0)
        check_cpu_stream(stream);
    else
        wait_stream = consumer_stream(stream);
    const resource_id resource = export_resource(target);

    const tensor* exported = nullptr; // the value's own tensor, or `made`
    tensor made;
    bool copied = false;
    if (v.is_tensor()) {
        const tensor& t = v.as_tensor();
        exported = &t;
        // Note [negative strides]: DLPack allows negative strides, but common consumers do not
        // (PyTorch 2.x aborts the process on them), so such views are exported as a copy.
        const resource_id pinned = t.storage()->pinned_to();
        const bool negative = has_negative_stride(t);
        const bool elsewhere = pinned != -1 && pinned != resource;
        if (policy == copy_policy::always || negative || elsewhere) {
            if (policy == copy_policy::never)
                throw_buffer_error(
                    negative
                        ? std::string("__dlpack__: the tensor has negative strides, which DLPack "
                                      "consumers such as PyTorch do not accept, so it can only be "
                                      "exported as a copy; pass copy=None/True or export "
                                      "A.contiguous()")
                        : detail::concat("__dlpack__: the storage is shared with a foreign "
                                         "library on ",
                                         get_resource(pinned).name(), ", so it cannot move to ",
                                         get_resource(resource).name(),
                                         " and can only be exported there as a copy; pass "
                                         "copy=None/True"));
            py::gil_scoped_release nogil;
            made = to_resource(t, resource, true);
            exported = &made;
            copied = true;
        }
    } else {
        if (policy == copy_policy::never)
            throw_buffer_error("__dlpack__: a scalar value has no memory to share, so it is "
                               "exported as a new 0-d tensor; pass copy=None/True");
        made = v.as_scalar().to_tensor();
        if (target >= 0) {
            py::gil_scoped_release nogil;
            made = to_resource(made, resource, true);
        }
        exported = &made;
        copied = true;
    }
    py::object cap = export_capsule(*exported, versioned, copied, resource, wait_stream);
    // Note [dlpack streams]: the consumer's stream waits for isthmus's work (the pinning
    // transfer or the copy included); on error the capsule's destructor gives the pin back.
    if (wait_stream) cuda::make_stream_wait(wait_stream, target);
    return cap;
}

namespace {

// The capsule for `t` itself (its layout as it is), pinned to and exported from `resource`: the
// tail of dlpack_export, shared with dlpack_capsule (C++ hosts' to_torch). `consumer`: the
// consumer's stream for device exports (nullptr: none), waited for at release.
py::object export_capsule(const tensor& t, bool versioned, bool copied, resource_id resource,
                          void* consumer) {
    // Note [read-only broadcast views]: the versioned capsule carries the read-only flag; a
    // legacy one cannot, so a broadcast view is refused there (NumPy refuses read-only arrays
    // the same way) rather than handed out as writable memory.
    if (!versioned && !t.is_writable())
        throw_buffer_error(detail::concat(
            "__dlpack__: the value is a read-only broadcast view (shape ", shape_str(t.shape()),
            ") and legacy DLPack cannot mark it read-only; pass max_version=(1, 0) or export a "
            "copy (contiguous())"));
    const int64_t ndim = t.dim();
    auto ctx = std::make_unique<export_ctx>(ndim);
    ctx->st = t.storage();
    ctx->resource = resource;
    ctx->device = resource == MEMRESOURCE_CPU ? -1 : resource - cuda_resource(0);
    ctx->release_wait = ctx->device >= 0 ? release_wait_stream(true, consumer) : nullptr;
    int64_t* shape = ctx->shape();
    int64_t* strides = shape + ndim;
    std::copy(t.shape().begin(), t.shape().end(), shape);
    std::copy(t.strides().begin(), t.strides().end(), strides);
    void* data = nullptr;
    {
        // Pinning may transfer between resources, which is worth releasing the GIL for; a copy
        // that is already valid (the common case) makes it a few bookkeeping steps, cheaper than
        // the GIL round trip.
        std::optional<py::gil_scoped_release> nogil;
        if (!t.storage()->valid_on(resource)) nogil.emplace();
        data = t.pin(resource);
        ctx->pinned = true;
    }
    dl::DLTensor tensor_desc{};
    tensor_desc.data = data;
    tensor_desc.device =
        resource == MEMRESOURCE_CPU
            ? dl::DLDevice{dl::kDLCPU, 0}
            : dl::DLDevice{dl::kDLCUDA, static_cast<int32_t>(resource - cuda_resource(0))};
    tensor_desc.ndim = static_cast<int32_t>(ndim);
    tensor_desc.dtype = dl_dtype(t.dtype());
    tensor_desc.shape = shape; // non-null for 0-d tensors too (the inline array)
    tensor_desc.strides = strides;
    tensor_desc.byte_offset = 0;

    void* managed = nullptr;
    const char* name = nullptr;
    if (versioned) {
        auto& m = ctx->versioned;
        m.version = dl::DLPackVersion{dl::version_major, dl::version_minor};
        m.manager_ctx = ctx.get();
        m.deleter = &delete_versioned;
        m.flags = (copied ? dl::flag_is_copied : 0) | (t.is_writable() ? 0 : dl::flag_read_only);
        m.dl_tensor = tensor_desc;
        managed = &m;
        name = dl::capsule_versioned;
    } else {
        auto& m = ctx->legacy;
        m.dl_tensor = tensor_desc;
        m.manager_ctx = ctx.get();
        m.deleter = &delete_legacy;
        managed = &m;
        name = dl::capsule_legacy;
    }
    PyObject* cap = PyCapsule_New(managed, name, &capsule_destructor);
    if (!cap) throw py::error_already_set(); // ctx (and its pin) released by unique_ptr
    ctx.release();                           // owned by the capsule / its consumer from here
    return py::reinterpret_steal<py::object>(cap);
}

} // namespace

py::tuple dlpack_device(const value& v) {
    if (v.is_tensor()) {
        // Note [dlpack cuda]: where tensor::location() is.
        const int n = cuda_ordinal(v.as_tensor().location());
        if (n >= 0) return py::make_tuple(static_cast<int>(dl::kDLCUDA), n);
    } else if (!v.is_scalar()) {
        throw_buffer_error(detail::concat("__dlpack_device__: only tensor and scalar values can "
                                          "be exported through DLPack, this value is a ",
                                          v.kind_name()));
    }
    return py::make_tuple(static_cast<int>(dl::kDLCPU), 0);
}

namespace {

// ---- import ----

bool interpreter_finalizing() noexcept {
#if PY_VERSION_HEX >= 0x030D0000
    return !Py_IsInitialized() || Py_IsFinalizing();
#else
    return !Py_IsInitialized() || _Py_IsFinalizing();
#endif
}

// Calls a consumed tensor's deleter: at most once, on any thread, without the GIL (producers'
// deleters take it themselves when they need it). At interpreter shutdown the tensor is leaked
// instead, since a Python producer's deleter could touch a finalizing interpreter.
template <typename Managed>
void call_deleter(Managed* m) noexcept {
    if (!m || !m->deleter || interpreter_finalizing()) return;
    m->deleter(m);
}

// A consumed DLManagedTensor(Versioned), released through its deleter.
struct dl_owner {
    void* managed = nullptr;
    bool versioned = false;

    void release() const noexcept {
        if (versioned)
            call_deleter(static_cast<dl::DLManagedTensorVersioned*>(managed));
        else
            call_deleter(static_cast<dl::DLManagedTensor*>(managed));
    }
};

struct parsed_capsule {
    dl_owner owner;
    const char* used_name = nullptr;
    dtype dt = dtype::float32;
    shape_t shape, strides;
    char* data = nullptr;
    int cuda_device = -1; // the CUDA ordinal for kDLCUDA data, else -1 (host memory)
    bool read_only = false;
    bool is_copied = false;
    bool aligned = true;
};

size_t alignment_of(dtype dt) {
    return is_complex(dt) ? itemsize(dt) / 2 : itemsize(dt);
}

void parse_managed(parsed_capsule& out, void* managed);

// Reads and checks a capsule without consuming it (so an error leaves it to its producer).
parsed_capsule parse_capsule(py::handle cap) {
    ISTHMUS_CHECK(PyCapsule_CheckExact(cap.ptr()), type_error,
                  "from_dlpack: __dlpack__ must return a PyCapsule, got ", type_name(cap));
    const char* name = PyCapsule_GetName(cap.ptr());
    if (!name) {
        PyErr_Clear();
        name = "";
    }
    parsed_capsule out;
    if (std::strcmp(name, dl::capsule_versioned) == 0) {
        out.owner.versioned = true;
        out.used_name = dl::capsule_versioned_used;
    } else if (std::strcmp(name, dl::capsule_legacy) == 0) {
        out.used_name = dl::capsule_legacy_used;
    } else if (std::strcmp(name, dl::capsule_versioned_used) == 0 ||
               std::strcmp(name, dl::capsule_legacy_used) == 0) {
        ISTHMUS_THROW(value_error,
                      "from_dlpack: the DLPack capsule was already consumed (its name "
                      "is \"",
                      name,
                      "\"); a capsule can be imported only once, call __dlpack__() again for a "
                      "new one");
    } else {
        ISTHMUS_THROW(type_error, "from_dlpack: not a DLPack capsule (its name is \"", name,
                      "\", expected \"dltensor_versioned\" or \"dltensor\")");
    }
    void* managed = PyCapsule_GetPointer(cap.ptr(), name);
    if (!managed) throw py::error_already_set();
    parse_managed(out, managed);
    return out;
}

// Reads and checks the managed tensor `managed` (versioned when out.owner.versioned) into
// `out`, without taking it: the caller releases it on error.
void parse_managed(parsed_capsule& out, void* managed) {
    out.owner.managed = managed;
    const dl::DLTensor* t = nullptr;
    if (out.owner.versioned) {
        auto* m = static_cast<dl::DLManagedTensorVersioned*>(out.owner.managed);
        // A different major version may lay the struct out differently: read nothing else.
        if (m->version.major != dl::version_major)
            throw_buffer_error(detail::concat("from_dlpack: the producer's DLPack version ",
                                              m->version.major, ".", m->version.minor,
                                              " is not supported; isthmus reads DLPack ",
                                              dl::version_major, ".x"));
        t = &m->dl_tensor;
        out.read_only = (m->flags & dl::flag_read_only) != 0;
        out.is_copied = (m->flags & dl::flag_is_copied) != 0;
    } else {
        t = &static_cast<dl::DLManagedTensor*>(out.owner.managed)->dl_tensor;
    }

    // Note [dlpack cuda]: host memory is wrapped on the CPU, CUDA memory on its device.
    if (t->device.device_type == dl::kDLCUDA) {
        out.cuda_device = t->device.device_id;
        require_cuda(
            detail::concat("from_dlpack: the tensor is on CUDA device ", t->device.device_id),
            t->device.device_id);
    } else if (!host_accessible(t->device.device_type)) {
        throw_buffer_error(detail::concat(
            "from_dlpack: the tensor is on DLPack device ",
            dl_device_str(t->device.device_type, t->device.device_id),
            "; isthmus reads host memory and CUDA devices (kDLCUDA) only (copy it to the CPU "
            "first, e.g. t.cpu())"));
    }
    out.dt = dtype_from_dl(t->dtype);
    ISTHMUS_CHECK(t->ndim >= 0 && t->ndim <= max_rank, value_error,
                  "from_dlpack: malformed DLPack tensor: ndim is ", t->ndim,
                  " (isthmus allows 0 to ", max_rank, ")");
    ISTHMUS_CHECK(t->ndim == 0 || t->shape, value_error,
                  "from_dlpack: malformed DLPack tensor: shape is NULL for ndim ", t->ndim);
    for (int32_t i = 0; i < t->ndim; ++i) {
        const int64_t n = t->shape[i];
        ISTHMUS_CHECK(n >= 0, value_error, "from_dlpack: malformed DLPack tensor: size ", n,
                      " in dimension ", i);
        out.shape.push_back(n);
    }
    // Note [checked sizes]: the same rule as every other shape, zero-size dimensions included.
    const int64_t numel = checked_numel(out.shape, itemsize(out.dt), "from_dlpack");
    if (t->strides) {
        for (int32_t i = 0; i < t->ndim; ++i) out.strides.push_back(t->strides[i]);
        // The byte span must be addressable (also rules out absurd strides).
        if (numel > 0) {
            int64_t span = 0;
            for (int32_t i = 0; i < t->ndim; ++i) {
                int64_t s = 0;
                const int64_t st = out.strides[static_cast<size_t>(i)];
                // |st|, with INT64_MIN (whose negation overflows) refused below
                const int64_t a = st == std::numeric_limits<int64_t>::min() ? 0 : st < 0 ? -st : st;
                ISTHMUS_CHECK(
                    st > std::numeric_limits<int64_t>::min() &&
                        !__builtin_mul_overflow(a, out.shape[static_cast<size_t>(i)] - 1, &s) &&
                        !__builtin_add_overflow(span, s, &span),
                    value_error, "from_dlpack: malformed DLPack tensor: strides ",
                    shape_str(out.strides), " overflow for shape ", shape_str(out.shape));
            }
            int64_t bytes = 0, elements = 0;
            ISTHMUS_CHECK(!__builtin_add_overflow(span, 1, &elements) &&
                              !__builtin_mul_overflow(
                                  elements, static_cast<int64_t>(itemsize(out.dt)), &bytes),
                          value_error, "from_dlpack: malformed DLPack tensor: strides ",
                          shape_str(out.strides), " overflow for shape ", shape_str(out.shape));
        }
    } else {
        out.strides = contiguous_strides(out.shape);
        int64_t bytes = 0;
        ISTHMUS_CHECK(
            !__builtin_mul_overflow(numel, static_cast<int64_t>(itemsize(out.dt)), &bytes),
            value_error, "from_dlpack: malformed DLPack tensor: ", shape_str(out.shape),
            " elements overflow");
    }
    ISTHMUS_CHECK(t->data || numel == 0, value_error,
                  "from_dlpack: malformed DLPack tensor: data is NULL for ", numel, " elements");
    // The offset is added as an address, checked: `data + byte_offset` on a NULL or wrapping
    // pointer is undefined behaviour (a fuzz finding). NULL data stays NULL (nothing to read).
    uintptr_t address = 0;
    ISTHMUS_CHECK(
        !__builtin_add_overflow(reinterpret_cast<uintptr_t>(t->data), t->byte_offset, &address),
        value_error, "from_dlpack: malformed DLPack tensor: byte_offset ", t->byte_offset,
        " overflows the data pointer");
    out.data = t->data ? reinterpret_cast<char*>(address) : nullptr;
    out.aligned = reinterpret_cast<uintptr_t>(out.data) % alignment_of(out.dt) == 0;
    // Note [misaligned device data] (cuda_array_interface.cpp): refused on a device.
    if (out.cuda_device >= 0 && numel > 0)
        ISTHMUS_CHECK(reinterpret_cast<uintptr_t>(out.data) % itemsize(out.dt) == 0, value_error,
                      "from_dlpack: the CUDA data at ", static_cast<const void*>(out.data),
                      " is not aligned to its ", itemsize(out.dt),
                      "-byte elements, which neither isthmus's kernels nor a device copy can "
                      "read; pass an aligned tensor (e.g. a copy made by the producer)");
    if (out.cuda_device >= 0 && numel > 0) {
        // A producer that labels host memory kDLCUDA would make every kernel fault: check.
        int owner = -1;
        try {
            owner = cuda::pointer_device(out.data);
        } catch (const value_error&) {
        }
        ISTHMUS_CHECK(owner == out.cuda_device, value_error,
                      "from_dlpack: malformed DLPack tensor: the producer says CUDA device ",
                      out.cuda_device, ", but its data ", static_cast<const void*>(out.data),
                      owner < 0 ? std::string(" is not CUDA device memory")
                                : detail::concat(" is memory of CUDA device ", owner));
    }
}

// Takes the parsed tensor (Note [dlpack import]): wraps its memory, or copies it and releases it
// at once. `cap`, when given, is the capsule it came in: renamed "used_..." when taken, and left
// to its producer on an error before that. Without a capsule the tensor is the caller's from the
// start, so every error releases it.
tensor consume_parsed(parsed_capsule& pc, copy_policy policy, PyObject* cap) {
    bool taken = cap == nullptr;
    auto take = [&] {
        if (cap && PyCapsule_SetName(cap, pc.used_name) != 0) throw py::error_already_set();
        taken = true;
    };
    try {
        const bool empty = numel_of(pc.shape) == 0;
        const char* why = pc.read_only  ? "it is read-only (isthmus tensors are writable)"
                          : !pc.aligned ? "its data is not aligned to its element type"
                                        : nullptr;
        if (why && policy == copy_policy::never)
            ISTHMUS_THROW(value_error, "from_dlpack: cannot share the tensor without a copy: ", why,
                          "; pass copy=None (or True) to allow a copy");
        const bool copy = why || empty || (policy == copy_policy::always && !pc.is_copied);
        const int dev = pc.cuda_device;
        const resource_id resource = dev < 0 ? MEMRESOURCE_CPU : cuda_resource(dev);

        if (copy) {
            tensor out = tensor::empty(pc.shape, pc.dt, resource);
            if (!empty) {
                tensor view = tensor::wrap(pc.data, pc.dt, pc.shape, pc.strides, resource, {});
                py::gil_scoped_release nogil;
                out.copy_from(view);
                // Note [dlpack streams]: the copy is queued on isthmus's stream; the producer
                // gets its memory back only once it ran.
                if (dev >= 0) cuda::synchronize(dev);
            }
            // The bytes are ours now: take the tensor and give the producer's memory back.
            take();
            pc.owner.release();
            return out;
        }
        take();
        // tensor::wrap either throws before its storage owns the callback, or owns it.
        if (dev < 0)
            return tensor::wrap(pc.data, pc.dt, pc.shape, pc.strides, resource,
                                [owner = pc.owner]() { owner.release(); });
        return tensor::wrap(pc.data, pc.dt, pc.shape, pc.strides, resource,
                            [owner = pc.owner, dev]() {
                                // Note [dlpack streams]: isthmus's queued work first.
                                if (!interpreter_finalizing()) wait_for_isthmus(dev);
                                owner.release();
                            });
    } catch (...) {
        if (taken) pc.owner.release(); // ours (renamed capsule, or none): the deleter is ours
        throw;
    }
}

// Consumes a DLPack capsule (Note [dlpack import]).
tensor consume_capsule(py::handle cap, copy_policy policy) {
    parsed_capsule pc = parse_capsule(cap);
    return consume_parsed(pc, policy, cap.ptr());
}

// from_dlpack's `device=`: nullopt (None), -1 for the CPU, n for CUDA device n ("cuda",
// "cuda:n", (kDLCUDA, n)); CUDA devices must exist (RuntimeError without CUDA).
std::optional<int> import_device(py::handle device) {
    if (device.is_none()) return std::nullopt;
    if (py::isinstance<py::str>(device)) {
        const std::string d = device.cast<std::string>();
        const std::optional<int> number = device_number(d);
        ISTHMUS_CHECK(number.has_value(), value_error, "from_dlpack: unknown device \"", d,
                      "\"; expected \"cpu\", \"cuda\", \"cuda:N\" or a (device_type, device_id) "
                      "tuple such as (1, 0) or (2, 0)");
        if (*number < 0) return -1;
        const int n = *number;
        require_cuda(detail::concat("from_dlpack(device=\"", d, "\")"), n);
        return n;
    }
    const auto [type, id] = device_pair(device, "from_dlpack: device");
    if (type == dl::kDLCPU && id == 0) return -1;
    if (type == dl::kDLCUDA) {
        ISTHMUS_CHECK(id >= 0 && id < 100000, value_error, "from_dlpack: device ",
                      dl_device_str(type, id), " has no valid device id");
        require_cuda(detail::concat("from_dlpack(device=", dl_device_str(type, id), ")"),
                     static_cast<int>(id));
        return static_cast<int>(id);
    }
    throw_buffer_error(detail::concat("from_dlpack: device ", dl_device_str(type, id),
                                      " is not supported; isthmus holds data on the CPU (1, 0) "
                                      "and on CUDA devices (2, n)"));
}

// `t` on the device `want` asked for (-1: the CPU): itself when it is there, else a copy
// (ValueError when copy=False forbids it).
tensor on_device(tensor t, std::optional<int> want, copy_policy policy) {
    if (!want) return t;
    const resource_id resource = *want < 0 ? MEMRESOURCE_CPU : cuda_resource(*want);
    const resource_id pinned = t.storage()->pinned_to();
    if (pinned == resource || (pinned == -1 && t.location() == resource)) return t;
    ISTHMUS_CHECK(policy != copy_policy::never, value_error, "from_dlpack: the data is on ",
                  get_resource(t.location()).name(), " and device ", get_resource(resource).name(),
                  " was asked: that needs a copy, and copy=False was given");
    py::gil_scoped_release nogil;
    return to_resource(t, resource, true);
}

// Note [dlpack exchange api]: DLPack 1.2 added a table of C functions that a producer's type
// carries as `__dlpack_c_exchange_api__` (a capsule named "dlpack_exchange_api"; torch.Tensor has
// one). Importing through it skips the Python-level `__dlpack__` and `__dlpack_device__` calls
// (torch's are Python functions costing microseconds, which every `A + t` would pay): the table's
// managed_tensor_from_py_object_no_sync hands over a versioned managed tensor directly, parsed and
// taken like a capsule's (it is ours from the start, so an error releases it here). Streams: the
// function does not synchronise, so for CUDA data isthmus's stream waits (an event, no host
// wait) for the producer's current_work_stream on that device, the order `__dlpack__(stream=)`
// would have given (Note [dlpack streams]). A refusal is a BufferError (the producer's own, or
// one carrying the first line of its message). Tables are looked up once per type (the spec keeps
// them alive for the process); a table is used when it, or one in its prev_api chain, has major
// version 1. The path serves `from_dlpack(x)` without `device=` (which asks the producer to
// move the data) and every inbound conversion of such tensors; the producer's own checks of
// `__dlpack__` are skipped, so torch's requires_grad and conjugate/negative bits are checked
// before (tensor_from_dlpack).
const dl::DLPackExchangeAPI* exchange_api_of(PyTypeObject* type) {
    struct entry {
        PyTypeObject* type;
        const dl::DLPackExchangeAPI* api;
    };
    // A few producer types, each asked once; an entry holds a reference to its type, so the
    // address cannot come back as another type. Past the last entry, types are asked each time.
    static entry cache[16];
    static int cached = 0;
    for (int i = 0; i < cached; ++i)
        if (cache[i].type == type) return cache[i].api;
    static PyObject* const attr = PyUnicode_InternFromString("__dlpack_c_exchange_api__");
    const dl::DLPackExchangeAPI* api = nullptr;
    PyObject* cap = PyObject_GetAttr(reinterpret_cast<PyObject*>(type), attr);
    if (!cap) {
        PyErr_Clear(); // no table: the producer's __dlpack__ serves
    } else {
        if (PyCapsule_IsValid(cap, dl::capsule_exchange_api)) {
            auto* header = static_cast<dl::DLPackExchangeAPIHeader*>(
                PyCapsule_GetPointer(cap, dl::capsule_exchange_api));
            while (header && header->version.major != 1) header = header->prev_api;
            api = reinterpret_cast<const dl::DLPackExchangeAPI*>(header);
            if (api && (!api->managed_tensor_from_py_object_no_sync || !api->current_work_stream))
                api = nullptr;
        }
        Py_DECREF(cap);
    }
    if (cached < static_cast<int>(std::size(cache))) {
        Py_INCREF(type);
        cache[cached++] = {type, api};
    }
    return api;
}

// Imports `obj` through its type's exchange table (Note [dlpack exchange api]); nullopt when the
// type has none.
std::optional<tensor> exchange_import(py::handle obj, copy_policy policy) {
    const dl::DLPackExchangeAPI* api = exchange_api_of(Py_TYPE(obj.ptr()));
    if (!api) return std::nullopt;
    dl::DLManagedTensorVersioned* managed = nullptr;
    if (api->managed_tensor_from_py_object_no_sync(obj.ptr(), &managed) != 0 || !managed) {
        // Refused. Producers are asked for a BufferError, but torch raises RuntimeError with
        // its C++ frames appended: the consumer's error is a BufferError with the first line.
        std::string why = "no reason given";
        if (PyErr_Occurred()) {
            py::error_already_set e;
            if (e.matches(PyExc_BufferError)) throw;
            why = py::str(e.value()).cast<std::string>();
            why = why.substr(0, why.find('\n'));
        }
        throw_buffer_error(detail::concat("from_dlpack: the ", type_name(obj),
                                          " cannot be exported through DLPack: ", why));
    }
    parsed_capsule pc;
    pc.owner = {managed, true};
    try {
        parse_managed(pc, managed);
        if (pc.cuda_device >= 0) {
            void* producer_stream = nullptr;
            if (api->current_work_stream(dl::kDLCUDA, pc.cuda_device, &producer_stream) != 0)
                throw py::error_already_set();
            cuda::stream_wait_for(pc.cuda_device, producer_stream);
        }
    } catch (...) {
        pc.owner.release(); // ours, and never handed to a tensor: the producer's memory goes back
        throw;
    }
    return consume_parsed(pc, policy, nullptr); // releases it on error
}

py::str& dlpack_attr() {
    static auto* s = new py::str("__dlpack__");
    return *s;
}

} // namespace

bool is_dlpack_producer(py::handle obj) {
    PyObject* o = obj.ptr();
    if (PyLong_Check(o) || PyFloat_Check(o) || PyComplex_Check(o) || PyUnicode_Check(o) ||
        PyList_Check(o) || PyTuple_Check(o) || o == Py_None || PyBool_Check(o))
        return false;
    if (is_qvalue(obj) || py::isinstance<py::array>(obj)) return false;
    if (PyObject_HasAttr(o, dlpack_attr().ptr()) == 1) return true;
    static PyObject* const cai = PyUnicode_InternFromString("__cuda_array_interface__");
    return PyObject_HasAttr(o, cai) == 1; // CuPy, Numba and other CUDA producers
}

tensor tensor_from_dlpack(py::handle obj, copy_policy policy, py::handle device) {
    const std::optional<int> want = import_device(device);
    if (PyCapsule_CheckExact(obj.ptr()))
        return on_device(consume_capsule(obj, policy), want, policy);

    static PyObject* const requires_grad = PyUnicode_InternFromString("requires_grad");
    auto rg = py::reinterpret_steal<py::object>(PyObject_GetAttr(obj.ptr(), requires_grad));
    if (!rg) {
        PyErr_Clear(); // no such attribute (as hasattr): not a torch-like tensor
    } else if (rg.ptr() == Py_True) {
        throw_buffer_error(
            "cannot share a tensor that requires grad: autograd would not see isthmus's reads "
            "and writes. Pass t.detach() (shares memory) or use q.torch.from_tensor(t), which "
            "detaches");
    }
    // Note [conjugate and negative views]: torch tensors with the conjugate or negative bit set
    // cannot be exported (their memory holds the unconjugated, unnegated values): resolving the
    // bit is a copy, made when copies are allowed and refused (ValueError) with copy=False.
    py::object resolved;
    if (rg) { // torch-like
        static PyObject* const is_conj = PyUnicode_InternFromString("is_conj");
        static PyObject* const is_neg = PyUnicode_InternFromString("is_neg");
        for (PyObject* method : {is_conj, is_neg}) {
            auto bit =
                py::reinterpret_steal<py::object>(PyObject_CallMethodNoArgs(obj.ptr(), method));
            if (!bit) {
                PyErr_Clear(); // no such method: not a torch tensor
                break;
            }
            if (bit.ptr() != Py_True) continue;
            ISTHMUS_CHECK(policy != copy_policy::never, value_error,
                          "cannot share a tensor with the ",
                          method == is_conj ? "conjugate" : "negative",
                          " bit set without a copy; pass copy=None (or True), or resolve it "
                          "first (t.resolve_conj(), t.resolve_neg())");
            resolved = obj.attr("resolve_conj")().attr("resolve_neg")();
            break;
        }
    }
    if (resolved)
        return tensor_from_dlpack(
            resolved, policy == copy_policy::always ? copy_policy::if_needed : policy, device);
    if (!want)
        if (std::optional<tensor> t = exchange_import(obj, policy)) return std::move(*t);
    if (PyObject_HasAttr(obj.ptr(), dlpack_attr().ptr()) != 1) {
        static PyObject* const cai = PyUnicode_InternFromString("__cuda_array_interface__");
        auto interface = py::reinterpret_steal<py::object>(PyObject_GetAttr(obj.ptr(), cai));
        if (!interface) {
            if (!PyErr_ExceptionMatches(PyExc_AttributeError)) throw py::error_already_set();
            PyErr_Clear();
            ISTHMUS_THROW(type_error,
                          "from_dlpack: expected an object with __dlpack__ (a NumPy array, a "
                          "torch tensor, a qvalue, ...), with __cuda_array_interface__, or a "
                          "DLPack capsule, got ",
                          type_name(obj));
        }
        return on_device(tensor_from_cuda_array_interface(obj, interface, policy), want, policy);
    }

    // Note [dlpack streams]: the producer's device decides whether a stream is passed.
    int source = -1;
    static PyObject* const device_attr = PyUnicode_InternFromString("__dlpack_device__");
    if (PyObject_HasAttr(obj.ptr(), device_attr) == 1) {
        const auto [type, id] =
            device_pair(obj.attr("__dlpack_device__")(), "from_dlpack: __dlpack_device__()");
        if (type == dl::kDLCUDA) source = static_cast<int>(id);
    }
    // The keywords for an export to `target` (-1: the CPU); `ask` passes dl_device.
    auto call = [&](int target, bool ask) -> py::object {
        py::dict kwargs, legacy;
        kwargs["max_version"] = py::make_tuple(dl::version_major, dl::version_minor);
        if (policy != copy_policy::if_needed)
            kwargs["copy"] = py::bool_(policy == copy_policy::always);
        if (ask)
            kwargs["dl_device"] =
                py::make_tuple(int{target < 0 ? dl::kDLCPU : dl::kDLCUDA}, target < 0 ? 0 : target);
        if (target >= 0) {
            require_cuda(
                detail::concat("from_dlpack: the producer's data is on CUDA device ", target),
                target);
            const auto s = reinterpret_cast<uintptr_t>(cuda::stream(target));
            kwargs["stream"] = py::int_(s);
            legacy["stream"] = py::int_(s);
        }
        py::object fn = obj.attr("__dlpack__");
        try {
            return fn(**kwargs);
        } catch (py::error_already_set& e) {
            if (!e.matches(PyExc_TypeError)) throw;
            // A producer that predates DLPack 1.0's keywords: a legacy capsule (with the
            // stream, which DLPack 0.x producers such as torch 1.x take).
            return fn(**legacy);
        }
    };
    py::object cap;
    if (want && *want != source) {
        try {
            cap = call(*want, true);
        } catch (py::error_already_set& e) {
            // The producer cannot export to that device (NumPy to CUDA): take the data where it
            // is, and copy it below.
            if (!e.matches(PyExc_BufferError)) throw;
            cap = call(source, false);
        }
    } else {
        cap = call(want.value_or(source), want.has_value());
    }
    return on_device(consume_capsule(cap, policy), want, policy);
}

value value_from_dlpack(py::handle obj, py::handle device, py::handle copy) {
    const copy_policy policy = copy_policy_of(copy, "from_dlpack");
    if (is_qvalue(obj)) { // no capsule needed: the value itself (or a copy)
        const std::optional<int> want = import_device(device);
        const value& v = qvalue_ref(obj);
        if (v.is_scalar() && (!want || *want < 0)) return v; // scalars are immutable
        ISTHMUS_CHECK(v.is_tensor() || v.is_scalar(), type_error,
                      "from_dlpack: only tensor and scalar values hold DLPack data, this value "
                      "is a ",
                      v.kind_name());
        const tensor t = v.is_tensor() ? v.as_tensor() : v.as_scalar().to_tensor();
        if (policy != copy_policy::always) {
            tensor moved = on_device(t, want, policy);
            return moved.storage() == t.storage() && v.is_tensor() ? v : value(moved);
        }
        const int where = want.value_or(cuda_ordinal(t.location()));
        py::gil_scoped_release nogil;
        return value(to_resource(t, where < 0 ? MEMRESOURCE_CPU : cuda_resource(where), true));
    }
    return value(tensor_from_dlpack(obj, policy, device));
}

py::object dlpack_capsule(const tensor& t, int cuda_device, void* consumer_stream) {
    py::object cap = export_capsule(t, /*versioned=*/false, /*copied=*/false,
                                    export_resource(cuda_device), consumer_stream);
    if (cuda_device >= 0 && consumer_stream) cuda::make_stream_wait(consumer_stream, cuda_device);
    return cap;
}

} // namespace isthmus::boundary
