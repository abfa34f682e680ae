// Test plugin whose descriptor breaks one rule of Note [descriptor validation], picked by the
// ISTHMUS_TEST_MALFORMED environment variable at each load: the loader must refuse every one.
#include <isthmus/plugin_abi.h>

#include <cstdlib>
#include <cstring>

namespace {

int impl(const isthmus_function*, isthmus_call*, const isthmus_value*, int32_t, isthmus_value*) {
    return 0;
}

isthmus_param g_param = {"x", 0, 0, 0, 0, 0, "scalar", nullptr};
isthmus_function g_fn = {"f", "f(x: scalar)", nullptr, 1, &g_param, impl, nullptr};
isthmus_field g_field = {"v", "scalar", nullptr, nullptr, nullptr};
isthmus_type g_type = {"T", nullptr, nullptr, 1, &g_field, 0, nullptr, 0, nullptr};
isthmus_plugin g_desc;

const isthmus_plugin* entry(uint32_t, const isthmus_host*) {
    g_param = {"x", 0, 0, 0, 0, 0, "scalar", nullptr};
    g_fn = {"f", "f(x: scalar)", nullptr, 1, &g_param, impl, nullptr};
    g_field = {"v", "scalar", nullptr, nullptr, nullptr};
    g_type = {"T", nullptr, nullptr, 1, &g_field, 0, nullptr, 0, nullptr};
    g_desc = {};
    g_desc.abi_version = ISTHMUS_PLUGIN_ABI_VERSION;
    g_desc.struct_size = sizeof(isthmus_plugin);
    g_desc.name = "malformed_plugin";
    g_desc.nfunctions = 1;
    g_desc.functions = &g_fn;
    g_desc.ntypes = 1;
    g_desc.types = &g_type;
    const char* which = std::getenv("ISTHMUS_TEST_MALFORMED");
    const int k = which ? std::atoi(which) : 0;
    switch (k) {
    case 1:
        g_fn.signature = nullptr;
        break;
    case 2:
        g_desc.nfunctions = -2;
        break;
    case 3:
        g_desc.functions = nullptr;
        break;
    case 4:
        g_param.type_name = nullptr;
        break;
    case 5:
        g_fn.nparams = -3;
        break;
    case 6:
        g_field.type_name = nullptr;
        break;
    case 7:
        g_type.nmethods = 2;
        break; // methods array NULL
    case 8:
        g_type.name = nullptr;
        break;
    default:
        break; // a valid descriptor
    }
    return &g_desc;
}

} // namespace

ISTHMUS_PLUGIN_ENTRY(entry)
