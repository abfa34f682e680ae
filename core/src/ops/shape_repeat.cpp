// Shape ops that repeat data: tile and repeat (whole-count and per-element counts).
#include "autograd/recorded_ops.hpp"
#include "isthmus/ops/indexing.hpp"
#include "isthmus/ops/shape.hpp"
#include "ops/dispatch.hpp"

namespace isthmus {

// Note [repeat as a broadcast copy]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// tile and repeat with one count are a single copy from a stride-0 view. tile views t as (1, s0, 1,
// s1, ...) expanded to (r0, s0, r1, s1, ...); repeat views it as (..., s_a, 1, ...) expanded to
// (..., s_a, r, ...). The copy into a fresh contiguous tensor is one multi-threaded strided loop,
// and the result is reshaped (a view) to merge the pairs. Per-element counts become an index array
// and a take.

tensor tile(const tensor& t, const shape_t& reps) {
    ISTHMUS_CHECK(t.defined(), value_error, "tile: the tensor is undefined");
    for (int64_t r : reps)
        ISTHMUS_CHECK(r >= 0, value_error, "tile: repetitions must be non-negative, got ",
                      shape_str(reps));
    const size_t d = std::max(static_cast<size_t>(t.dim()), reps.size());
    shape_t shape(d - static_cast<size_t>(t.dim()), 1), r(d - reps.size(), 1);
    shape.insert(shape.end(), t.shape().begin(), t.shape().end());
    r.insert(r.end(), reps.begin(), reps.end());
    tensor v = t.reshape(shape); // leading ones: always a view
    shape_t expanded, result;
    // Insert a repeat dimension before each axis that repeats (from the back so axes stay put).
    size_t extra = 0;
    for (size_t i = 0; i < d; ++i) extra += r[i] != 1 ? 1 : 0;
    ISTHMUS_CHECK(static_cast<int>(d + extra) <= max_rank, value_error, "tile: ", extra,
                  " repeated axes of a rank-", d, " tensor exceed the maximum rank ", max_rank);
    for (size_t i = d; i-- > 0;)
        if (r[i] != 1) v = v.unsqueeze(static_cast<int64_t>(i));
    for (size_t i = 0; i < d; ++i) {
        if (r[i] != 1) expanded.push_back(r[i]);
        expanded.push_back(shape[i]);
        result.push_back(r[i] * shape[i]);
    }
    tensor out =
        tensor::empty(expanded, t.dtype(), ops::pick_resource({&t})); // Note [copying shape ops]
    const tensor ev = v.expand(expanded);
    if (out.numel() > 0) out.copy_from(ev);
    // See Note [recording at the op layer]: the views above recorded their part; the copy passes
    // the gradient through, and expand's derivative sums the repeats.
    if (autograd::needs_record(ev)) [[unlikely]]
        out = autograd::copy_recorded("tile", ev, out);
    return out.view(result);
}

tensor repeat(const tensor& t, int64_t repeats, std::optional<int64_t> axis) {
    ISTHMUS_CHECK(t.defined(), value_error, "repeat: the tensor is undefined");
    ISTHMUS_CHECK(repeats >= 0, value_error, "repeat: repeats must be non-negative, got ", repeats);
    tensor src = axis ? t : t.reshape({-1});
    const int64_t a = axis ? wrap_axis(*axis, t.dim()) : 0;
    const auto au = static_cast<size_t>(a);
    shape_t expanded = src.shape();
    expanded.insert(expanded.begin() + a + 1, repeats);
    shape_t result = src.shape();
    result[au] *= repeats;
    tensor out =
        tensor::empty(expanded, t.dtype(), ops::pick_resource({&t})); // Note [copying shape ops]
    if (autograd::needs_record(src)) [[unlikely]] {
        // The broadcast copy, recorded as tile's (See Note [recording at the op layer]).
        const tensor ev = src.unsqueeze(a + 1).expand(expanded);
        if (out.numel() > 0) out.copy_from(ev);
        return autograd::copy_recorded("repeat", ev, out).view(result);
    }
    if (out.numel() == 0) return out.view(result);
    int64_t after = 1; // elements after the axis: the broadcast copy's contiguous run
    for (size_t d = au + 1; d < src.shape().size(); ++d) after *= src.shape()[d];
    if (after == 1 && repeats < 16) {
        // The broadcast copy would run `repeats` elements at a time; `repeats` strided copies
        // of the whole axis run long instead.
        for (int64_t j = 0; j < repeats; ++j) out.select(a + 1, j).copy_from(src);
    } else {
        out.copy_from(src.unsqueeze(a + 1).expand(expanded));
    }
    return out.view(result);
}

tensor repeat(const tensor& t, const tensor& repeats, std::optional<int64_t> axis) {
    ISTHMUS_CHECK(t.defined(), value_error, "repeat: the tensor is undefined");
    ISTHMUS_CHECK(repeats.defined(), value_error, "repeat: the repeats are undefined");
    ISTHMUS_CHECK(is_integer(repeats.dtype()) || is_bool(repeats.dtype()), type_error,
                  "repeat: repeats must have an integer dtype, got ", repeats.dtype());
    ISTHMUS_CHECK(repeats.dim() <= 1, value_error, "repeat: repeats must be 0-d or 1-d, got shape ",
                  shape_str(repeats.shape()));
    if (repeats.numel() == 1) return repeat(t, repeats.item<int64_t>(), axis);
    tensor src = axis ? t : t.reshape({-1});
    const int64_t a = axis ? wrap_axis(*axis, t.dim()) : 0;
    const int64_t n = src.shape()[static_cast<size_t>(a)];
    ISTHMUS_CHECK(repeats.numel() == n, value_error, "repeat: ", repeats.numel(),
                  " counts given for an axis of size ", n);
    const std::vector<int64_t> counts = repeats.to_vector<int64_t>();
    int64_t total = 0;
    for (int64_t c : counts) {
        ISTHMUS_CHECK(c >= 0, value_error, "repeat: repeats must be non-negative, got ", c);
        total += c;
    }
    std::vector<int64_t> idx;
    idx.reserve(static_cast<size_t>(total));
    for (int64_t i = 0; i < n; ++i)
        idx.insert(idx.end(), static_cast<size_t>(counts[static_cast<size_t>(i)]), i);
    return take(src, tensor::from_vector(idx, {total}), a);
}

} // namespace isthmus
