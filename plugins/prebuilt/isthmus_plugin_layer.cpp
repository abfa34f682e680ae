// The build-time step that prebuilds the plugin author layer (Note [prebuilt plugin layer]).
#include "precompiled_header.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>

// Usage: isthmus_plugin_layer <folder>. Builds the precompiled header and support object a plain
// compile_string uses into <folder>. Never fails the build: without a layer (a compiler other than
// GCC, a failed build) compiles build it lazily in their cache, as before.
int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <folder>\n", argv[0]);
        return 2;
    }
    // no "compiling plugin ..." notice: the build says what runs
    ::setenv("ISTHMUS_VERBOSE", "0", 0);
    try {
        const std::string stem = isthmus::plugin_host::prebuild_plugin_layer(argv[1]);
        if (stem.empty())
            std::printf("isthmus_plugin_layer: no prebuilt layer for this compiler (plugins build "
                        "theirs lazily)\n");
        else
            std::printf("isthmus_plugin_layer: %s/%s\n", argv[1], stem.c_str());
    } catch (const std::exception& e) {
        std::printf("isthmus_plugin_layer: not built (%s); plugins build theirs lazily\n",
                    e.what());
    }
    return 0;
}
