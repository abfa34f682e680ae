// The DLPack C ABI (versions 0.x "legacy" and 1.x "versioned"), written from the DLPack spec.
#pragma once

#include <cstdint>

// Note [dlpack abi]
// ~~~~~~~~~~~~~~~~~
// These are the plain C structs and constants of the DLPack specification
// (https://dmlc.github.io/dlpack), declared here so the module needs no third-party header. Layouts
// and enumerator values are fixed by the spec and must never change: producers and consumers built
// by other compilers (NumPy, PyTorch, CuPy, JAX) read them byte for byte. Only what isthmus uses is
// declared; the static_asserts below pin the x86-64/aarch64 layouts. The names keep the spec's
// spelling so they can be checked against it at a glance.
namespace isthmus::boundary::dlpack {

/// The DLPack ABI version isthmus produces in versioned capsules (and the newest it reads).
inline constexpr uint32_t version_major = 1;
inline constexpr uint32_t version_minor = 1;

/// Capsule names: a fresh capsule, and the name a consumer gives it once it took ownership.
inline constexpr const char* capsule_legacy = "dltensor";
inline constexpr const char* capsule_legacy_used = "used_dltensor";
inline constexpr const char* capsule_versioned = "dltensor_versioned";
inline constexpr const char* capsule_versioned_used = "used_dltensor_versioned";

/// DLManagedTensorVersioned::flags bits.
inline constexpr uint64_t flag_read_only = uint64_t{1} << 0;
inline constexpr uint64_t flag_is_copied = uint64_t{1} << 1;
inline constexpr uint64_t flag_is_subbyte_type_padded = uint64_t{1} << 2;

/// DLDeviceType (an int32 enum in C). The host-accessible kinds isthmus reads are kDLCPU,
/// kDLCUDAHost, kDLROCMHost and kDLCUDAManaged.
enum DLDeviceType : int32_t {
    kDLCPU = 1,
    kDLCUDA = 2,
    kDLCUDAHost = 3,
    kDLOpenCL = 4,
    kDLVulkan = 7,
    kDLMetal = 8,
    kDLVPI = 9,
    kDLROCM = 10,
    kDLROCMHost = 11,
    kDLExtDev = 12,
    kDLCUDAManaged = 13,
    kDLOneAPI = 14,
    kDLWebGPU = 15,
    kDLHexagon = 16,
    kDLMAIA = 17,
};

struct DLDevice {
    int32_t device_type; // a DLDeviceType
    int32_t device_id;
};

/// DLDataTypeCode (stored in DLDataType::code as uint8).
enum DLDataTypeCode : uint8_t {
    kDLInt = 0,
    kDLUInt = 1,
    kDLFloat = 2,
    kDLOpaqueHandle = 3,
    kDLBfloat = 4,
    kDLComplex = 5,
    kDLBool = 6,
    // 7..13: the float8/float6/float4 formats of DLPack 1.1, which isthmus does not hold.
};

struct DLDataType {
    uint8_t code;   // a DLDataTypeCode
    uint8_t bits;   // bits of one lane (complex64: 64, bool: 8)
    uint16_t lanes; // vector lanes; 1 for ordinary tensors
};

struct DLTensor {
    void* data;           // start of the allocation (or of element 0, with byte_offset 0)
    DLDevice device;      //
    int32_t ndim;         //
    DLDataType dtype;     //
    int64_t* shape;       // ndim entries
    int64_t* strides;     // ndim entries, in elements; NULL means C-contiguous
    uint64_t byte_offset; // bytes from `data` to element 0
};

/// The legacy (DLPack < 1.0) managed tensor, in capsules named "dltensor".
struct DLManagedTensor {
    DLTensor dl_tensor;
    void* manager_ctx;
    void (*deleter)(DLManagedTensor* self); // may be NULL
};

struct DLPackVersion {
    uint32_t major;
    uint32_t minor;
};

/// The versioned (DLPack >= 1.0) managed tensor, in capsules named "dltensor_versioned".
struct DLManagedTensorVersioned {
    DLPackVersion version;
    void* manager_ctx;
    void (*deleter)(DLManagedTensorVersioned* self); // may be NULL
    uint64_t flags;
    DLTensor dl_tensor;
};

/// The C exchange table of DLPack 1.2+ (Note [dlpack exchange api] in dlpack_import.cpp): a
/// producer's type carries it as `__dlpack_c_exchange_api__`, a capsule named
/// "dlpack_exchange_api". Only the header is fixed across major versions; isthmus reads the rest
/// for major version 1.
struct DLPackExchangeAPIHeader {
    DLPackVersion version;
    DLPackExchangeAPIHeader* prev_api; // an older table of the same producer, or NULL
};

struct DLPackExchangeAPI {
    DLPackExchangeAPIHeader header;
    // (DLTensor* prototype, DLManagedTensorVersioned** out, void* error_ctx, SetError): unused
    void* managed_tensor_allocator;
    /// Exports `py_object` (of the table's type) without stream synchronisation: 0 and an owned
    /// tensor in *out, or -1 with a Python exception set.
    int (*managed_tensor_from_py_object_no_sync)(void* py_object, DLManagedTensorVersioned** out);
    void* managed_tensor_to_py_object_no_sync; // unused
    /// Fills `*out` with a borrowed view of `py_object` (no allocation; valid only until control
    /// returns to Python): 0, or -1 with a Python exception set. May be NULL.
    int (*dltensor_from_py_object_no_sync)(void* py_object, DLTensor* out);
    /// The producer's current work stream for a device (NULL on the CPU): 0, or -1 with a
    /// Python exception set.
    int (*current_work_stream)(int32_t device_type, int32_t device_id, void** out_stream);
};

inline constexpr const char* capsule_exchange_api = "dlpack_exchange_api";

static_assert(sizeof(DLDevice) == 8 && sizeof(DLDataType) == 4);
static_assert(sizeof(void*) != 8 || sizeof(DLTensor) == 48);
static_assert(sizeof(void*) != 8 || sizeof(DLManagedTensor) == 64);
static_assert(sizeof(void*) != 8 || sizeof(DLManagedTensorVersioned) == 80);

} // namespace isthmus::boundary::dlpack
