// Test plugin compiled header-only with default symbol visibility, beside visible_plugin_a.cpp:
// the author layer's inline support functions are then shared between the two libraries, and each
// plugin must still define its own module (Note [the plugin entry's statics]).
#include <isthmus/plugin.hpp>

ISTHMUS_PLUGIN(visible_plugin_b, m) {
    m.def("visible_b", []() { return std::string("b"); });
}
