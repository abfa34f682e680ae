/* The plugin the descriptor fuzzer loads: its entry point returns whatever descriptor the fuzzer
 * stored in isthmus_fuzz_descriptor (found with dlsym), so each fuzz input reaches the loader's
 * real path: entry point, ABI check, validation, registry. */
#include <isthmus/plugin_abi.h>

__attribute__((visibility("default"))) const isthmus_plugin* isthmus_fuzz_descriptor = 0;

static const isthmus_plugin* entry(uint32_t host_abi, const isthmus_host* host) {
    (void)host_abi;
    (void)host;
    return isthmus_fuzz_descriptor;
}

ISTHMUS_PLUGIN_ENTRY(entry)
