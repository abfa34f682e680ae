// CPU cumulative sum and product along one axis of a contiguous tensor.
#include "cpu/convert.hpp"
#include "cpu/reduce.hpp"
#include "cpu/reduce_engine.hpp"

#include <algorithm>
#include <memory>
#include <type_traits>

namespace isthmus::cpu {

namespace {

// Accumulators as in Note [float32 summation]: double for float32, complex128 for complex64,
// uint64 (wrapping) for int64.
template <typename T>
using cum_acc_t =
    std::conditional_t<is_complex_v<T>, complex128_t,
                       std::conditional_t<std::is_integral_v<T>, uint64_t,
                                          std::conditional_t<std::is_same_v<T, float>, double, T>>>;

template <bool Prod, typename A>
A apply(A a, A b) {
    if constexpr (!Prod)
        return a + b;
    else if constexpr (is_complex_v<A>)
        return A(a.real() * b.real() - a.imag() * b.imag(),
                 a.real() * b.imag() + a.imag() * b.real());
    else
        return a * b;
}

// Note [cumulative layout]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// The tensor is viewed as (pre, len, post) around the axis. With post == 1 each line is a
// sequential scan (parallel over lines); otherwise a tile of `post` keeps running accumulators and
// each step along the axis adds a contiguous row to it, so the inner loop vectorises and memory is
// read in order.
template <typename T, bool Prod>
void cumulative_as(const T* x, T* out, int64_t pre, int64_t len, int64_t post) {
    using A = cum_acc_t<T>;
    constexpr int64_t tile = 2048;
    const A one = Prod ? A(1) : A(0);
    const int64_t tiles = post == 1 ? 1 : (post + tile - 1) / tile;
    const int64_t items = pre * tiles;
    auto run_items = [&](int64_t ib, int64_t ie) {
        std::unique_ptr<A[]> buf(new A[static_cast<size_t>(std::min(post, tile))]);
        for (int64_t it = ib; it < ie; ++it) {
            const int64_t p = it / tiles, j0 = (it % tiles) * tile;
            const T* xp = x + p * len * post + j0;
            T* op = out + p * len * post + j0;
            if (post == 1) {
                A acc = one;
                for (int64_t i = 0; i < len; ++i) {
                    acc = apply<Prod>(acc, convert<A>(xp[i]));
                    op[i] = convert<T>(acc);
                }
                continue;
            }
            const int64_t w = std::min(tile, post - j0);
            A* b = buf.get();
            std::fill(b, b + w, one);
            for (int64_t i = 0; i < len; ++i) {
                const T* xr = xp + i * post;
                T* orow = op + i * post;
                for (int64_t j = 0; j < w; ++j) {
                    b[j] = apply<Prod>(b[j], convert<A>(xr[j]));
                    orow[j] = convert<T>(b[j]);
                }
            }
        }
    };
    const int64_t work = pre * len * post;
    const int64_t pieces = piece_count(work, items);
    for_pieces(pieces, work >= parallel_grain,
               [&](int64_t c) { run_items(items * c / pieces, items * (c + 1) / pieces); });
}

template <typename T>
void cumulative_typed(bool is_prod, const tensor& x, const void* x_data, void* out_data,
                      int64_t axis) {
    int64_t pre = 1, post = 1;
    for (int64_t d = 0; d < axis; ++d) pre *= x.shape()[static_cast<size_t>(d)];
    for (int64_t d = axis + 1; d < x.dim(); ++d) post *= x.shape()[static_cast<size_t>(d)];
    const int64_t len = x.shape()[static_cast<size_t>(axis)];
    if (pre * len * post == 0) return;
    const auto* xp = static_cast<const T*>(x_data);
    auto* op = static_cast<T*>(out_data);
    if (is_prod)
        cumulative_as<T, true>(xp, op, pre, len, post);
    else
        cumulative_as<T, false>(xp, op, pre, len, post);
}

} // namespace

void cumulative(bool is_prod, const tensor& out, void* out_data, const tensor& x,
                const void* x_data, int64_t axis) {
    ISTHMUS_ASSERT(out.dtype() == x.dtype() && out.shape() == x.shape() && x.is_contiguous() &&
                   out.is_contiguous());
    switch (x.dtype()) {
    case dtype::int64:
        return cumulative_typed<int64_t>(is_prod, x, x_data, out_data, axis);
    case dtype::uint64:
        return cumulative_typed<uint64_t>(is_prod, x, x_data, out_data, axis);
    case dtype::float32:
        return cumulative_typed<float>(is_prod, x, x_data, out_data, axis);
    case dtype::float64:
        return cumulative_typed<double>(is_prod, x, x_data, out_data, axis);
    case dtype::complex64:
        return cumulative_typed<complex64_t>(is_prod, x, x_data, out_data, axis);
    case dtype::complex128:
        return cumulative_typed<complex128_t>(is_prod, x, x_data, out_data, axis);
    default:
        ISTHMUS_ASSERT(false, "cumulative: compute dtype ", x.dtype());
    }
}

} // namespace isthmus::cpu
