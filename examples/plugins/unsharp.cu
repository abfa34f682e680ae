// A CUDA plugin compiled on the fly by examples/plugins/cuda_kernel.py: one kernel body for the
// CPU and the GPU, see docs/plugins.md "CUDA kernels". ISTHMUS_KERNEL declares the kernel at
// namespace scope, where NVRTC compiles its device code in well under a second (nvcc takes the
// same source when NVRTC is missing); g++ builds the host side and the CPU launcher, so this
// file also builds as an ordinary CPU plugin.
namespace ip = isthmus::plugin;

// Sharpens a grey image: y = x + amount * (x - mean of the 3x3 neighbourhood), edges clamped.
ISTHMUS_KERNEL(unsharp, ip::view<const float, 2, ip::access::clamped> x, ip::view<float, 2> y,
               float amount, ip::ivec2 p) {
    float s = 0;
    for (int64_t di = -1; di <= 1; ++di)
        for (int64_t dj = -1; dj <= 1; ++dj) s += x(p[0] + di, p[1] + dj);
    const float c = x(p[0], p[1]);
    y(p[0], p[1]) = c + amount * (c - s / 9.0f);
}

ISTHMUS_PLUGIN(unsharp, m) {
    m.kernel("unsharp", unsharp{}, {"x", "y", "amount"},
             "Unsharp masking of a grey image (3x3 box blur, clamped edges).");
}
