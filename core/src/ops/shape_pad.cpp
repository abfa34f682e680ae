// pad: constant, edge, reflect, symmetric and wrap borders (NumPy's pad modes).
#include "autograd/recorded_ops.hpp"
#include "isthmus/ops/creation.hpp"
#include "isthmus/ops/shape.hpp"
#include "ops/dispatch.hpp"

namespace isthmus {

pad_mode parse_pad_mode(std::string_view name) {
    if (name == "constant") return pad_mode::constant;
    if (name == "edge") return pad_mode::edge;
    if (name == "reflect") return pad_mode::reflect;
    if (name == "symmetric") return pad_mode::symmetric;
    if (name == "wrap") return pad_mode::wrap;
    ISTHMUS_THROW(value_error, "pad: unknown mode '", name,
                  "' (expected constant, edge, reflect, symmetric or wrap)");
}

namespace {

const char* mode_name(pad_mode m) {
    switch (m) {
    case pad_mode::constant:
        return "constant";
    case pad_mode::edge:
        return "edge";
    case pad_mode::reflect:
        return "reflect";
    case pad_mode::symmetric:
        return "symmetric";
    case pad_mode::wrap:
        return "wrap";
    }
    return "?";
}

// The interior position (in [0, n)) that border position x (relative to the interior start,
// x < 0 or x >= n) copies. These periodic forms equal NumPy's repeated reflections.
int64_t source_of(pad_mode m, int64_t x, int64_t n) {
    auto mod = [](int64_t a, int64_t p) { return ((a % p) + p) % p; };
    switch (m) {
    case pad_mode::edge:
        return std::clamp<int64_t>(x, 0, n - 1);
    case pad_mode::wrap:
        return mod(x, n);
    case pad_mode::symmetric: {
        const int64_t y = mod(x, 2 * n);
        return y < n ? y : 2 * n - 1 - y;
    }
    case pad_mode::reflect: {
        if (n == 1) return 0;
        const int64_t p = 2 * (n - 1), y = mod(x, p);
        return y < n ? y : p - y;
    }
    case pad_mode::constant:
        break;
    }
    return 0;
}

} // namespace

// Note [pad by slabs]
// ~~~~~~~~~~~~~~~~~~~
// The interior is one strided copy; borders are filled axis by axis, each axis over the full extent
// of the axes already padded and the interior of the others, so corners come out as NumPy's. A
// constant border is a fill per side; an edge border one broadcast copy per side; mirrored and
// periodic borders one slab copy per border position.
// Note [pad's derivative]
// ~~~~~~~~~~~~~~~~~~~~~~~
// A constant pad's gradient is the interior of the output's gradient (a view). The other modes
// copy interior elements into the borders: every output element is one input element, a gather,
// whose gradient adds each border's gradient back into its source (See Note [array indexing's
// derivative]; the sources are found by padding t's positions with the same mode).
tensor pad(const tensor& t, const std::vector<std::pair<int64_t, int64_t>>& pad_width,
           pad_mode mode, const scalar& value) {
    ISTHMUS_CHECK(t.defined(), value_error, "pad: the tensor is undefined");
    if (autograd::needs_record(t)) [[unlikely]] {
        if (mode != pad_mode::constant) {
            static const char* const names[] = {"pad", "pad (edge)", "pad (reflect)",
                                                "pad (symmetric)", "pad (wrap)"};
            return autograd::gather_recorded(
                names[static_cast<int>(mode)], t,
                [&](const tensor& src) { return pad(src, pad_width, mode, value); });
        }
        tensor out;
        {
            autograd::no_grad_guard off;
            out = pad(t, pad_width, mode, value); // checks the arguments first
        }
        std::vector<std::pair<int64_t, int64_t>> pw;
        for (size_t d = 0; d < static_cast<size_t>(t.dim()); ++d)
            pw.push_back(pad_width.size() == 1 ? pad_width[0] : pad_width[d]);
        autograd::record("pad", {&t}, out, {},
                         [pw, n = t.shape()](const tensor& g, const autograd::tensor_list&) {
                             tensor r = g;
                             for (size_t d = 0; d < pw.size(); ++d)
                                 r = r.slice(static_cast<int64_t>(d), pw[d].first,
                                             pw[d].first + n[d]);
                             return autograd::tensor_list{r};
                         });
        return out;
    }
    const auto rank = static_cast<size_t>(t.dim());
    ISTHMUS_CHECK(pad_width.size() == rank || pad_width.size() == 1, value_error,
                  "pad: pad_width needs one (before, after) pair per axis (", rank,
                  ") or a single pair, got ", pad_width.size());
    std::vector<std::pair<int64_t, int64_t>> pw(rank);
    shape_t shape = t.shape();
    for (size_t d = 0; d < rank; ++d) {
        pw[d] = pad_width.size() == 1 ? pad_width[0] : pad_width[d];
        ISTHMUS_CHECK(pw[d].first >= 0 && pw[d].second >= 0, value_error,
                      "pad: pad widths must be non-negative, got (", pw[d].first, ", ",
                      pw[d].second, ") for axis ", d);
        ISTHMUS_CHECK(mode == pad_mode::constant || t.shape()[d] > 0 ||
                          pw[d].first + pw[d].second == 0,
                      value_error, "pad: cannot extend the empty axis ", d, " with mode '",
                      mode_name(mode), "' (only 'constant' can)");
        shape[d] += pw[d].first + pw[d].second;
    }
    // Note [copying shape ops]
    // ~~~~~~~~~~~~~~~~~~~~~~~~
    // concat, stack, pad, tile and repeat allocate their result where the scheduling rule puts
    // their inputs and fill it with copies and fills, which run on a device backend there (the copy
    // kernel) or on the CPU.
    tensor out = tensor::empty(shape, t.dtype(), ops::pick_resource({&t}));
    if (out.numel() == 0) return out;
    tensor interior = out;
    for (size_t d = 0; d < rank; ++d) {
        const auto dd = static_cast<int64_t>(d);
        interior = interior.slice(dd, pw[d].first, pw[d].first + t.shape()[d]);
    }
    if (t.numel() > 0) interior.copy_from(t);

    tensor w = interior; // the region padded so far
    for (size_t d = 0; d < rank; ++d) {
        const auto dd = static_cast<int64_t>(d);
        const int64_t before = pw[d].first, n = t.shape()[d], total = shape[d];
        // Widen the region to the whole of axis d (interior along later axes).
        w = out;
        for (size_t e = d + 1; e < rank; ++e) {
            const auto ee = static_cast<int64_t>(e);
            w = w.slice(ee, pw[e].first, pw[e].first + t.shape()[e]);
        }
        if (before + pw[d].second == 0) continue;
        tensor lo = w.slice(dd, 0, before), hi = w.slice(dd, before + n, total);
        if (mode == pad_mode::constant) {
            fill(lo, value);
            fill(hi, value);
            continue;
        }
        if (mode == pad_mode::edge) {
            if (before > 0) lo.copy_from(w.slice(dd, before, before + 1));
            if (pw[d].second > 0) hi.copy_from(w.slice(dd, before + n - 1, before + n));
            continue;
        }
        for (int64_t i = 0; i < total; ++i) {
            if (i == before) i = before + n; // skip the interior
            if (i >= total) break;
            const int64_t src = before + source_of(mode, i - before, n);
            w.slice(dd, i, i + 1).copy_from(w.slice(dd, src, src + 1));
        }
    }
    return out;
}

} // namespace isthmus
