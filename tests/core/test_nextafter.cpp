// Tests for nextafter: every float16 and bfloat16 value against their sorted value lists,
// float32/float64 against std::nextafter, special cases, dtypes and errors.
#include <doctest/doctest.h>

#include "fake_resource.hpp"
#include "test_support.hpp"

#include "isthmus/half.hpp"
#include "isthmus/ops/elementwise.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

using namespace isthmus;

namespace {

// Every non-NaN value of a 16-bit float format (bits -> float by `to_float`), checked against
// the format's sorted values: toward +inf the smallest value above x, toward -inf the largest
// below it (an independent reference: no bit arithmetic).
template <typename H>
void check_every_value(dtype dt) {
    std::vector<uint16_t> bits;
    std::vector<float> vals;
    for (uint32_t b = 0; b < 65536; ++b) {
        H h;
        h.bits = static_cast<uint16_t>(b);
        const float f = h;
        if (std::isnan(f)) continue;
        bits.push_back(h.bits);
        vals.push_back(f);
    }
    std::vector<float> sorted = vals;
    std::sort(sorted.begin(), sorted.end());
    const auto n = static_cast<int64_t>(bits.size());
    const tensor x = tensor::from_vector(bits, {n}).view_as(dt);
    for (double target : {inf_v, -inf_v}) {
        const tensor y = tensor::from_vector(std::vector<double>(bits.size(), target)).to(dt);
        const auto got = nextafter(x, y).to(dtype::float32).to_vector<float>();
        int64_t wrong = 0;
        for (size_t i = 0; i < bits.size(); ++i) {
            const float v = vals[i];
            float want;
            if (v == static_cast<float>(target))
                want = v;
            else if (target > 0)
                want = *std::upper_bound(sorted.begin(), sorted.end(), v);
            else
                want = *(std::lower_bound(sorted.begin(), sorted.end(), v) - 1);
            wrong += got[i] != want;
        }
        CAPTURE(dt);
        CAPTURE(target);
        CHECK(wrong == 0);
    }
}

std::vector<double> specials() {
    return {0.0, -0.0, 1.0, -1.0, inf_v, -inf_v, nan_v, 1e-300, -2.5, 3e38, 1e-45, 5e-324};
}

} // namespace

TEST_CASE("nextafter: every float16 and bfloat16 value steps in its own format") {
    check_every_value<float16_t>(dtype::float16);
    check_every_value<bfloat16_t>(dtype::bfloat16);
}

TEST_CASE("nextafter: float32 and float64 against std::nextafter on every pair of specials") {
    const auto s = specials();
    std::vector<double> xs, ys;
    for (double a : s)
        for (double b : s) {
            xs.push_back(a);
            ys.push_back(b);
        }
    const tensor x = tensor::from_vector(xs), y = tensor::from_vector(ys);
    const auto d = nextafter(x, y).to_vector<double>();
    const auto f = nextafter(x.to(dtype::float32), y.to(dtype::float32)).to_vector<float>();
    for (size_t i = 0; i < xs.size(); ++i) {
        CAPTURE(xs[i]);
        CAPTURE(ys[i]);
        const double wd = std::nextafter(xs[i], ys[i]);
        const float wf = std::nextafter(static_cast<float>(xs[i]), static_cast<float>(ys[i]));
        CHECK((std::isnan(wd) ? std::isnan(d[i])
                              : (d[i] == wd && std::signbit(d[i]) == std::signbit(wd))));
        CHECK((std::isnan(wf) ? std::isnan(f[i])
                              : (f[i] == wf && std::signbit(f[i]) == std::signbit(wf))));
    }
}

TEST_CASE("nextafter: dtypes, broadcasting, strided inputs and errors") {
    const tensor i8 = tensor::from_vector(std::vector<int8_t>{0, 1, -3});
    CHECK(nextafter(i8, i8).dtype() == dtype::float16); // NumPy's math rule
    CHECK(nextafter(tensor::from_vector(std::vector<int32_t>{1}), i8).dtype() == dtype::float64);
    const tensor m = random_tensor({4, 6}, dtype::float32, 3);
    const tensor r = nextafter(m.transpose(0, 1), tensor::from_vector(std::vector<float>{0.0f}));
    CHECK(r.shape() == shape_t{6, 4});
    const auto mv = m.transpose(0, 1).contiguous().to_vector<float>();
    const auto rv = r.to_vector<float>();
    for (size_t k = 0; k < mv.size(); ++k) CHECK(rv[k] == std::nextafter(mv[k], 0.0f));
    const tensor c = tensor::from_vector(std::vector<std::complex<double>>{{1, 1}});
    CHECK_ERROR((void)nextafter(c, c), type_error, "nextafter", "real numbers");
    CHECK_ERROR((void)nextafter(tensor(), c), value_error, "undefined");
    CHECK_ERROR((void)nextafter(m, random_tensor({5}, dtype::float32, 4)), value_error,
                "broadcast");
    CHECK(nextafter(tensor::empty({0, 2}, dtype::float64, MEMRESOURCE_CPU),
                    tensor::from_vector(std::vector<double>{1.0, 2.0}))
              .shape() == shape_t{0, 2});
}
