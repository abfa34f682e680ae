// A plain shared library without the plugin entry point: the loader must refuse it.
extern "C" __attribute__((visibility("default"))) int not_a_plugin_answer() {
    return 42;
}
