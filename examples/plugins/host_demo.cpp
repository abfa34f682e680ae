// The plugin that examples/plugin_host.cpp loads: one function and one kernel.
#include <isthmus/plugin.hpp>

#include <cmath>

namespace ip = isthmus::plugin;

ISTHMUS_PLUGIN(host_demo, m) {
    m.def(
        "rms",
        [](ip::view<const double, 1> x) {
            double s = 0;
            for (int64_t i = 0; i < x.size(0); ++i) s += x(i) * x(i);
            return x.size(0) ? std::sqrt(s / static_cast<double>(x.size(0))) : 0.0;
        },
        {"x"}, "Root mean square of a vector.");
    m.kernel(
        "blur3",
        [](ip::view<const double, 2, ip::access::clamped> x, ip::view<double, 2> y, ip::ivec2 p) {
            double s = 0;
            for (int di = -1; di <= 1; ++di)
                for (int dj = -1; dj <= 1; ++dj) s += x(p[0] + di, p[1] + dj);
            y(p[0], p[1]) = s / 9.0;
        },
        {"x", "y"}, "3x3 box blur with clamped edges.");
}
