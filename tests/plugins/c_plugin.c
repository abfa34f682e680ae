/* A plugin written in plain C against plugin_abi.h alone: one function, `twice(x) = 2 x`. */
#include <isthmus/plugin_abi.h>

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

static const isthmus_param twice_params[] = {
    {"x", ISTHMUS_PARAM_FLOAT, ISTHMUS_DT_FLOAT64, -1, 0, 0, "scalar", 0}};
static const isthmus_function functions[] = {
    {"twice", "twice(x: scalar) -> scalar", "2 x", 1, twice_params, twice_impl, 0}};

static const isthmus_plugin* entry(uint32_t host_abi, const isthmus_host* host) {
    static const isthmus_plugin desc = {ISTHMUS_PLUGIN_ABI_VERSION, sizeof(isthmus_plugin),
                                        "c_plugin", "written in C", 1, functions, 0, 0, 0, 0};
    (void)host_abi;
    (void)host;
    return &desc;
}

ISTHMUS_PLUGIN_ENTRY(entry)
