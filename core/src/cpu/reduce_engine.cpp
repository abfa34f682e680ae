// The CPU reduction engine's non-template parts: the geometry and the entry point.
#include "cpu/reduce_engine.hpp"
#include "cpu/reduce.hpp"
#include "ops/reduce_types.hpp"

namespace isthmus::cpu {

reduce_geometry make_reduce_geometry(const tensor& x, const tensor& out,
                                     const std::vector<bool>& reduced) {
    struct kept_dim {
        int64_t n, in, out;
    };
    struct red_dim {
        int64_t n, in;
    };
    reduce_geometry g;
    const auto xs = static_cast<int64_t>(x.itemsize());
    const auto os = static_cast<int64_t>(out.itemsize());
    std::vector<kept_dim> ks;
    std::vector<red_dim> rs;
    size_t od = 0;
    for (size_t d = 0; d < x.shape().size(); ++d) {
        const int64_t n = x.shape()[d];
        if (reduced[d]) {
            g.reduced *= n;
            if (n == 1) continue;
            int64_t s = x.strides()[d] * xs;
            if (s < 0) {
                g.in_shift += (n - 1) * s;
                s = -s;
            }
            rs.push_back({n, s});
        } else {
            g.outputs *= n;
            const int64_t so = out.strides()[od++] * os;
            if (n != 1) ks.push_back({n, x.strides()[d] * xs, so});
        }
    }
    if (g.outputs == 0 || g.reduced == 0) g.in_shift = 0;
    // Reduced dimensions: outermost (largest stride) first, then merge neighbours.
    std::stable_sort(rs.begin(), rs.end(),
                     [](const red_dim& a, const red_dim& b) { return a.in > b.in; });
    for (const red_dim& r : rs) {
        if (g.nr > 0 && g.rin[g.nr - 1] == r.in * r.n) {
            g.rshape[g.nr - 1] *= r.n;
            g.rin[g.nr - 1] = r.in;
        } else {
            g.rshape[g.nr] = r.n;
            g.rin[g.nr] = r.in;
            ++g.nr;
        }
    }
    if (g.nr == 0) {
        g.rshape[0] = 1;
        g.rin[0] = xs;
        g.nr = 1;
    }
    // Kept dimensions: outermost input stride first (ties: output stride), then merge.
    std::stable_sort(ks.begin(), ks.end(), [](const kept_dim& a, const kept_dim& b) {
        if (std::abs(a.in) != std::abs(b.in)) return std::abs(a.in) > std::abs(b.in);
        return std::abs(a.out) > std::abs(b.out);
    });
    for (const kept_dim& k : ks) {
        if (g.nk > 0 && g.kin[g.nk - 1] == k.in * k.n && g.kout[g.nk - 1] == k.out * k.n) {
            g.kshape[g.nk - 1] *= k.n;
            g.kin[g.nk - 1] = k.in;
            g.kout[g.nk - 1] = k.out;
        } else {
            g.kshape[g.nk] = k.n;
            g.kin[g.nk] = k.in;
            g.kout[g.nk] = k.out;
            ++g.nk;
        }
    }
    g.column = g.nk > 0 && std::abs(g.kin[g.nk - 1]) < g.rin[g.nr - 1];
    return g;
}

void reduce(backend::reduce_kind kind, const tensor& out, void* out_data, const tensor& x,
            const void* x_data, const std::vector<bool>& reduced, double divisor) {
    ISTHMUS_ASSERT(out.dtype() == ops::reduce_result_dtype(kind, x.dtype()),
                   "reduce: output dtype ", out.dtype(), " for ", x.dtype(), " input");
    ISTHMUS_ASSERT(reduced.size() == x.shape().size());
    const reduce_geometry g = make_reduce_geometry(x, out, reduced);
    using backend::reduce_kind;
    switch (kind) {
    case reduce_kind::sum:
        return reduce_sums(false, false, x.dtype(), g, x_data, out_data, divisor);
    case reduce_kind::prod:
        return reduce_sums(true, false, x.dtype(), g, x_data, out_data, divisor);
    case reduce_kind::mean:
        return reduce_sums(false, true, x.dtype(), g, x_data, out_data, divisor);
    case reduce_kind::min:
    case reduce_kind::max:
        return reduce_extrema(kind == reduce_kind::max, x.dtype(), g, x_data, out_data);
    case reduce_kind::any:
    case reduce_kind::all:
        return reduce_logical(kind == reduce_kind::all, x.dtype(), g, x_data, out_data);
    case reduce_kind::argmin:
    case reduce_kind::argmax:
        break;
    }
    ISTHMUS_ASSERT(false, "reduce: argmin/argmax are not engine reductions (cpu::arg_reduce)");
}

} // namespace isthmus::cpu
