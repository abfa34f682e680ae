/* The isthmus plugin ABI: the versioned C structs a plugin and its host exchange. */
#ifndef ISTHMUS_PLUGIN_ABI_H
#define ISTHMUS_PLUGIN_ABI_H

/*
 * Note [plugin ABI]
 * ~~~~~~~~~~~~~~~~~
 * A plugin is a shared library exporting one symbol, `isthmus_plugin_entry`, laid out as a
 * Boost.DLL alias: a `const void*` variable in the "boostdll" section holding the address of an
 * `isthmus_plugin_entry_fn`. The host calls it once after loading and receives an `isthmus_plugin`
 * descriptor listing functions, kernels and object types. Everything crossing the boundary is a
 * plain C struct from this header: no C++ types, no exceptions, no allocator is shared. So a plugin
 * built by another compiler (or nvcc) loads fine, and it links neither libisthmus nor Python; the
 * host reaches the plugin through the descriptor, and the plugin reaches the host through the
 * `isthmus_host` table.
 *
 * Versioning rules (docs/plugins.md):
 *  - ISTHMUS_PLUGIN_ABI_VERSION is one integer. The host refuses a plugin whose descriptor
 *    carries another version, naming both; there is no "compatible range".
 *  - Frozen forever, whatever the version: the entry point's name and signature, and the first
 *    two fields of `isthmus_plugin` (abi_version, struct_size), so any host can read the version
 *    of any plugin and refuse it cleanly.
 *  - Structs carrying `struct_size` may grow at the end within one version (new optional
 *    fields, new host callbacks); readers check struct_size before touching a later field.
 *  - Any other change (a field moved, a meaning changed, an enum value renumbered) bumps the
 *    version.
 */

/* NVRTC has no C library: the device layer (isthmus/plugin/device.hpp) defines the fixed-width
 * integer types before it includes this header. */
#if !defined(__CUDACC_RTC__)
#include <stddef.h>
#include <stdint.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** The ABI version this header describes. */
#define ISTHMUS_PLUGIN_ABI_VERSION 1

/** The exported symbol name of the entry point (a Boost.DLL alias). */
#define ISTHMUS_PLUGIN_ENTRY_NAME "isthmus_plugin_entry"

/* ---- element types ---------------------------------------------------------------------- */

/** Element type codes. Fixed numbers: part of the ABI. */
typedef enum isthmus_dtype_code {
    ISTHMUS_DT_BOOL = 0,
    ISTHMUS_DT_INT8 = 1,
    ISTHMUS_DT_INT16 = 2,
    ISTHMUS_DT_INT32 = 3,
    ISTHMUS_DT_INT64 = 4,
    ISTHMUS_DT_UINT8 = 5,
    ISTHMUS_DT_UINT16 = 6,
    ISTHMUS_DT_UINT32 = 7,
    ISTHMUS_DT_UINT64 = 8,
    ISTHMUS_DT_FLOAT16 = 9,
    ISTHMUS_DT_BFLOAT16 = 10,
    ISTHMUS_DT_FLOAT32 = 11,
    ISTHMUS_DT_FLOAT64 = 12,
    ISTHMUS_DT_COMPLEX64 = 13,
    ISTHMUS_DT_COMPLEX128 = 14,
    /** In a parameter description: any dtype is accepted. */
    ISTHMUS_DT_ANY = -1
} isthmus_dtype_code;

/** Device types of tensor memory (DLPack's numbers). */
typedef enum isthmus_device_type {
    ISTHMUS_DEVICE_CPU = 1,
    ISTHMUS_DEVICE_CUDA = 2
} isthmus_device_type;

/* ---- values ----------------------------------------------------------------------------- */

/**
 * A strided tensor, as DLPack's DLTensor. The memory is locked by the host for the duration of
 * the call (read, write or read-write, as the parameter declares), so `data` stays valid until
 * the function or kernel returns and must not be kept beyond it.
 */
typedef struct isthmus_tensor {
    void* data;             /**< address of element 0 (the view's offset is already applied) */
    int32_t device_type;    /**< isthmus_device_type */
    int32_t device_id;      /**< CUDA ordinal; 0 on the CPU */
    int32_t dtype;          /**< isthmus_dtype_code */
    int32_t ndim;           /**< number of dimensions, 0 for a 0-d tensor */
    const int64_t* shape;   /**< ndim sizes */
    const int64_t* strides; /**< ndim strides, in elements (not bytes); may be negative or 0 */
} isthmus_tensor;

/** What an `isthmus_value` holds. Fixed numbers: part of the ABI. */
typedef enum isthmus_value_kind {
    ISTHMUS_VALUE_NONE = 0,
    ISTHMUS_VALUE_BOOL = 1,     /**< u.i is 0 or 1 */
    ISTHMUS_VALUE_INT = 2,      /**< u.i (dtype tells the original integer type) */
    ISTHMUS_VALUE_FLOAT = 3,    /**< u.f */
    ISTHMUS_VALUE_COMPLEX = 4,  /**< u.c[0] + i u.c[1] */
    ISTHMUS_VALUE_STRING = 5,   /**< u.s: UTF-8 bytes, not necessarily NUL-terminated */
    ISTHMUS_VALUE_TENSOR = 6,   /**< u.t */
    ISTHMUS_VALUE_OBJECT = 7,   /**< u.o: an instance of a plugin object type */
    ISTHMUS_VALUE_CALLBACK = 8, /**< u.cb: a host callable (e.g. a Python function) */
    /** u.tup: several values, results only (a function returning std::tuple). Made by
     * isthmus_host.new_tuple, which owns the items. Added within version 1: Note [tuple
     * results in the ABI]. */
    ISTHMUS_VALUE_TUPLE = 9
} isthmus_value_kind;

struct isthmus_type;
struct isthmus_value;
struct isthmus_call;
struct isthmus_function;
struct isthmus_kernel;
struct isthmus_field;
struct isthmus_event;

/**
 * A callable the host hands to a plugin (a Python function added to an event, later any host
 * function). The plugin calls `invoke` with its own call context (from the function that is
 * running, or one made with isthmus_host.begin_call) and must call `release` exactly once when
 * it drops the callable. `invoke` returns 0 on success, non-zero after reporting an error into
 * `call`.
 */
typedef struct isthmus_callback {
    int (*invoke)(void* data, struct isthmus_call* call, const struct isthmus_value* args,
                  int32_t nargs, struct isthmus_value* result);
    void (*release)(void* data);
    void* data;
} isthmus_callback;

/** A runtime value crossing the boundary: an argument or a result. */
typedef struct isthmus_value {
    int32_t kind;  /**< isthmus_value_kind */
    int32_t dtype; /**< isthmus_dtype_code of a scalar or tensor; ISTHMUS_DT_ANY otherwise */
    union {
        int64_t i;
        double f;
        double c[2];
        struct {
            const char* data;
            int64_t size;
        } s;
        isthmus_tensor t;
        struct {
            void* instance;                  /**< the plugin's instance pointer */
            const struct isthmus_type* type; /**< its type (from this plugin's descriptor) */
        } o;
        isthmus_callback cb;
        struct {
            struct isthmus_value* items; /**< `size` values, allocated by new_tuple */
            int64_t size;
        } tup;
    } u;
    /**
     * Results only: the host object that owns a tensor or string result (from
     * isthmus_host.new_tensor / new_string / new_tuple). NULL for arguments and plain results.
     */
    void* owner;
} isthmus_value;

/* ---- the host's callback table ------------------------------------------------------------ */

/** Error categories a plugin reports; each maps to a typed error (Python exception). */
typedef enum isthmus_error_code {
    ISTHMUS_OK = 0,
    ISTHMUS_ERR_RUNTIME = 1, /**< RuntimeError */
    ISTHMUS_ERR_VALUE = 2,   /**< ValueError */
    ISTHMUS_ERR_TYPE = 3,    /**< TypeError */
    ISTHMUS_ERR_INDEX = 4,   /**< IndexError (e.g. a 'checked access out of bounds) */
    ISTHMUS_ERR_MEMORY = 5,  /**< MemoryError */
    /** OverflowError: a number does not fit the parameter's type (an int64 given for an int8).
     * Added within version 1; a host that does not know the code reports a RuntimeError. */
    ISTHMUS_ERR_OVERFLOW = 6
} isthmus_error_code;

/** Log levels for isthmus_host.log. */
typedef enum isthmus_log_level {
    ISTHMUS_LOG_DEBUG = 0,
    ISTHMUS_LOG_INFO = 1,
    ISTHMUS_LOG_WARNING = 2,
    ISTHMUS_LOG_ERROR = 3
} isthmus_log_level;

/**
 * The per-call context. The host makes one for every function call, method call and kernel
 * launch (and `begin_call` makes one on demand); everything a plugin allocates through it
 * belongs to the host.
 */
typedef struct isthmus_call {
    const struct isthmus_host* host; /**< the callback table */
    void* ctx;                       /**< the host's state, passed back to every callback */
} isthmus_call;

/**
 * The runtime callback table: how a plugin reaches its host. Passed to the entry point and in
 * every call context. Valid for as long as the plugin stays loaded. Slots may be NULL when the
 * host does not offer them (check before calling); later versions of the table only append.
 */
typedef struct isthmus_host {
    uint32_t abi_version; /**< ISTHMUS_PLUGIN_ABI_VERSION of the host */
    uint32_t struct_size; /**< sizeof(isthmus_host) as the host compiled it */
    /** Records an error for the running call (the first one wins); the plugin then returns
     * non-zero. `message` is copied. */
    void (*set_error)(isthmus_call* call, int32_t code, const char* message);
    /** Allocates a C-contiguous CPU tensor owned by the host and fills `out` with it (kind,
     * dtype, u.t, owner). The data is writable until the call returns. Returns 0, or non-zero
     * after recording an error (bad dtype, out of memory). */
    int (*new_tensor)(isthmus_call* call, int32_t dtype, int32_t ndim, const int64_t* shape,
                      isthmus_value* out);
    /** Copies `size` bytes of UTF-8 into a host string and fills `out` with it. */
    int (*new_string)(isthmus_call* call, const char* data, int64_t size, isthmus_value* out);
    /** Writes a message to the host's log (stderr, or Python's logging later). */
    void (*log)(isthmus_call* call, int32_t level, const char* message);
    /** A fresh call context for code running outside any host call (a plugin thread firing
     * an event); pair with end_call. Returns NULL when unavailable. */
    isthmus_call* (*begin_call)(const struct isthmus_host* host);
    /** Ends a context from begin_call; returns its recorded error code (0 when none) and, when
     * `message` is not NULL, copies up to `capacity` bytes of the message into it. */
    int32_t (*end_call)(isthmus_call* call, char* message, int64_t capacity);
    /** Reserved for calling Python from plugin code (pyvalue); NULL until the host offers it. */
    int (*call_python)(isthmus_call* call, const char* qualified_name, const isthmus_value* args,
                       int32_t nargs, isthmus_value* result);
    /** The ISTHMUS_CALL_* flags of `call` (ISTHMUS_CALL_CHECKED: run in checked mode). NULL
     * from hosts that predate it, which means 0. See Note [checked mode in the ABI]. */
    uint32_t (*call_flags)(isthmus_call* call);
    /** Allocates a tuple of `size` values (0 to 65536) owned by the host, each of kind NONE,
     * and fills `out` with it (kind ISTHMUS_VALUE_TUPLE, u.tup, owner). The plugin writes the
     * items (numbers, new_tensor / new_string results, objects, nested tuples) and returns
     * the tuple as its result; the items stay writable until the call returns. Returns 0, or
     * non-zero after recording an error (a bad size, out of memory). NULL from hosts that
     * predate it: such a host cannot take several results (Note [tuple results in the ABI]). */
    int (*new_tuple)(isthmus_call* call, int64_t size, isthmus_value* out);
    void* reserved[6]; /**< zero; future slots */
} isthmus_host;

/** A call flag (isthmus_host.call_flags): the caller asked for checked mode, so the plugin's
 * unchecked tensor views bounds-check every access (docs/plugins.md, "Checked mode"). */
#define ISTHMUS_CALL_CHECKED 1u

/*
 * Note [checked mode in the ABI]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * Checked mode reaches a plugin as a per-call flag that the plugin reads once per call (a function
 * call, a kernel chunk) through `call_flags`, which took the first of the reserved slots of
 * `isthmus_host`. The plugin says that it honours the flag with ISTHMUS_FEATURE_CHECKED_MODE in
 * `isthmus_plugin.features`, a field appended to that struct. Both changes are the kind the
 * versioning rules allow within one version: a slot that every older host leaves zero (NULL: "no
 * flags") and a field at the end of a struct carrying `struct_size` (a smaller struct_size: "no
 * features"). So the version stays 1: plugins built against the older header load and run as before
 * (they ignore the flag and say so by having no features), and new plugins run in older hosts (no
 * slot: never checked). A new error code (ISTHMUS_ERR_OVERFLOW) is appended the same way: an older
 * host maps it to RuntimeError.
 */

/*
 * Note [tuple results in the ABI]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A function may return several values (std::tuple or std::pair in the author layer; a Python
 * tuple, a 1-d cell in a C++ host). They cross as one value of kind ISTHMUS_VALUE_TUPLE = 9 whose
 * `u.tup` points at `size` item values. The item array belongs to the host: the plugin asks for it
 * with `new_tuple`, which took the second of the reserved slots of `isthmus_host` (after
 * `call_flags`), and the host accepts no other item array (a tuple in the plugin's own memory would
 * dangle once the function returned). Items are results like any other (tensors from new_tensor,
 * strings from new_string, numbers, objects), or tuples from new_tuple (nested at most 64 deep); a
 * tuple may appear once in a result (so none contains itself). `u.tup` lies inside the union's
 * existing size, so `isthmus_value` keeps its layout. All within version 1, by the versioning
 * rules: a new kind value, a union member that changes no size, a reserved slot older hosts leave
 * NULL. Plugins built against the older header never make the kind and run as before; a new plugin
 * returning a tuple in an older host finds the slot NULL and reports an error naming it (the author
 * layer: "this host cannot take several results ..."), before anything is returned. A host never
 * passes a tuple to a plugin (plugin calls take no cells); a plugin may hand one to a host callback
 * (an event's arguments: a Python tuple), and call_python refuses one as an argument.
 */

/* ---- what a plugin describes -------------------------------------------------------------- */

/** Parameter kinds, for the host's checks before anything runs. */
typedef enum isthmus_param_kind {
    ISTHMUS_PARAM_ANY = 0,      /**< any value (the plugin checks) */
    ISTHMUS_PARAM_BOOL = 1,     /**< a bool */
    ISTHMUS_PARAM_INT = 2,      /**< an integer (bools accepted) */
    ISTHMUS_PARAM_FLOAT = 3,    /**< a real number (ints accepted) */
    ISTHMUS_PARAM_COMPLEX = 4,  /**< a complex number (reals accepted) */
    ISTHMUS_PARAM_STRING = 5,   /**< a string */
    ISTHMUS_PARAM_TENSOR = 6,   /**< a tensor of `dtype` (or any) and `ndim` (or any) */
    ISTHMUS_PARAM_VEC = 7,      /**< a fixed vector: `vec_len` numbers (a tensor of that size) */
    ISTHMUS_PARAM_OBJECT = 8,   /**< an instance of `type` */
    ISTHMUS_PARAM_CALLBACK = 9, /**< a host callable */
    ISTHMUS_PARAM_POSITION = 10 /**< kernels only, last: the element position, not passed */
} isthmus_param_kind;

/** Parameter flags. */
#define ISTHMUS_PARAM_WRITE 1u /**< the tensor is written (locked for writing; exact dtype) */
#define ISTHMUS_PARAM_READ 2u  /**< the tensor is read (a read-only view may be converted) */
/**
 * Kernels only: the body indexes this tensor at the position (x[p]), so its leading
 * `pos_ndim` dimensions must cover the iteration space: parallel_do refuses, before running,
 * a tensor with fewer dimensions or a leading size below dims (Note [kernel shape rules] in
 * plugins/src/host.cpp). Hosts that predate the flag ignore it.
 */
#define ISTHMUS_PARAM_AT_POSITION 4u
/**
 * Kernels only, with ISTHMUS_PARAM_AT_POSITION: bits 8-15 hold a stencil radius r (1 to 255; 0:
 * none declared): the body reads this tensor only within r elements of the position along each
 * of its leading pos_ndim dimensions. The author layer's CPU launcher then skips the tensor's
 * 'clamped, 'circular or 'mirror map at the positions at least r from every edge (Note [stencil
 * interiors] in isthmus/plugin/device.hpp). Hosts that predate the field ignore it.
 */
#define ISTHMUS_PARAM_STENCIL_SHIFT 8
#define ISTHMUS_PARAM_STENCIL_MASK 0xff00u

/** One parameter of a function, method or kernel. */
typedef struct isthmus_param {
    const char* name;                /**< for messages and signatures */
    int32_t kind;                    /**< isthmus_param_kind */
    int32_t dtype;                   /**< tensors, vectors and scalars: element dtype, or ANY */
    int32_t ndim;                    /**< tensors: rank, or -1 for any; positions: rank */
    int32_t vec_len;                 /**< vectors: number of elements */
    uint32_t flags;                  /**< ISTHMUS_PARAM_* flags */
    const char* type_name;           /**< Quasar-style spelling, e.g. "cube", "vec3", "scalar" */
    const struct isthmus_type* type; /**< objects: the expected type (NULL: any object) */
} isthmus_param;

/**
 * A function implementation. `self` is the descriptor (its `data` slot carries the author
 * layer's state). Returns 0 with `result` filled (kind NONE for no result), or non-zero after
 * call->host->set_error. Arguments are borrowed for the duration of the call.
 */
typedef int (*isthmus_function_impl)(const struct isthmus_function* self, isthmus_call* call,
                                     const isthmus_value* args, int32_t nargs,
                                     isthmus_value* result);

/** A function (or an object type's method, whose first argument is the instance). */
typedef struct isthmus_function {
    const char* name;
    const char* signature; /**< "name(a: cube, b: scalar) -> cube", for listings and errors */
    const char* doc;       /**< may be NULL */
    int32_t nparams;       /**< -1: variadic (no host checks) */
    const isthmus_param* params;
    isthmus_function_impl impl;
    void* data; /**< the author layer's state for impl */
} isthmus_function;

/**
 * The iteration range of one kernel launch chunk: `dims` is the whole iteration space (C order,
 * the last dimension fastest); the launcher runs the linear positions [begin, end).
 */
typedef struct isthmus_range {
    int32_t ndim; /**< 1 to 4 */
    int32_t reserved;
    int64_t dims[4];
    int64_t begin;
    int64_t end;
} isthmus_range;

/**
 * A kernel launcher: runs the kernel body for every position of `range` (the per-element body
 * is compiled into this loop; the host never calls per element). Called concurrently from
 * several host threads with disjoint ranges. Returns 0, or non-zero after set_error.
 */
typedef int (*isthmus_kernel_launch)(const struct isthmus_kernel* self, isthmus_call* call,
                                     const isthmus_range* range, const isthmus_value* args,
                                     int32_t nargs);

/**
 * A CUDA kernel launcher: enqueues the kernel body for every position of `range` on `stream`
 * (a cudaStream_t owned by the host, the runtime's stream of CUDA device `device`) and returns
 * without waiting for it. Tensor arguments carry device pointers (device_type
 * ISTHMUS_DEVICE_CUDA, device_id `device`), locked by the host until the work queued on
 * `stream` has used them; stream order keeps the host's later work correct. Called once per
 * parallel_do with the whole range. Returns 0, or non-zero after set_error (a launch failure,
 * or an error the launcher chose to wait for, such as a 'checked access out of bounds).
 *
 * Note [CUDA launcher slot]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~
 * ABI version 1 reserved this slot as `void* launch_cuda`, always NULL. It now holds this function
 * pointer type, at the same position and with the same size; NULL still means "no CUDA launcher".
 * So plugins built against the older header stay valid (their NULL reads as "CPU only") and the ABI
 * version does not change: no field moved and no meaning of an existing value changed.
 */
typedef int (*isthmus_kernel_launch_cuda)(const struct isthmus_kernel* self, isthmus_call* call,
                                          const isthmus_range* range, const isthmus_value* args,
                                          int32_t nargs, int32_t device, void* stream);

/**
 * A kernel: parameters without the trailing position, which the launcher supplies. A kernel has
 * a CPU launcher, a CUDA launcher, or both (the host picks the device; docs/plugins.md).
 */
typedef struct isthmus_kernel {
    const char* name;
    const char* signature;
    const char* doc;
    int32_t nparams; /**< parameters passed by the caller (the position is not counted) */
    const isthmus_param* params;
    int32_t pos_ndim;     /**< rank of the position parameter: dims must have this rank */
    int32_t device_types; /**< bit (1 << isthmus_device_type) for each device it runs on */
    isthmus_kernel_launch launch_cpu;       /**< NULL: the kernel does not run on the CPU */
    isthmus_kernel_launch_cuda launch_cuda; /**< NULL: the kernel does not run on CUDA */
    void* data;
} isthmus_kernel;

/** A field of an object type: read with `get`, written with `set` (NULL: read-only). */
typedef struct isthmus_field {
    const char* name;
    const char* type_name;
    int (*get)(const struct isthmus_field* self, isthmus_call* call, void* instance,
               isthmus_value* result);
    int (*set)(const struct isthmus_field* self, isthmus_call* call, void* instance,
               const isthmus_value* v);
    void* data;
} isthmus_field;

/** An event of an object type: a list of callbacks the plugin fires. */
typedef struct isthmus_event {
    const char* name;
    const char* signature; /**< what the callbacks receive, e.g. "(count: int)" */
    /** Adds `cb` (the plugin takes ownership: it calls cb.release when dropping it). */
    int (*add)(const struct isthmus_event* self, isthmus_call* call, void* instance,
               isthmus_callback cb);
    /** Drops every callback. */
    int (*clear)(const struct isthmus_event* self, isthmus_call* call, void* instance);
    /** Number of callbacks. */
    int64_t (*count)(const struct isthmus_event* self, void* instance);
    void* data;
} isthmus_event;

/**
 * An object type. Instances are created by the plugin (its constructor is exposed as a
 * function named like the type) and handed to the host, which owns them and calls `destroy`
 * exactly once when the last reference is gone.
 */
typedef struct isthmus_type {
    const char* name;
    const char* doc;
    void (*destroy)(const struct isthmus_type* self, void* instance);
    int32_t nfields;
    const isthmus_field* fields;
    int32_t nmethods;
    const isthmus_function* methods; /**< first argument: the instance (not in params) */
    int32_t nevents;
    const isthmus_event* events;
    void* data;
} isthmus_type;

/** What the entry point returns: the plugin's descriptor, valid while the plugin is loaded. */
typedef struct isthmus_plugin {
    uint32_t abi_version; /**< frozen position: ISTHMUS_PLUGIN_ABI_VERSION of the plugin */
    uint32_t struct_size; /**< frozen position: sizeof(isthmus_plugin) as the plugin compiled it */
    const char* name;
    const char* description; /**< may be NULL */
    int32_t nfunctions;
    const isthmus_function* functions;
    int32_t nkernels;
    const isthmus_kernel* kernels;
    int32_t ntypes;
    const isthmus_type* types;
    /** ISTHMUS_FEATURE_* bits (appended within version 1: a descriptor whose struct_size ends
     * before this field has none). */
    uint32_t features;
} isthmus_plugin;

/** Feature bit: the plugin's views honour ISTHMUS_CALL_CHECKED (the author layer sets it). */
#define ISTHMUS_FEATURE_CHECKED_MODE 1u

/**
 * The entry point. The host passes its ABI version and callback table; the plugin may keep
 * `host` (valid while loaded) but must not call it from here when `host_abi_version` differs
 * from its own. Returns the descriptor (never NULL).
 */
typedef const isthmus_plugin* (*isthmus_plugin_entry_fn)(uint32_t host_abi_version,
                                                         const isthmus_host* host);

/**
 * Exports `fn` (an isthmus_plugin_entry_fn) as the entry point: an exported `const void*` named
 * isthmus_plugin_entry in the "boostdll" section, exactly what BOOST_DLL_ALIAS(fn,
 * isthmus_plugin_entry) emits, so Boost.DLL's import_alias finds it; no Boost header is needed.
 * Use once per plugin, at namespace scope in one source file.
 */
#if defined(_WIN32)
#define ISTHMUS_PLUGIN_EXPORT_ATTR __declspec(dllexport)
#else
#define ISTHMUS_PLUGIN_EXPORT_ATTR __attribute__((visibility("default"), section("boostdll"), weak))
#endif
#ifdef __cplusplus
#define ISTHMUS_PLUGIN_ENTRY(fn)                                                                   \
    extern "C" ISTHMUS_PLUGIN_EXPORT_ATTR const void* isthmus_plugin_entry;                        \
    ISTHMUS_PLUGIN_EXPORT_ATTR const void* isthmus_plugin_entry =                                  \
        reinterpret_cast<const void*>(reinterpret_cast<intptr_t>(&fn));
#else
#define ISTHMUS_PLUGIN_ENTRY(fn)                                                                   \
    ISTHMUS_PLUGIN_EXPORT_ATTR const void* isthmus_plugin_entry = (const void*)(intptr_t)(&fn);
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ISTHMUS_PLUGIN_ABI_H */
