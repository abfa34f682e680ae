// Test plugin built for another ABI version: the loader must refuse it, naming both versions.
#include <isthmus/plugin_abi.h>

namespace {

const isthmus_plugin* entry(uint32_t, const isthmus_host*) {
    static const isthmus_plugin desc = {ISTHMUS_PLUGIN_ABI_VERSION + 998,
                                        sizeof(isthmus_plugin),
                                        "wrong_abi_plugin",
                                        "claims a future ABI version",
                                        0,
                                        nullptr,
                                        0,
                                        nullptr,
                                        0,
                                        nullptr,
                                        0};
    return &desc;
}

} // namespace

ISTHMUS_PLUGIN_ENTRY(entry)
