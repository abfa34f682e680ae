// Test plugin compiled by nvcc: one kernel body per kernel, with a CPU and a CUDA launcher.
#include <isthmus/plugin.hpp>

namespace ip = isthmus::plugin;

namespace {

// A function object opting in to the CUDA launcher (Note [device kernels] in plugin.hpp).
struct scale_functor {
    using device_kernel = void;
    ISTHMUS_HD void operator()(ip::view<const float, 1> x, ip::view<float, 1> y, float s,
                               int64_t i) const {
        y(i) = s * x(i);
    }
};

} // namespace

ISTHMUS_PLUGIN(cuda_plugin, m) {
    m.kernel(
        "cu_axpb",
        [] __host__ __device__(ip::view<const double, 2> x, ip::view<double, 2> y, double a,
                               double b, ip::ivec2 p) { y[p] = a * x[p] + b; },
        {"x", "y", "a", "b"}, "y = a x + b over a 2-d space.");
    m.kernel(
        "cu_index3",
        [] __host__ __device__(ip::view<int64_t, 3> out, ip::ivec3 p) {
            out(p[0], p[1], p[2]) = p[0] * 10000 + p[1] * 100 + p[2];
        },
        {"out"}, "Writes each position's digits: i * 10000 + j * 100 + k.");
    m.kernel(
        "cu_blur_rgb",
        [] __host__ __device__(ip::view<const float, 3, ip::access::clamped> x,
                               ip::view<float, 3> y, ip::vec3 w, ip::ivec2 p) {
            // a 3-tap horizontal blur of an RGB image, clamped at the edges, weights w
            const ip::vec3 l = x.load<3>(p[0], p[1] - 1, 0);
            const ip::vec3 c = x.load<3>(p[0], p[1], 0);
            const ip::vec3 r = x.load<3>(p[0], p[1] + 1, 0);
            y.store(l * w[0] + c * w[1] + r * w[2], p[0], p[1], 0);
        },
        {"x", "y", "w"}, "3-tap horizontal blur of an HxWx3 image (clamped edges).");
    m.kernel(
        "cu_shift_checked",
        [] __host__ __device__(ip::view<const double, 1, ip::access::checked> x,
                               ip::view<double, 1> y, int64_t s, int64_t i) { y(i) = x(i + s); },
        {"x", "y", "s"}, "y[i] = x[i + s], 'checked.");
    m.kernel(
        "cu_shift_clamped",
        [] __host__ __device__(ip::view<const double, 1, ip::access::clamped> x,
                               ip::view<double, 1> y, int64_t s, int64_t i) { y(i) = x(i + s); },
        {"x", "y", "s"}, "y[i] = x[i + s], 'clamped (an empty x has nothing to clamp to).");
    m.kernel(
         "cu_axpb_declared",
         [] __host__ __device__(ip::view<const double, 2> x, ip::view<double, 2> y, double a,
                                double b, ip::ivec2 p) { y[p] = a * x[p] + b; },
         {"x", "y", "a", "b"}, "cu_axpb with x and y declared at the position.")
        .at_position({"x", "y"});
    m.kernel("cu_scale", scale_functor{}, {"x", "y", "s"}, "y = s x (a function object).");
    m.kernel(
        "cu_host_only", [](ip::view<double, 1> y, int64_t i) { y(i) = static_cast<double>(i); },
        {"y"}, "A plain (host) lambda: CPU launcher only.");
}
