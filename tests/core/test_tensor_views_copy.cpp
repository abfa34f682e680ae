// Tests for copies out of and into views: contiguous, clone, to(dtype), copy_from, fill, item.
#include "fake_resource.hpp"
#include "test_support.hpp"

#include <isthmus/error.hpp>
#include <isthmus/tensor.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

using namespace isthmus;
using namespace views_helpers;
using isthmus_test::registered_fake;

TEST_CASE("views: contiguous() and clone()") {
    const tensor m = iota({3, 4});
    CHECK(same_storage(m.contiguous(), m)); // already C order: no copy
    const tensor c = m.clone();
    CHECK_FALSE(same_storage(c, m));
    CHECK(vals(c) == vals(m));
    const tensor mt = m.t();
    const tensor mtc = mt.contiguous();
    CHECK_FALSE(same_storage(mtc, m));
    check_layout(mtc, {4, 3}, {3, 1}, 0);
    CHECK(vals(mtc) == dv{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
    const tensor col = m.select(1, 3).contiguous();
    CHECK(vals(col) == dv{3, 7, 11});
    CHECK(col.storage()->nbytes() == 12);
    // The copy is independent of the original.
    tensor cc = m.clone();
    cc.fill(-1);
    CHECK(vals(m)[0] == 0);
    // An expanded view materialises every element.
    CHECK(vals(iota({2}).expand({2, 2}).contiguous()) == dv{0, 1, 0, 1});
}

TEST_CASE("views: large strided copies (split across threads) land every element") {
    // 257 x 301 = 77357 elements: above the CPU loops' parallel grain, so the copy is chunked
    // (odd sizes: chunks start mid-row).
    const tensor big = iota({257, 301});
    const std::vector<float> t = big.t().contiguous().to_vector<float>(); // (301, 257)
    int64_t bad = 0;
    for (int64_t j = 0; j < 301; ++j)
        for (int64_t i = 0; i < 257; ++i)
            bad += t[static_cast<size_t>(j * 257 + i)] != static_cast<float>(i * 301 + j);
    CHECK(bad == 0);
    // Reversed rows, every third column, converted to int32.
    const tensor v = big.slice(0, NONE_HI, NONE_LO, -1).slice(1, 1, NONE_HI, 3);
    const std::vector<int32_t> r = v.to(dtype::int32).to_vector<int32_t>(); // (257, 100)
    bad = 0;
    for (int64_t i = 0; i < 257; ++i)
        for (int64_t k = 0; k < 100; ++k)
            bad += r[static_cast<size_t>(i * 100 + k)] != (256 - i) * 301 + 1 + 3 * k;
    CHECK(bad == 0);
    // A broadcast source into a large destination.
    tensor d = tensor::empty({301, 257}, dtype::float64);
    d.copy_from(iota({257}));
    const std::vector<double> dv2 = d.to_vector<double>();
    bad = 0;
    for (size_t q = 0; q < dv2.size(); ++q) bad += dv2[q] != static_cast<double>(q % 257);
    CHECK(bad == 0);
}

TEST_CASE("views: to(dtype) converts like numpy's astype") {
    const tensor f = tensor::from_vector<double>({-2.7, -0.5, 0.5, 2.7, 3.999, -0.0});
    CHECK(f.to(dtype::int32).to_vector<int32_t>() == std::vector<int32_t>{-2, 0, 0, 2, 3, 0});
    CHECK(f.to(dtype::int32).dtype() == dtype::int32);
    // Out of the target's range: wraps as numpy does on x86 (through a 64-bit integer).
    const tensor w = tensor::from_vector<double>({-1.0, 300.0, 255.9, -129.0});
    CHECK(w.to(dtype::uint8).to_vector<uint8_t>() == std::vector<uint8_t>{255, 44, 255, 127});
    CHECK(w.to(dtype::int8).to_vector<int8_t>() == std::vector<int8_t>{-1, 44, -1, 127});
    const tensor i = tensor::from_vector<int64_t>({300, -129, -1});
    CHECK(i.to(dtype::int8).to_vector<int8_t>() == std::vector<int8_t>{44, 127, -1});
    CHECK(i.to(dtype::uint8).to_vector<uint8_t>() == std::vector<uint8_t>{44, 127, 255});
    CHECK(tensor::from_vector<double>({1e10, -1e10}).to(dtype::int64).to_vector<int64_t>() ==
          std::vector<int64_t>{10000000000, -10000000000});
    // complex -> real keeps the real part; -> bool tests both parts.
    const tensor z = tensor::from_vector<complex128_t>({{1, 2}, {-3.5, -1}});
    CHECK(z.to(dtype::float64).to_vector<double>() == dv{1, -3.5});
    CHECK(z.to(dtype::int32).to_vector<int32_t>() == std::vector<int32_t>{1, -3});
    const tensor zb = tensor::from_vector<complex64_t>({{0, 0}, {0, 1}, {1, 0}});
    CHECK(zb.to(dtype::bool_).to_vector<bool>() == std::vector<bool>{false, true, true});
    CHECK(z.to(dtype::complex64).to_vector<complex64_t>()[1] == complex64_t(-3.5f, -1.0f));
    // -> bool is "!= 0" (NaN is true); bool -> numbers is 0/1.
    const tensor fb = tensor::from_vector<double>({0, 0.5, -0.0, NAN});
    CHECK(fb.to(dtype::bool_).to_vector<bool>() == std::vector<bool>{false, true, false, true});
    const tensor b = tensor::from_vector<bool>({true, false});
    CHECK(b.to(dtype::float32).to_vector<float>() == std::vector<float>{1, 0});
    CHECK(b.to(dtype::complex128).to_vector<complex128_t>()[0] == complex128_t(1, 0));
    CHECK(b.to(dtype::float16).to_vector<float>() == std::vector<float>{1, 0});
    // real -> complex has a zero imaginary part; float64 -> float32 rounds to nearest.
    CHECK(tensor::from_vector<float>({2.5f}).to(dtype::complex64).item<complex64_t>() ==
          complex64_t(2.5f, 0));
    CHECK(tensor::from_vector<double>({0.1}).to(dtype::float32).item<float>() == 0.1f);
    CHECK(tensor::from_vector<double>({0.1}).to(dtype::bfloat16).item<float>() ==
          static_cast<float>(bfloat16_t(0.1f)));
    // Every dtype to every dtype on small integers is exact.
    const dtype all[] = {dtype::bool_,   dtype::int8,      dtype::int16,     dtype::int32,
                         dtype::int64,   dtype::uint8,     dtype::uint16,    dtype::uint32,
                         dtype::uint64,  dtype::float16,   dtype::bfloat16,  dtype::float32,
                         dtype::float64, dtype::complex64, dtype::complex128};
    const tensor small = tensor::from_vector<int32_t>({0, 1, 7, 100});
    for (dtype from : all)
        for (dtype to : all) {
            CAPTURE(from);
            CAPTURE(to);
            const tensor x = small.to(from).to(to);
            CHECK(x.dtype() == to);
            const dv expect =
                to == dtype::bool_ || from == dtype::bool_ ? dv{0, 1, 1, 1} : dv{0, 1, 7, 100};
            CHECK(vals(x) == expect);
        }
    // copy=false returns the same tensor when the dtype matches; copy=true always copies.
    CHECK(same_storage(f.to(dtype::float64, false), f));
    CHECK_FALSE(same_storage(f.to(dtype::float64), f));
    CHECK_FALSE(same_storage(f.to(dtype::float32, false), f));
    // Conversions read non-contiguous views correctly.
    CHECK(vals(iota({2, 3}).t().to(dtype::int16)) == dv{0, 3, 1, 4, 2, 5});
}

TEST_CASE("views: copy_from broadcasts, converts, and handles overlap") {
    tensor d = tensor::empty({2, 3}, dtype::float32);
    d.copy_from(tensor::from_vector<int32_t>({1, 2, 3}));
    CHECK(vals(d) == dv{1, 2, 3, 1, 2, 3});
    d.copy_from(tensor::from_vector<double>({1, 2}, {2, 1}));
    CHECK(vals(d) == dv{1, 1, 1, 2, 2, 2});
    d.copy_from(tensor::scalar_tensor(7.5));
    CHECK(vals(d) == dv{7.5, 7.5, 7.5, 7.5, 7.5, 7.5});
    d.copy_from(iota({2, 3}));
    // Bad shapes raise and leave the destination alone.
    CHECK_ERROR(d.copy_from(iota({4})), value_error, "cannot broadcast (4,) to (2, 3)");
    CHECK_ERROR(d.copy_from(iota({2, 2, 3})), value_error, "fewer dimensions");
    CHECK_ERROR(d.copy_from(iota({3, 2})), value_error, "(3, 2)");
    CHECK_ERROR(d.copy_from(tensor()), value_error, "undefined tensor");
    CHECK(vals(d) == dv{0, 1, 2, 3, 4, 5});

    // Through a view: writes land in the base tensor.
    tensor m = iota({3, 3});
    m.select(1, 0).copy_from(tensor::scalar_tensor(-1.0));
    CHECK(vals(m) == dv{-1, 1, 2, -1, 4, 5, -1, 7, 8});

    // Overlapping views of one storage: numpy's a[2:] = a[:8].
    tensor a = iota({10});
    a.slice(0, 2, 10).copy_from(a.slice(0, 0, 8));
    CHECK(vals(a) == dv{0, 1, 0, 1, 2, 3, 4, 5, 6, 7});
    a = iota({10});
    a.slice(0, 0, 8).copy_from(a.slice(0, 2, 10)); // a[:8] = a[2:]
    CHECK(vals(a) == dv{2, 3, 4, 5, 6, 7, 8, 9, 8, 9});
    a = iota({10});
    a.copy_from(a.slice(0, NONE_HI, NONE_LO, -1)); // a[:] = a[::-1]
    CHECK(vals(a) == dv{9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
    m = iota({3, 3});
    m.copy_from(m.t()); // in-place transpose
    CHECK(vals(m) == dv{0, 3, 6, 1, 4, 7, 2, 5, 8});
    m = iota({3, 3});
    m.copy_from(m.select(0, 0)); // broadcast a row of itself
    CHECK(vals(m) == dv{0, 1, 2, 0, 1, 2, 0, 1, 2});

    // Into a non-contiguous destination with a conversion.
    tensor t = tensor::empty({3, 2}, dtype::int64);
    t.fill(0);
    t.t().copy_from(tensor::from_vector<double>({1.9, 2.9, 3.9, 4.9, 5.9, 6.9}, {2, 3}));
    CHECK(t.to_vector<int64_t>() == std::vector<int64_t>{1, 4, 2, 5, 3, 6});
}

TEST_CASE("views: fill") {
    tensor i = tensor::empty({4}, dtype::int32);
    i.fill(3.7);
    CHECK(i.to_vector<int32_t>() == std::vector<int32_t>{3, 3, 3, 3});
    i.fill(-3.7);
    CHECK(i.to_vector<int32_t>() == std::vector<int32_t>{-3, -3, -3, -3});
    tensor u = tensor::empty({2}, dtype::uint8);
    u.fill(-1);
    CHECK(u.to_vector<uint8_t>() == std::vector<uint8_t>{255, 255});
    tensor b = tensor::empty({2}, dtype::bool_);
    b.fill(2);
    CHECK(b.to_vector<bool>() == std::vector<bool>{true, true});
    b.fill(0);
    CHECK(b.to_vector<bool>() == std::vector<bool>{false, false});
    tensor z = tensor::empty({1}, dtype::complex64);
    z.fill(1.5);
    CHECK(z.item<complex64_t>() == complex64_t(1.5f, 0));
    tensor h = tensor::empty({1}, dtype::float16);
    h.fill(0.1);
    CHECK(h.item<float16_t>().bits == 0x2e66); // numpy: np.float16(0.1)
    tensor m = iota({2, 3});
    m.slice(1, 0, 3, 2).fill(-1);
    CHECK(vals(m) == dv{-1, 1, -1, -1, 4, -1});
    tensor e = tensor::empty({0, 4}, dtype::float64);
    e.fill(1); // nothing to do
    CHECK(e.numel() == 0);
    CHECK_ERROR(tensor().fill(1), value_error, "undefined tensor");
}

TEST_CASE("views: item, at and to_vector") {
    const tensor m = iota({2, 3});
    CHECK(m.at<float>({1, -1}) == 5);
    CHECK(m.at<int>({0, 1}) == 1);
    CHECK(m.at<double>({-2, 0}) == 0);
    CHECK(m.to_vector<int64_t>() == std::vector<int64_t>{0, 1, 2, 3, 4, 5});
    CHECK(m.t().to_vector<int16_t>() == std::vector<int16_t>{0, 3, 1, 4, 2, 5});
    CHECK(iota({1, 1}).item<double>() == 0);
    CHECK_ERROR(m.item<float>(), value_error, "item() needs exactly one element",
                "has 6 (shape (2, 3))");
    CHECK_ERROR(m.at<float>({0}), index_error, "at(): 1 indices given for a tensor of rank 2");
    CHECK_ERROR(m.at<float>({2, 0}), index_error, "index 2 is out of bounds for axis 0");
    CHECK_ERROR(m.at<float>({0, 3}), index_error, "index 3", "size 3");
    CHECK(vals(m) == dv{0, 1, 2, 3, 4, 5});
    // Every C++ element type reads back.
    const tensor s = tensor::from_vector<int8_t>({-5, 7});
    CHECK(s.to_vector<uint8_t>() == std::vector<uint8_t>{251, 7});
    CHECK(s.to_vector<float16_t>()[0].bits == float16_t(-5.0f).bits);
    CHECK(s.to_vector<complex128_t>()[1] == complex128_t(7, 0));
    CHECK(s.to_vector<bool>() == std::vector<bool>{true, true});
}

TEST_CASE("views: undefined tensors raise value_error") {
    const tensor u;
    CHECK_FALSE(u.defined());
    CHECK(u.to_string() == "<undefined tensor>");
    CHECK_ERROR(u.reshape({1}), value_error, "undefined tensor");
    CHECK_ERROR(u.slice(0, 0, 1), value_error, "undefined tensor");
    CHECK_ERROR(u.to_vector<float>(), value_error, "undefined tensor");
    CHECK_ERROR(u.clone(), value_error, "undefined tensor");
    CHECK_ERROR(u.lock(LOCK_READ, CPU), value_error, "undefined tensor");
    CHECK_ERROR(u.location(), value_error, "undefined tensor");
    CHECK_ERROR(tensor::from_storage(nullptr, dtype::float32, {1}, {}), value_error,
                "null storage");
}
