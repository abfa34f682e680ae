// DLPack export: __dlpack__/__dlpack_device__ and the capsules C++ hosts hand to torch.
#include "boundary/dlpack.hpp"

#include "boundary/dlpack_formats.hpp"
#include "boundary/exchange_streams.hpp"
#include "boundary/qvalue_handle.hpp"
#include "boundary/session.hpp"

#include "isthmus/cuda.hpp"
#include "isthmus/schedule.hpp"

#include <cstring>
#include <memory>
#include <optional>

namespace isthmus::boundary {

// Note [dlpack export]
// ~~~~~~~~~~~~~~~~~~~~
// `A.__dlpack__()` hands the consumer a capsule holding a DLManagedTensor(Versioned) whose
// manager_ctx is an export_ctx: the storage handle (keeping the memory alive) plus the
// shape/strides arrays the DLTensor points into (Note [export context]). Making it pins the storage
// to the exported device, the CPU or a CUDA device (Note [export pins] in
// cpp_in_py/src/qvalue/buffer.cpp, Note [dlpack cuda], docs/memory-model.md "Pinning"); the deleter
// unpins and frees it. The deleter runs exactly once: called by the consumer when it is done with
// the memory (after renaming the capsule "used_dltensor[_versioned]"), or by the capsule's
// destructor when no consumer ever took it. It needs no GIL and may run on any thread. The capsule
// is versioned (DLPack 1.x) when the consumer passes max_version >= (1, 0), else legacy (DLPack
// 0.x, no flags). READ_ONLY is set on read-only broadcast views only (Note [read-only broadcast
// views]); IS_COPIED is set on copies (copy=True, scalars, Note [negative strides]). `data` is
// element 0's address and byte_offset is 0, as NumPy and PyTorch do on the CPU.
//

namespace {

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

// Note [export context]
// ~~~~~~~~~~~~~~~~~~~~~
// One heap block per export. The context keeps the storage (not a tensor: the shape and strides
// live here once) and holds the shape and strides the DLTensor points into, inline up to
// `inline_dims` dimensions (a second block beyond), so an export costs this block and the capsule.
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

    // See Note [dlpack cuda]: from where the data is, or from the device the consumer asked for.
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
        // Note [negative strides]
        // ~~~~~~~~~~~~~~~~~~~~~~~
        // DLPack allows negative strides, but common consumers do not (PyTorch 2.x aborts the
        // process on them), so such views are exported as a copy.
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
    // See Note [dlpack streams]: the consumer's stream waits for isthmus's work (the pinning
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
    // See Note [read-only broadcast views]: the versioned capsule carries the read-only flag; a
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
        // See Note [dlpack cuda]: where tensor::location() is.
        const int n = cuda_ordinal(v.as_tensor().location());
        if (n >= 0) return py::make_tuple(static_cast<int>(dl::kDLCUDA), n);
    } else if (!v.is_scalar()) {
        throw_buffer_error(detail::concat("__dlpack_device__: only tensor and scalar values can "
                                          "be exported through DLPack, this value is a ",
                                          v.kind_name()));
    }
    return py::make_tuple(static_cast<int>(dl::kDLCPU), 0);
}

py::object dlpack_capsule(const tensor& t, int cuda_device, void* consumer_stream) {
    py::object cap = export_capsule(t, /*versioned=*/false, /*copied=*/false,
                                    export_resource(cuda_device), consumer_stream);
    if (cuda_device >= 0 && consumer_stream) cuda::make_stream_wait(consumer_stream, cuda_device);
    return cap;
}

} // namespace isthmus::boundary
