/* The plain C entry point between libisthmus and the CUDA backend module (libisthmus_cuda.so). */
#ifndef ISTHMUS_CUDA_MODULE_ABI_H
#define ISTHMUS_CUDA_MODULE_ABI_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Note [cuda module abi]
 * ~~~~~~~~~~~~~~~~~~~~~~
 * libisthmus never links CUDA. isthmus::cuda::init() dlopens libisthmus_cuda.so and calls its one
 * exported symbol, ISTHMUS_CUDA_ENTRY, which fills this table. Each function reports failure by
 * returning nonzero and writing a message into `err` (never by throwing across the boundary). The
 * module reaches the runtime (register_resource, register_compute, storages, errors) through
 * libisthmus's exported C++ API, resolved when it is loaded. Bump the version whenever the table or
 * the C++ interfaces the module implements change (backend::compute's vtable, isthmus/backend.hpp);
 * a mismatch is refused with a clear error. Version 3: one backend interface for the CPU and CUDA
 * (tensor-shaped reduce, cumulative, copy, fill and matmul entries, index_rows, optional entries,
 * features). Version 4: memory sources (set_memory_source).
 */
#define ISTHMUS_CUDA_MODULE_VERSION 4
#define ISTHMUS_CUDA_ENTRY "isthmus_cuda_module_v4"

/* Note [device memory source]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * Where the devices' new memory comes from. By default the module's caching allocator takes it from
 * cudaMalloc and keeps freed blocks for reuse (Note [caching allocator]). A source replaces that
 * for new allocations: `allocate` is called with the device current and the device's stream (blocks
 * are used in that stream's order, which is what stream-ordered pools such as PyTorch's caching
 * allocator expect), returns NULL when it has no memory (the storage layer then evicts and asks
 * again) and never throws; `deallocate` gets the block back with the size asked for. Each block
 * goes back to the source that gave it, so sources can be changed at any time; a source and its
 * functions must stay valid for the process.
 */
typedef struct isthmus_cuda_memory_source {
    void* (*allocate)(void* ctx, size_t nbytes, int device, void* stream);
    void (*deallocate)(void* ctx, void* ptr, size_t nbytes, int device, void* stream);
    void* ctx;
    const char* name; /* what q.cuda_memory_source() reports, e.g. "torch" */
} isthmus_cuda_memory_source;

typedef struct isthmus_cuda_module {
    int version;
    /* Number of devices into *count; nonzero and a message when CUDA cannot run. */
    int (*device_count)(int* count, char* err, size_t errlen);
    /* Registers every device's memory resource and compute backend (idempotent). */
    int (*register_devices)(char* err, size_t errlen);
    /* Waits for the queued work of one device (-1: all). */
    int (*synchronize)(int device, char* err, size_t errlen);
    /* stats[0..3] = allocated, cached, limit, cudaMalloc calls. */
    int (*memory_info)(int device, size_t* stats, char* err, size_t errlen);
    int (*set_memory_limit)(int device, size_t bytes, char* err, size_t errlen);
    int (*empty_cache)(int device, size_t* released, char* err, size_t errlen);
    /* The device's one stream (a cudaStream_t) into *out. */
    int (*stream)(int device, void** out, char* err, size_t errlen);
    /* Orders two streams with an event (no host wait). `other` is a cudaStream_t of any device
     * (1: the legacy default stream, 2: the per-thread default stream, both of `device`).
     * `other_waits` 0: the device's stream waits for the work queued on `other` so far; 1: `other`
     * waits for the device's stream. */
    int (*stream_wait)(int device, void* other, int other_waits, char* err, size_t errlen);
    /* The CUDA ordinal owning device (or managed) memory at `ptr` into *device; nonzero with a
     * message for host memory or an unknown pointer. */
    int (*pointer_device)(const void* ptr, int* device, char* err, size_t errlen);
    /* New device memory from `source` (kept by pointer: it must outlive the process's use of
     * CUDA), or from the caching allocator for NULL. Cached free blocks are released when a
     * source is set. */
    int (*set_memory_source)(const isthmus_cuda_memory_source* source, char* err, size_t errlen);
} isthmus_cuda_module;

typedef int (*isthmus_cuda_entry_fn)(isthmus_cuda_module* table);

#ifdef __cplusplus
}
#endif

#endif
