// Random tensors: the default generator, rand / uniform / randn / normal / randint.
#include "isthmus/ops/creation.hpp"
#include "ops/dispatch.hpp"

#include <cmath>
#include <limits>

namespace isthmus {

generator& default_generator() {
    static generator g;
    return g;
}

void manual_seed(uint64_t seed) {
    default_generator().manual_seed(seed);
}

namespace {

resource_id random_resource(resource_id requested) {
    // As Note [creation placement]: the requested resource, or the CPU when none computes there.
    const resource_id r = resolve_resource(requested);
    return backend::has_compute(r) ? r : MEMRESOURCE_CPU;
}

// The Philox blocks (4 words each) that `n` elements of the real dtype `dt` take from the stream
// (See Note [counter-based random numbers]): one 32-bit word an element for dtypes of at most 32
// bits drawn as floats, two for float64 and for integers (64-bit draws). Every backend's random
// kernels read the stream in this layout.
uint64_t stream_blocks(int64_t n, dtype dt, bool integer_draw) {
    const uint64_t words = integer_draw || dt == dtype::float64 ? 2 : 1;
    return (static_cast<uint64_t>(n) * words + 3) / 4;
}

// Draws a floating or complex tensor: uniform in [a, b) or normal(mean a, std b). A complex
// tensor is drawn as twice as many values of its real dtype (real and imaginary interleaved).
tensor draw_real(const char* what, const shape_t& shape, dtype dt, generator* gen,
                 resource_id resource, bool normal, double a, double b) {
    ISTHMUS_CHECK(is_inexact(dt), type_error, what, ": needs a floating or complex dtype, got ",
                  dt);
    const dtype comp = real_dtype(dt);
    // Note [device random]
    // ~~~~~~~~~~~~~~~~~~~~
    // Every backend draws the same Philox words and maps them as the CPU does, so a seed gives the
    // same tensor on any of them (docs/cuda.md).
    const ops::target tg =
        ops::pick_backend(random_resource(resource), [&](const backend::compute& be) {
            return be.supports_random(comp, false);
        });
    tensor t = tensor::empty(shape, dt, tg.where);
    const int64_t n = t.numel() * (is_complex(dt) ? 2 : 1);
    generator& g = gen ? *gen : default_generator();
    const uint64_t first = g.reserve(stream_blocks(n, comp, false));
    if (n == 0) return t;
    const ops::lock_ref w(t, lock_mode::write, tg.where);
    tg.be->random_real(comp, normal, w.data(), n, g.seed(), first, a, b);
    return t;
}

} // namespace

tensor rand(const shape_t& shape, dtype dt, generator* gen, resource_id resource) {
    return draw_real("rand", shape, dt, gen, resource, false, 0.0, 1.0);
}

tensor uniform(const shape_t& shape, double lo, double hi, dtype dt, generator* gen,
               resource_id resource) {
    ISTHMUS_CHECK(std::isfinite(lo) && std::isfinite(hi) && lo <= hi, value_error,
                  "uniform: needs finite bounds with lo <= hi, got lo=", lo, ", hi=", hi);
    return draw_real("uniform", shape, dt, gen, resource, false, lo, hi);
}

tensor randn(const shape_t& shape, dtype dt, generator* gen, resource_id resource) {
    const double sd = is_complex(dt) ? std::sqrt(0.5) : 1.0;
    return draw_real("randn", shape, dt, gen, resource, true, 0.0, sd);
}

tensor normal(const shape_t& shape, double mean, double std, dtype dt, generator* gen,
              resource_id resource) {
    ISTHMUS_CHECK(std::isfinite(mean) && std::isfinite(std) && std >= 0, value_error,
                  "normal: needs a finite mean and a finite std >= 0, got mean=", mean,
                  ", std=", std);
    const double sd = is_complex(dt) ? std * std::sqrt(0.5) : std;
    return draw_real("normal", shape, dt, gen, resource, true, mean, sd);
}

namespace {
// The closed range of integers dtype `dt` holds exactly, as [lo, hi].
void exact_range(dtype dt, long double& lo, long double& hi) {
    auto ints = [&](auto min, auto max) {
        lo = static_cast<long double>(min);
        hi = static_cast<long double>(max);
    };
    using lim8 = std::numeric_limits<int8_t>;
    using lim16 = std::numeric_limits<int16_t>;
    using lim32 = std::numeric_limits<int32_t>;
    using lim64 = std::numeric_limits<int64_t>;
    switch (dt) {
    case dtype::bool_:
        ints(0, 1);
        break;
    case dtype::int8:
        ints(lim8::min(), lim8::max());
        break;
    case dtype::int16:
        ints(lim16::min(), lim16::max());
        break;
    case dtype::int32:
        ints(lim32::min(), lim32::max());
        break;
    case dtype::int64:
        ints(lim64::min(), lim64::max());
        break;
    case dtype::uint8:
        ints(0, std::numeric_limits<uint8_t>::max());
        break;
    case dtype::uint16:
        ints(0, std::numeric_limits<uint16_t>::max());
        break;
    case dtype::uint32:
        ints(0, std::numeric_limits<uint32_t>::max());
        break;
    case dtype::uint64:
        ints(0, std::numeric_limits<uint64_t>::max());
        break;
    case dtype::float16:
        ints(-2048, 2048);
        break;
    case dtype::bfloat16:
        ints(-256, 256);
        break;
    case dtype::float32:
        ints(-16777216, 16777216);
        break;
    case dtype::float64:
        ints(-9007199254740992ll, 9007199254740992ll);
        break;
    default:
        ints(0, -1);
        break;
    }
}
} // namespace

tensor randint(int64_t lo, int64_t hi, const shape_t& shape, dtype dt, generator* gen,
               resource_id resource) {
    ISTHMUS_CHECK(!is_complex(dt), type_error,
                  "randint: needs an integer, bool or floating dtype, got ", dt);
    ISTHMUS_CHECK(lo < hi, value_error, "randint: needs lo < hi, got lo=", lo, ", hi=", hi);
    long double dlo = 0, dhi = 0;
    exact_range(dt, dlo, dhi);
    ISTHMUS_CHECK(static_cast<long double>(lo) >= dlo && static_cast<long double>(hi) - 1 <= dhi,
                  value_error, "randint: the range [", lo, ", ", hi, ") does not fit in ", dt);
    const ops::target tg =
        ops::pick_backend(random_resource(resource),
                          [&](const backend::compute& be) { return be.supports_random(dt, true); });
    tensor t = tensor::empty(shape, dt, tg.where);
    const int64_t n = t.numel();
    generator& g = gen ? *gen : default_generator();
    const uint64_t first = g.reserve(stream_blocks(n, dt, true));
    if (n == 0) return t;
    const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    const ops::lock_ref w(t, lock_mode::write, tg.where);
    tg.be->random_int(dt, w.data(), n, g.seed(), first, lo, range);
    return t;
}

} // namespace isthmus
