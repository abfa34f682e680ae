/* A plugin in C whose kernel has a CUDA launcher and no CPU launcher, for the host's device
 * choice: the launcher checks what it is given (device tensors, a stream) and counts calls. */
#include <isthmus/plugin_abi.h>

static int64_t g_launches = 0;

static int probe_launch(const isthmus_kernel* self, isthmus_call* call, const isthmus_range* range,
                        const isthmus_value* args, int32_t nargs, int32_t device, void* stream) {
    (void)self;
    if (nargs != 1 || args[0].kind != ISTHMUS_VALUE_TENSOR) {
        call->host->set_error(call, ISTHMUS_ERR_TYPE, "expected one tensor");
        return 1;
    }
    if (args[0].u.t.device_type != ISTHMUS_DEVICE_CUDA || args[0].u.t.device_id != device ||
        stream == 0 || range->begin != 0 || range->end < 1) {
        call->host->set_error(call, ISTHMUS_ERR_VALUE,
                              "the CUDA launcher got a host tensor, another device, no stream or "
                              "an empty range");
        return 1;
    }
    ++g_launches;
    return 0;
}

static int launches_impl(const isthmus_function* self, isthmus_call* call,
                         const isthmus_value* args, int32_t nargs, isthmus_value* result) {
    (void)self, (void)call, (void)args, (void)nargs;
    result->kind = ISTHMUS_VALUE_INT;
    result->dtype = ISTHMUS_DT_INT64;
    result->u.i = g_launches;
    return 0;
}

static const isthmus_param probe_params[] = {{"y", ISTHMUS_PARAM_TENSOR, ISTHMUS_DT_FLOAT32, 1, 0,
                                              ISTHMUS_PARAM_READ | ISTHMUS_PARAM_WRITE, "vec", 0}};
static const isthmus_kernel kernels[] = {{"cuda_probe", "cuda_probe(y: vec, pos: ivec1)",
                                          "checks its CUDA arguments", 1, probe_params, 1,
                                          1 << ISTHMUS_DEVICE_CUDA, 0, probe_launch, 0}};
static const isthmus_function functions[] = {{"cuda_probe_launches", "cuda_probe_launches() -> int",
                                              "launches so far", 0, 0, launches_impl, 0}};

static const isthmus_plugin* entry(uint32_t host_abi, const isthmus_host* host) {
    static const isthmus_plugin desc = {ISTHMUS_PLUGIN_ABI_VERSION,
                                        sizeof(isthmus_plugin),
                                        "cuda_only_plugin",
                                        "a kernel with only a CUDA launcher",
                                        1,
                                        functions,
                                        1,
                                        kernels,
                                        0,
                                        0,
                                        0 /* features: none (a plain C kernel checks nothing) */};
    (void)host_abi;
    (void)host;
    return &desc;
}

ISTHMUS_PLUGIN_ENTRY(entry)
