// DLPack import internals: consumed managed tensors, parsed capsules and the parsers that read and
// check them (dlpack_capsule_parse.cpp) for dlpack_import.cpp.
#pragma once

#include "boundary/dlpack.hpp"
#include "boundary/dlpack_formats.hpp"

#include "isthmus/python_ref.hpp"

#include <optional>

namespace isthmus::boundary {

inline bool interpreter_finalizing() noexcept {
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

// A consumed DLManagedTensor(Versioned), released through its deleter; or a producer object
// whose borrowed DLTensor was read (Note [borrowed dlpack tensors]), released by dropping the
// reference the import took.
struct dl_owner {
    void* managed = nullptr;
    bool versioned = false;
    PyObject* object = nullptr;

    void release() const noexcept {
        if (object)
            detail::decref(object);
        else if (versioned)
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
    // An exchange-table import of CUDA data: the producer's work stream as the table reported
    // it (Note [import hand-back]); nullopt for imports through `__dlpack__` and capsules.
    std::optional<void*> exchange_stream;
};

// Reads and checks a capsule without consuming it (so an error leaves it to its producer).
parsed_capsule parse_capsule(py::handle cap);

// Reads and checks the managed tensor `managed` (versioned when out.owner.versioned) into
// `out`, without taking it: the caller releases it on error.
void parse_managed(parsed_capsule& out, void* managed);

// Reads and checks the tensor `t` into `out` (what parse_managed does after the version and the
// flags), without taking its owner: the caller releases it on error.
void parse_dltensor(parsed_capsule& out, const dl::DLTensor* t);

} // namespace isthmus::boundary
