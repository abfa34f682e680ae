// Tests for random tensors: Philox answers, reproducibility, thread counts, moments, errors.
#include <doctest/doctest.h>

#include "test_support.hpp"

#include "../../core/src/cpu/random.hpp" // the inline Philox reference, for known answers
#include "isthmus/ops/creation.hpp"

#include <cmath>
#include <functional>
#include <omp.h>
#include <set>
#include <string>
#include <vector>

using namespace isthmus;

namespace {

struct moments {
    double mean = 0, var = 0, lo = INFINITY, hi = -INFINITY;
};
moments moments_of(const std::vector<double>& v) {
    moments m;
    for (double x : v) {
        m.mean += x;
        m.lo = std::min(m.lo, x);
        m.hi = std::max(m.hi, x);
    }
    m.mean /= static_cast<double>(v.size());
    for (double x : v) m.var += (x - m.mean) * (x - m.mean);
    m.var /= static_cast<double>(v.size());
    return m;
}

} // namespace

TEST_CASE("creation: Philox4x32-10 matches the Random123 known answers") {
    struct kat {
        uint32_t ctr[4], key[2], out[4];
    };
    const kat kats[] = {
        {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
        {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
         {0xffffffff, 0xffffffff},
         {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
        {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
         {0xa4093822, 0x299f31d0},
         {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
    };
    for (const kat& k : kats) {
        uint32_t out[4];
        cpu::philox4x32_10(k.ctr, k.key, out);
        for (int i = 0; i < 4; ++i) CHECK(out[i] == k.out[i]);
    }
    // The batched kernel computes the same stream: float32 element i of a draw at offset 0 is
    // (word i >> 8) / 2^24, word i being lane i % 4 of block i / 4 under the generator's key.
    const uint64_t seed = 0x0123456789abcdefull;
    generator g(seed);
    const std::vector<float> r = rand({1000}, dtype::float32, &g).to_vector<float>();
    for (uint32_t i : {0u, 1u, 2u, 3u, 4u, 255u, 256u, 257u, 999u}) {
        const uint32_t ctr[4] = {i / 4, 0, 0, 0};
        const uint32_t key[2] = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
        uint32_t w[4];
        cpu::philox4x32_10(ctr, key, w);
        CHECK(r[i] == static_cast<float>(w[i % 4] >> 8) * 0x1p-24f);
    }
    CHECK(g.offset() == 250);
}

TEST_CASE("creation: random draws are reproducible and advance the generator") {
    manual_seed(1234);
    const std::vector<double> a = values(rand({1000}, dtype::float64));
    const std::vector<double> b = values(rand({1000}, dtype::float64));
    CHECK(a != b); // the offset moved on
    manual_seed(1234);
    CHECK(values(rand({1000}, dtype::float64)) == a);
    CHECK(default_generator().seed() == 1234);
    CHECK(default_generator().offset() == 500);

    // A generator object is independent of the default one; saving (seed, offset) replays.
    generator g(99);
    const std::vector<double> n1 = values(randn({777}, dtype::float32, &g));
    const uint64_t saved = g.offset();
    const std::vector<double> n2 = values(randn({333}, dtype::float32, &g));
    g.set_offset(saved);
    CHECK(values(randn({333}, dtype::float32, &g)) == n2);
    generator h(99);
    CHECK(values(randn({777}, dtype::float32, &h)) == n1);
    CHECK(values(randn({777}, dtype::float32, &h)) != n1);
    generator copy_of_h = h;
    CHECK(values(rand({5}, dtype::float32, &copy_of_h)) == values(rand({5}, dtype::float32, &h)));

    // Draws split at a block boundary equal one larger draw (element i depends only on i).
    generator g1(7), g2(7);
    const std::vector<double> whole = values(rand({1500}, dtype::float32, &g1));
    const std::vector<double> part1 = values(rand({1000}, dtype::float32, &g2));
    const std::vector<double> part2 = values(rand({500}, dtype::float32, &g2));
    CHECK(std::vector<double>(whole.begin(), whole.begin() + 1000) == part1);
    CHECK(std::vector<double>(whole.begin() + 1000, whole.end()) == part2);
    // Different seeds give different streams.
    generator g3(8);
    CHECK(values(rand({100}, dtype::float32, &g3)) !=
          std::vector<double>(whole.begin(), whole.begin() + 100));
}

TEST_CASE("creation: random results do not depend on the thread count") {
    threads_guard guard;
    std::vector<std::vector<double>> out[2];
    for (int threads : {1, 2}) {
        omp_set_num_threads(threads);
        generator g(2024);
        auto& o = out[threads - 1];
        o.push_back(values(rand({300001}, dtype::float32, &g)));
        o.push_back(values(rand({300001}, dtype::float64, &g)));
        o.push_back(values(randn({300001}, dtype::float32, &g)));
        o.push_back(values(randn({300001}, dtype::float64, &g)));
        o.push_back(values(randint(-5, 1000, {300001}, dtype::int32, &g)));
        o.push_back(values(uniform({300001}, -1, 1, dtype::bfloat16, &g)));
    }
    for (size_t i = 0; i < out[0].size(); ++i) CHECK(out[0][i] == out[1][i]);
}

TEST_CASE("creation: uniform draws have the right range and moments") {
    generator g(5);
    for (dtype dt : {dtype::float32, dtype::float64, dtype::float16, dtype::bfloat16}) {
        CAPTURE(dt);
        const moments m = moments_of(values(rand({1000000}, dt, &g)));
        CHECK(m.lo >= 0.0);
        CHECK(m.hi < 1.0);
        CHECK(m.mean == doctest::Approx(0.5).epsilon(0.004));
        CHECK(m.var == doctest::Approx(1.0 / 12).epsilon(0.01));
    }
    const moments u = moments_of(values(uniform({1000000}, -2.0, 5.0, dtype::float64, &g)));
    CHECK(u.lo >= -2.0);
    CHECK(u.hi < 5.0);
    CHECK(u.mean == doctest::Approx(1.5).epsilon(0.003));
    CHECK(u.var == doctest::Approx(49.0 / 12).epsilon(0.01));
    // Degenerate range and complex dtypes.
    CHECK(values(uniform({4}, 3.0, 3.0, dtype::float32, &g)) == std::vector<double>(4, 3.0));
    const tensor c = rand({200000}, dtype::complex64, &g);
    const std::vector<complex64_t> cv = c.to_vector<complex64_t>();
    double re = 0, im = 0;
    for (const complex64_t& z : cv) {
        re += z.real();
        im += z.imag();
        CHECK((z.real() >= 0 && z.real() < 1 && z.imag() >= 0 && z.imag() < 1));
    }
    CHECK(re / 200000 == doctest::Approx(0.5).epsilon(0.01));
    CHECK(im / 200000 == doctest::Approx(0.5).epsilon(0.01));
}

TEST_CASE("creation: normal draws have the right moments") {
    generator g(6);
    for (dtype dt : {dtype::float32, dtype::float64}) {
        CAPTURE(dt);
        const moments m = moments_of(values(randn({1000001}, dt, &g)));
        CHECK(std::abs(m.mean) < 0.005);
        CHECK(m.var == doctest::Approx(1.0).epsilon(0.007));
        CHECK(m.hi > 4.0); // tails are there
        CHECK(m.lo < -4.0);
    }
    const moments n = moments_of(values(normal({1000000}, 3.0, 2.0, dtype::float64, &g)));
    CHECK(n.mean == doctest::Approx(3.0).epsilon(0.004));
    CHECK(n.var == doctest::Approx(4.0).epsilon(0.008));
    const moments h = moments_of(values(randn({200000}, dtype::float16, &g)));
    CHECK(std::abs(h.mean) < 0.015);
    CHECK(h.var == doctest::Approx(1.0).epsilon(0.02));
    // Complex: real and imaginary parts each of variance 1/2.
    const std::vector<complex128_t> z =
        randn({500000}, dtype::complex128, &g).to_vector<complex128_t>();
    std::vector<double> re, im;
    for (const complex128_t& x : z) {
        re.push_back(x.real());
        im.push_back(x.imag());
    }
    CHECK(moments_of(re).var == doctest::Approx(0.5).epsilon(0.01));
    CHECK(moments_of(im).var == doctest::Approx(0.5).epsilon(0.01));
    CHECK(values(normal({3}, 1.0, 0.0, dtype::float32, &g)) == std::vector<double>(3, 1.0));
}

TEST_CASE("creation: randint covers its range uniformly") {
    generator g(7);
    const std::vector<double> v = values(randint(-3, 7, {1000000}, dtype::int64, &g));
    const moments m = moments_of(v);
    CHECK(m.lo == -3);
    CHECK(m.hi == 6);
    CHECK(m.mean == doctest::Approx(1.5).epsilon(0.01));
    CHECK(m.var == doctest::Approx((100.0 - 1) / 12).epsilon(0.01));
    std::vector<int> counts(10, 0);
    for (double x : v) ++counts[static_cast<size_t>(x + 3)];
    for (int c : counts) CHECK(c == doctest::Approx(100000).epsilon(0.02));
    // Edge dtypes and the full int64 range.
    const std::vector<double> u8 = values(randint(0, 256, {10000}, dtype::uint8, &g));
    CHECK(std::set<double>(u8.begin(), u8.end()).size() == 256);
    const std::vector<bool> b = randint(0, 2, {1000}, dtype::bool_, &g).to_vector<bool>();
    CHECK(std::count(b.begin(), b.end(), true) == doctest::Approx(500).epsilon(0.15));
    const std::vector<int64_t> big =
        randint(INT64_MIN, INT64_MAX, {1000}, dtype::int64, &g).to_vector<int64_t>();
    CHECK(std::count_if(big.begin(), big.end(), [](int64_t x) { return x < 0; }) ==
          doctest::Approx(500).epsilon(0.15));
    CHECK(values(randint(5, 6, {4}, dtype::float32, &g)) == std::vector<double>(4, 5.0));
    CHECK(randint(0, 10, {0, 3}, dtype::int16, &g).shape() == shape_t{0, 3});
}

TEST_CASE("creation: bad random arguments raise and leave the generator untouched") {
    generator g(8);
    const uint64_t before = g.offset();
    CHECK_THROWS_AS(rand({3}, dtype::int32, &g), type_error);
    CHECK(contains(error_of([&] { rand({3}, dtype::int32, &g); }),
                   "needs a floating or complex dtype, got int32"));
    CHECK_THROWS_AS(randn({3}, dtype::bool_, &g), type_error);
    CHECK_THROWS_AS(uniform({3}, 2.0, 1.0, dtype::float32, &g), value_error);
    CHECK(contains(error_of([&] { uniform({3}, 2.0, 1.0, dtype::float32, &g); }),
                   "lo <= hi, got lo=2, hi=1"));
    CHECK_THROWS_AS(uniform({3}, 0.0, INFINITY, dtype::float32, &g), value_error);
    CHECK_THROWS_AS(normal({3}, 0.0, -1.0, dtype::float32, &g), value_error);
    CHECK_THROWS_AS(randint(3, 3, {2}, dtype::int32, &g), value_error);
    CHECK(contains(error_of([&] { randint(3, 3, {2}, dtype::int32, &g); }), "lo < hi"));
    CHECK_THROWS_AS(randint(0, 300, {2}, dtype::uint8, &g), value_error);
    CHECK(contains(error_of([&] { randint(0, 300, {2}, dtype::uint8, &g); }),
                   "[0, 300) does not fit in uint8"));
    CHECK_THROWS_AS(randint(-1, 3, {2}, dtype::uint32, &g), value_error);
    CHECK_THROWS_AS(randint(0, 3, {2}, dtype::complex64, &g), type_error);
    CHECK_THROWS_AS(rand({-1}, dtype::float32, &g), value_error);
    CHECK(g.offset() == before);
}
