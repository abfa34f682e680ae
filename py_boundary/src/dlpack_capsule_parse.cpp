// DLPack capsule parsing: reads and checks capsules and managed tensors (dtype, shape, strides,
// device, alignment, mapped host memory) before import takes them.
#include "boundary/dlpack_capsule.hpp"
#include "boundary/dlpack_formats.hpp"

#include "isthmus/cuda.hpp"

#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

namespace isthmus::boundary {

namespace {

size_t alignment_of(dtype dt) {
    return is_complex(dt) ? itemsize(dt) / 2 : itemsize(dt);
}

// Whether the page holding address p is mapped in this process.
bool page_mapped(uintptr_t p) {
    static const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    unsigned char in_core = 0;
    return ::mincore(reinterpret_cast<void*>(p & ~(page - 1)), 1, &in_core) == 0;
}

// Refuses a host view whose lowest or highest byte lies on an unmapped page (See Note [dlpack
// byte offset]); the strides were checked not to overflow.
void check_host_mapped(const char* data, const shape_t& shape, const shape_t& strides, size_t isz) {
    int64_t lo = 0, hi = 0; // element offsets from data
    for (size_t i = 0; i < shape.size(); ++i)
        (strides[i] < 0 ? lo : hi) += strides[i] * (shape[i] - 1);
    const auto base = reinterpret_cast<uintptr_t>(data);
    const uintptr_t first = base + static_cast<uintptr_t>(lo * static_cast<int64_t>(isz));
    const uintptr_t last =
        base + static_cast<uintptr_t>(hi * static_cast<int64_t>(isz)) + (isz - 1);
    ISTHMUS_CHECK((lo == 0 || first < base) && last >= base && page_mapped(first) &&
                      page_mapped(last),
                  value_error, "from_dlpack: malformed DLPack tensor: data + byte_offset (",
                  static_cast<const void*>(data), ") is not mapped memory of this process for its ",
                  shape_str(shape), " elements");
}

} // namespace

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
    parse_dltensor(out, t);
}

void parse_dltensor(parsed_capsule& out, const dl::DLTensor* t) {
    // See Note [dlpack cuda]: host memory is wrapped on the CPU, CUDA memory on its device.
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
    // See Note [checked sizes]: the same rule as every other shape, zero-size dimensions included.
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
        t->byte_offset <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) &&
            !__builtin_add_overflow(reinterpret_cast<uintptr_t>(t->data), t->byte_offset, &address),
        value_error, "from_dlpack: malformed DLPack tensor: byte_offset ", t->byte_offset,
        " overflows the data pointer");
    out.data = t->data ? reinterpret_cast<char*>(address) : nullptr;
    // Note [dlpack byte offset]
    // ~~~~~~~~~~~~~~~~~~~~~~~~~
    // Producers (NumPy, torch) put the view's start in `data` and give byte_offset 0; a nonzero
    // offset is rare and, unlike the other fields, can move the data anywhere (2**63 past a
    // heap pointer is a segfault, not an error). So host memory with a nonzero offset is
    // checked to be mapped at its first and last element (mincore fails with ENOMEM on an
    // unmapped page) before anything reads it; device memory is checked below by the driver.
    if (t->byte_offset != 0 && out.cuda_device < 0 && numel > 0 && out.data)
        check_host_mapped(out.data, out.shape, out.strides, itemsize(out.dt));
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

} // namespace isthmus::boundary
