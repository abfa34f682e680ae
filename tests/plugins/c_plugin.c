/* A plugin written in plain C against plugin_abi.h alone: one function, `twice(x) = 2 x`, and
 * one CPU kernel, `c_flags(y)`, writing the call's ISTHMUS_CALL_* flags into y[pos]. Its
 * descriptor claims the size it had before `features` was appended (Note [checked mode in the
 * ABI]), as a plugin built against that header does: the host must load it, report no
 * features, and run its kernel (unchecked) in checked mode. */
#include <isthmus/plugin_abi.h>

#include <stddef.h>

static int twice_impl(const isthmus_function* self, isthmus_call* call, const isthmus_value* args,
                      int32_t nargs, isthmus_value* result) {
    (void)self;
    if (nargs != 1 || args[0].kind != ISTHMUS_VALUE_FLOAT) {
        call->host->set_error(call, ISTHMUS_ERR_TYPE, "twice: expected one real number");
        return 1;
    }
    result->kind = ISTHMUS_VALUE_FLOAT;
    result->dtype = ISTHMUS_DT_FLOAT64;
    result->u.f = 2.0 * args[0].u.f;
    return 0;
}

static int flags_launch(const isthmus_kernel* self, isthmus_call* call, const isthmus_range* range,
                        const isthmus_value* args, int32_t nargs) {
    (void)self;
    if (nargs != 1 || args[0].kind != ISTHMUS_VALUE_TENSOR ||
        args[0].u.t.dtype != ISTHMUS_DT_INT64) {
        call->host->set_error(call, ISTHMUS_ERR_TYPE, "c_flags: expected one int64 tensor");
        return 1;
    }
    /* the slot is NULL in hosts that predate it */
    const int64_t flags = call->host->call_flags ? (int64_t)call->host->call_flags(call) : -1;
    int64_t* y = (int64_t*)args[0].u.t.data;
    for (int64_t i = range->begin; i < range->end; ++i) y[i * args[0].u.t.strides[0]] = flags;
    return 0;
}

static const isthmus_param twice_params[] = {
    {"x", ISTHMUS_PARAM_FLOAT, ISTHMUS_DT_FLOAT64, -1, 0, 0, "scalar", 0}};
static const isthmus_function functions[] = {
    {"twice", "twice(x: scalar) -> scalar", "2 x", 1, twice_params, twice_impl, 0}};
static const isthmus_param flags_params[] = {
    {"y", ISTHMUS_PARAM_TENSOR, ISTHMUS_DT_INT64, 1, 0,
     ISTHMUS_PARAM_READ | ISTHMUS_PARAM_WRITE | ISTHMUS_PARAM_AT_POSITION, "ivec", 0}};
static const isthmus_kernel kernels[] = {{"c_flags", "c_flags(y: ivec, pos: ivec1)",
                                          "y[pos] = the call's flags", 1, flags_params, 1,
                                          1 << ISTHMUS_DEVICE_CPU, flags_launch, 0, 0}};

static const isthmus_plugin* entry(uint32_t host_abi, const isthmus_host* host) {
    static const isthmus_plugin desc = {ISTHMUS_PLUGIN_ABI_VERSION,
                                        (uint32_t)offsetof(isthmus_plugin, features),
                                        "c_plugin",
                                        "written in C",
                                        1,
                                        functions,
                                        1,
                                        kernels,
                                        0,
                                        0,
                                        0};
    (void)host_abi;
    (void)host;
    return &desc;
}

ISTHMUS_PLUGIN_ENTRY(entry)
