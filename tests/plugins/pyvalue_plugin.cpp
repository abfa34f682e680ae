// Test plugin of form (a) in docs/plugins.md: it links libisthmus.so and calls Python through
// pyvalue itself (Python -> plugin -> Python), exercised by
// tests/python/plugins/test_plugin_python.py.
#include <isthmus/plugin.hpp>
#include <isthmus/py.hpp>

#include <string>

namespace ip = isthmus::plugin;

ISTHMUS_PLUGIN(pyvalue_plugin, m) {
    // math.<name>(x) through pyvalue: pyimport, attribute lookup, call, conversion back.
    m.def(
        "py_math",
        [](std::string name, double x) {
            isthmus::pyvalue math = isthmus::pyimport("math");
            return isthmus::from_py<double>(math.attr(name.c_str())(x));
        },
        {"name", "x"}, "math.<name>(x) computed by Python, called through pyvalue");
    // The mean of a tensor argument computed by NumPy on a list built through pyvalue.
    m.def(
        "py_mean",
        [](ip::view<const double, 1> x) {
            isthmus::pyvalue items = isthmus::pyimport("builtins").attr("list")();
            for (int64_t i = 0; i < x.size(0); ++i) items.attr("append")(x(i));
            isthmus::pyvalue np = isthmus::pyimport("numpy");
            return isthmus::from_py<double>(np.attr("mean")(items));
        },
        {"x"}, "numpy.mean(list(x)) through pyvalue");
}
