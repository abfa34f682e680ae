// Tests for tensor views: stride arithmetic, copies, conversions, locking through views, text.
#include "fake_resource.hpp"

#include <isthmus/error.hpp>
#include <isthmus/tensor.hpp>

#include <doctest/doctest.h>

#include <complex>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

using namespace isthmus;
using isthmus_test::registered_fake;

namespace {

constexpr resource_id CPU = MEMRESOURCE_CPU;
constexpr resource_id DEV = MEMRESOURCE_DEVICE2;
// Python's omitted slice bounds.
constexpr int64_t NONE_HI = std::numeric_limits<int64_t>::max();
constexpr int64_t NONE_LO = std::numeric_limits<int64_t>::min();

// A float32 tensor holding 0, 1, 2, ... in C order.
tensor iota(const shape_t& shape, dtype dt = dtype::float32) {
    std::vector<float> v(static_cast<size_t>(numel_of(shape)));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
    tensor t = tensor::from_vector(v, shape);
    return dt == dtype::float32 ? t : t.to(dt);
}

std::vector<double> vals(const tensor& t) {
    return t.to_vector<double>();
}
using dv = std::vector<double>;

bool same_storage(const tensor& a, const tensor& b) {
    return a.storage() == b.storage();
}

// Checks shape, strides and offset of a view in one go.
void check_layout(const tensor& t, const shape_t& shape, const shape_t& strides, int64_t offset) {
    CHECK(t.shape() == shape);
    CHECK(t.strides() == strides);
    CHECK(t.offset() == offset);
}

} // namespace

TEST_CASE("views: contiguous tensors and shape helpers") {
    tensor t = tensor::empty({2, 3, 4}, dtype::float32);
    check_layout(t, {2, 3, 4}, {12, 4, 1}, 0);
    CHECK(t.defined());
    CHECK(t.dim() == 3);
    CHECK(t.numel() == 24);
    CHECK(t.nbytes() == 96);
    CHECK(t.itemsize() == 4);
    CHECK(t.storage()->nbytes() == 96);
    CHECK(t.size(-1) == 4);
    CHECK(t.size(0) == 2);
    CHECK(t.stride(-3) == 12);
    CHECK_ERROR(t.size(3), index_error, "axis 3", "rank 3");
    CHECK_ERROR(t.stride(-4), index_error, "axis -4");

    CHECK(contiguous_strides({}) == shape_t{});
    CHECK(contiguous_strides({5}) == shape_t{1});
    CHECK(contiguous_strides({2, 1, 3}) == shape_t{3, 3, 1});
    CHECK(contiguous_strides({2, 0, 3}) == shape_t{3, 3, 1}); // empty dims count as 1
    CHECK(numel_of({}) == 1);
    CHECK(numel_of({2, 0, 3}) == 0);
    CHECK(shape_str({}) == "()");
    CHECK(shape_str({3}) == "(3,)");
    CHECK(shape_str({2, 3}) == "(2, 3)");

    CHECK(broadcast_shapes({2, 1, 3}, {4, 1}) == shape_t{2, 4, 3});
    CHECK(broadcast_shapes({}, {3}) == shape_t{3});
    CHECK(broadcast_shapes({0}, {1}) == shape_t{0});
    CHECK_ERROR(broadcast_shapes({2, 3}, {4}), value_error, "(2, 3)", "(4,)",
                "cannot be broadcast");
    CHECK(wrap_axis(-1, 3) == 2);
    CHECK_ERROR(wrap_axis(3, 3), index_error, "axis 3 is out of range for a tensor of rank 3");
}

TEST_CASE("views: reshape is a view when the strides allow it") {
    const tensor t = iota({2, 3, 4});
    tensor r = t.reshape({4, 6});
    CHECK(same_storage(r, t));
    check_layout(r, {4, 6}, {6, 1}, 0);
    check_layout(t.reshape({-1}), {24}, {1}, 0);
    check_layout(t.reshape({2, -1}), {2, 12}, {12, 1}, 0);
    check_layout(t.reshape({3, 2, 2, 2}), {3, 2, 2, 2}, {8, 4, 2, 1}, 0);
    check_layout(t.view({6, 4}), {6, 4}, {4, 1}, 0);
    CHECK(vals(t.reshape({4, 6})) == vals(t));

    // A strided slice: (2, 3, 2) with strides (12, 4, 2). Every pair of neighbouring dims is
    // contiguous with each other (12 = 4 * 3, 4 = 2 * 2), so even a flat view exists.
    const tensor s = t.slice(2, 0, 4, 2);
    check_layout(s, {2, 3, 2}, {12, 4, 2}, 0);
    tensor sv = s.reshape({6, 2});
    CHECK(same_storage(sv, t));
    check_layout(sv, {6, 2}, {4, 2}, 0);
    check_layout(s.view({12}), {12}, {2}, 0);
    CHECK(vals(s.view({12})) == dv{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22});

    // An offset view keeps its offset.
    const tensor row = t.select(0, 1); // (3, 4) at offset 12
    check_layout(row.reshape({12}), {12}, {1}, 12);
    check_layout(row.slice(1, 1, 3).reshape({3, 2}), {3, 2}, {4, 1}, 13);
    CHECK(vals(row.slice(1, 1, 3).reshape({6})) == dv{13, 14, 17, 18, 21, 22});

    // Inserting and dropping size-1 dims never needs a copy.
    const tensor mt = iota({2, 3}).t(); // (3, 2), strides (1, 3)
    tensor u = mt.reshape({3, 1, 2});
    CHECK(same_storage(u, mt));
    CHECK(u.stride(0) == 1);
    CHECK(u.stride(2) == 3);
    CHECK(vals(u) == vals(mt));
    CHECK(same_storage(u.reshape({3, 2}), mt));
}

TEST_CASE("views: reshape copies when a view is impossible; view() refuses") {
    const tensor m = iota({2, 3});
    const tensor mt = m.t(); // (3, 2), strides (1, 3): [[0, 3], [1, 4], [2, 5]]
    check_layout(mt, {3, 2}, {1, 3}, 0);
    tensor flat = mt.reshape({6});
    CHECK_FALSE(same_storage(flat, m));
    CHECK(flat.is_contiguous());
    CHECK(vals(flat) == dv{0, 3, 1, 4, 2, 5});
    CHECK(vals(mt.reshape({2, 3})) == dv{0, 3, 1, 4, 2, 5});
    CHECK_ERROR(mt.view({6}), value_error, "cannot view (3, 2) with strides (1, 3) as (6,)",
                "without a copy");
    CHECK_ERROR(mt.view({2, 3}), value_error, "without a copy");
    // A reversed axis cannot merge with its neighbour either.
    const tensor rev = m.slice(1, NONE_HI, NONE_LO, -1);
    CHECK(vals(rev.reshape({6})) == dv{2, 1, 0, 5, 4, 3});
    CHECK_ERROR(rev.view({6}), value_error, "without a copy");
    // The sources are untouched.
    check_layout(mt, {3, 2}, {1, 3}, 0);
    CHECK(vals(m) == dv{0, 1, 2, 3, 4, 5});
}

TEST_CASE("views: reshape's -1 inference and its errors") {
    const tensor t = iota({2, 3, 4});
    CHECK(t.reshape({-1, 4}).shape() == shape_t{6, 4});
    CHECK(t.reshape({2, -1, 2}).shape() == shape_t{2, 6, 2});
    CHECK_ERROR(t.reshape({-1, -1}), value_error, "only one dimension can be -1", "(-1, -1)");
    CHECK_ERROR(t.reshape({5, -1}), value_error, "cannot reshape (2, 3, 4)", "24 elements",
                "(5, -1)");
    CHECK_ERROR(t.reshape({5, 5}), value_error, "cannot reshape (2, 3, 4)", "(5, 5)",
                "25 elements");
    CHECK_ERROR(t.reshape({-2, 12}), value_error, "invalid size -2");
    CHECK_ERROR(t.view({0, -1}), value_error, "cannot reshape");
    CHECK_ERROR(t.reshape({}), value_error, "into ()");
    check_layout(t, {2, 3, 4}, {12, 4, 1}, 0);
    CHECK(vals(t.reshape({24}))[23] == 23);
}

TEST_CASE("views: transpose, t and permute strides") {
    const tensor t = iota({2, 3, 4});
    check_layout(t.transpose(0, 2), {4, 3, 2}, {1, 4, 12}, 0);
    check_layout(t.transpose(-1, -2), {2, 4, 3}, {12, 1, 4}, 0);
    check_layout(t.transpose(1, 1), {2, 3, 4}, {12, 4, 1}, 0);
    check_layout(t.t(), {4, 3, 2}, {1, 4, 12}, 0);
    check_layout(t.permute({1, 2, 0}), {3, 4, 2}, {4, 1, 12}, 0);
    check_layout(t.permute({-1, 0, 1}), {4, 2, 3}, {1, 12, 4}, 0);
    CHECK(same_storage(t.permute({2, 1, 0}), t));
    // Element (i, j, k) of permute({1, 2, 0}) is t[k, i, j].
    const tensor p = t.permute({1, 2, 0});
    CHECK(p.at<float>({2, 1, 1}) == t.at<float>({1, 2, 1}));
    CHECK(p.at<float>({0, 3, 1}) == 15);
    CHECK(vals(iota({2, 3}).t()) == dv{0, 3, 1, 4, 2, 5});

    CHECK_ERROR(t.permute({0, 1}), value_error, "permute", "2 axes", "rank 3");
    CHECK_ERROR(t.permute({0, 0, 1}), value_error, "axis 0 repeated", "(0, 0, 1)");
    CHECK_ERROR(t.permute({0, 1, 3}), index_error, "axis 3 is out of range");
    CHECK_ERROR(t.transpose(0, 3), index_error, "axis 3");
    CHECK_ERROR(t.transpose(-4, 0), index_error, "axis -4");
    check_layout(t, {2, 3, 4}, {12, 4, 1}, 0);
}

TEST_CASE("views: slice follows Python's slice semantics") {
    const tensor a = iota({10});
    struct row {
        int64_t start, stop, step;
        dv expect;
    };
    // Expected values from Python: list(range(10))[start:stop:step].
    const row rows[] = {
        {2, 8, 2, {2, 4, 6}},
        {NONE_HI, NONE_LO, -1, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}}, // [::-1]
        {8, 2, -2, {8, 6, 4}},
        {-3, NONE_HI, 1, {7, 8, 9}},
        {-100, 100, 1, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
        {5, 2, 1, {}},
        {100, NONE_HI, 1, {}},
        {0, NONE_HI, 3, {0, 3, 6, 9}},
        {-1, -11, -1, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},
        {-1, -12, -3, {9, 6, 3, 0}},
        {1, -1, 4, {1, 5}},
        {3, 3, 1, {}},
        {7, 2, -10, {7}},
        {-100, NONE_LO, -1, {}},
        {NONE_HI, -100, -1, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},
        {100, 0, -3, {9, 6, 3}},
        {NONE_HI, 5, -1, {9, 8, 7, 6}},
        {-5, NONE_LO, -2, {5, 3, 1}},
    };
    for (const auto& r : rows) {
        CAPTURE(r.start);
        CAPTURE(r.stop);
        CAPTURE(r.step);
        const tensor s = a.slice(0, r.start, r.stop, r.step);
        CHECK(same_storage(s, a));
        CHECK(s.size(0) == static_cast<int64_t>(r.expect.size()));
        CHECK(s.stride(0) == r.step);
        CHECK(vals(s) == r.expect);
    }
    // Hand-computed layouts.
    check_layout(a.slice(0, 2, 8, 2), {3}, {2}, 2);
    check_layout(a.slice(0, NONE_HI, NONE_LO, -1), {10}, {-1}, 9);
    check_layout(a.slice(0, 8, 2, -2), {3}, {-2}, 8);
    // Slicing a slice.
    CHECK(vals(a.slice(0, 1, 9, 2).slice(0, NONE_HI, NONE_LO, -1)) == dv{7, 5, 3, 1});

    const tensor m = iota({3, 4});
    check_layout(m.slice(1, 1, 3), {3, 2}, {4, 1}, 1);
    check_layout(m.slice(-1, 1, 3), {3, 2}, {4, 1}, 1);
    check_layout(m.slice(0, NONE_HI, NONE_LO, -1), {3, 4}, {-4, 1}, 8);
    const tensor v = m.slice(0, NONE_HI, NONE_LO, -1).slice(1, 0, 4, 2);
    check_layout(v, {3, 2}, {-4, 2}, 8);
    CHECK(vals(v) == dv{8, 10, 4, 6, 0, 2});

    CHECK_ERROR(a.slice(0, 0, 5, 0), value_error, "slice step cannot be zero");
    CHECK_ERROR(m.slice(2, 0, 1), index_error, "axis 2", "rank 2");
    check_layout(a, {10}, {1}, 0);
}

TEST_CASE("views: 3-d permutes with negative steps, checked against numpy") {
    const tensor a = iota({2, 3, 4});
    // a[:, ::-1, 1::2].transpose(2, 0, 1) in numpy.
    const tensor b = a.slice(1, NONE_HI, NONE_LO, -1).slice(2, 1, NONE_HI, 2).permute({2, 0, 1});
    check_layout(b, {2, 2, 3}, {2, 12, -4}, 9);
    CHECK(vals(b) == dv{9, 5, 1, 21, 17, 13, 11, 7, 3, 23, 19, 15});
    CHECK(vals(b.contiguous()) == vals(b));
    CHECK(b.contiguous().is_contiguous());
    // a.transpose(1, 2, 0)[1:, ::-2] in numpy.
    const tensor c = a.permute({1, 2, 0}).slice(0, 1, NONE_HI).slice(1, NONE_HI, NONE_LO, -2);
    check_layout(c, {2, 2, 2}, {4, -2, 12}, 7);
    CHECK(vals(c) == dv{7, 19, 5, 17, 11, 23, 9, 21});
    CHECK(vals(c.clone()) == dv{7, 19, 5, 17, 11, 23, 9, 21});
}

TEST_CASE("views: select") {
    const tensor m = iota({3, 4});
    const tensor last = m.select(0, -1);
    check_layout(last, {4}, {1}, 8);
    CHECK(vals(last) == dv{8, 9, 10, 11});
    const tensor col = m.select(1, 2);
    check_layout(col, {3}, {4}, 2);
    CHECK(vals(col) == dv{2, 6, 10});
    CHECK(m.select(0, 1).select(0, -2).item<float>() == 6);
    const tensor e = m.select(0, 2).select(0, 3);
    CHECK(e.dim() == 0);
    CHECK(e.offset() == 11);
    CHECK_ERROR(m.select(0, 3), index_error, "index 3 is out of bounds for axis 0 with size 3");
    CHECK_ERROR(m.select(1, -5), index_error, "index -5", "axis 1", "size 4");
    CHECK_ERROR(m.select(2, 0), index_error, "axis 2");
    CHECK_ERROR(e.select(0, 0), index_error, "rank 0");
    check_layout(m, {3, 4}, {4, 1}, 0);
}

TEST_CASE("views: squeeze and unsqueeze") {
    const tensor t = iota({1, 3, 1, 2});
    check_layout(t.squeeze(), {3, 2}, {2, 1}, 0);
    check_layout(t.squeeze(0), {3, 1, 2}, {2, 2, 1}, 0);
    check_layout(t.squeeze(-2), {1, 3, 2}, {6, 2, 1}, 0);
    CHECK_ERROR(t.squeeze(1), value_error, "squeeze: axis 1 has size 3, not 1");
    CHECK_ERROR(t.squeeze(4), index_error, "axis 4");

    const tensor m = iota({3, 2});
    check_layout(m.unsqueeze(0), {1, 3, 2}, {6, 2, 1}, 0);
    check_layout(m.unsqueeze(1), {3, 1, 2}, {2, 2, 1}, 0);
    check_layout(m.unsqueeze(2), {3, 2, 1}, {2, 1, 1}, 0);
    check_layout(m.unsqueeze(-1), {3, 2, 1}, {2, 1, 1}, 0);
    check_layout(m.unsqueeze(-3), {1, 3, 2}, {6, 2, 1}, 0);
    CHECK(m.unsqueeze(1).is_contiguous());
    CHECK(vals(m.unsqueeze(1)) == vals(m));
    CHECK_ERROR(m.unsqueeze(3), index_error, "axis 3");
    CHECK_ERROR(m.unsqueeze(-4), index_error, "axis -4");
    check_layout(m, {3, 2}, {2, 1}, 0);
}

TEST_CASE("views: expand uses stride 0") {
    const tensor v = iota({3});
    const tensor e = v.expand({2, 3});
    check_layout(e, {2, 3}, {0, 1}, 0);
    CHECK(same_storage(e, v));
    CHECK(vals(e) == dv{0, 1, 2, 0, 1, 2});
    const tensor c = iota({3, 1});
    check_layout(c.expand({3, 4}), {3, 4}, {1, 0}, 0);
    CHECK(vals(c.expand({2, 3, 2})) == dv{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2});
    check_layout(iota({1}).expand({0}), {0}, {0}, 0); // to an empty size
    check_layout(c.expand({3, 1}), {3, 1}, {1, 1}, 0);

    CHECK_ERROR(v.expand({2, 4}), value_error, "cannot broadcast (3,) to (2, 4)", "3 vs 4");
    CHECK_ERROR(iota({2, 3}).expand({3}), value_error, "(2, 3)", "fewer dimensions");
    CHECK_ERROR(v.expand({-1, 3}), value_error, "negative dimension");
    check_layout(v, {3}, {1}, 0);
}

TEST_CASE("views: is_contiguous, is_dense and covers_storage") {
    struct row {
        const char* what;
        tensor t;
        bool contiguous, dense, covers;
    };
    const tensor m = iota({3, 4});
    const row rows[] = {
        {"contiguous", m, true, true, true},
        {"transposed", m.t(), false, true, true},
        {"reversed rows", m.slice(0, NONE_HI, NONE_LO, -1), false, true, true},
        {"first row", m.select(0, 0), true, true, false},
        {"first two rows", m.slice(0, 0, 2), true, true, false},
        {"every other column", m.slice(1, 0, 4, 2), false, false, false},
        {"a column", m.select(1, 1), false, false, false},
        {"expanded", iota({4}).expand({3, 4}), false, false, false},
        {"size-1 dims with odd strides", m.unsqueeze(1).unsqueeze(0), true, true, true},
        {"empty", tensor::empty({2, 0, 3}, dtype::int8), true, true, true},
        {"0-d", tensor::scalar_tensor(1.5), true, true, true},
        {"an element of a matrix", m.select(0, 1).select(0, 1), true, true, false},
    };
    for (const auto& r : rows) {
        CAPTURE(r.what);
        CHECK(r.t.is_contiguous() == r.contiguous);
        CHECK(r.t.is_dense() == r.dense);
        CHECK(r.t.covers_storage() == r.covers);
    }
    CHECK_FALSE(tensor().covers_storage());
}

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

TEST_CASE("views: from_storage, wrap and view_as") {
    auto st = storage::create(6 * 4);
    const tensor t = tensor::from_storage(st, dtype::float32, {2, 3}, {});
    check_layout(t, {2, 3}, {3, 1}, 0);
    check_layout(tensor::from_storage(st, dtype::float32, {3}, {-2}, 5), {3}, {-2}, 5);
    CHECK_ERROR(tensor::from_storage(st, dtype::float32, {7}, {}), value_error,
                "reaches outside its storage of 6 float32 elements");
    CHECK_ERROR(tensor::from_storage(st, dtype::float32, {3}, {-2}, 3), value_error,
                "reaches outside");
    CHECK_ERROR(tensor::from_storage(st, dtype::float32, {2}, {1}, -1), value_error,
                "negative offset -1");
    CHECK_ERROR(tensor::from_storage(st, dtype::float32, {2, 3}, {1}), value_error,
                "1 strides for 2 dimensions");
    CHECK_ERROR(tensor::from_storage(st, dtype::float64, {4}, {}), value_error,
                "3 float64 elements");
    // An empty view may sit anywhere.
    CHECK(tensor::from_storage(st, dtype::float32, {0}, {}, 100).numel() == 0);

    // Wrapping with a negative stride: element 0 is the last float in memory.
    std::vector<float> data{0, 1, 2, 3, 4, 5};
    int calls = 0;
    {
        const tensor w =
            tensor::wrap(data.data() + 5, dtype::float32, {6}, {-1}, CPU, [&] { ++calls; });
        CHECK(w.storage()->nbytes() == 24);
        CHECK(w.offset() == 5);
        CHECK(vals(w) == dv{5, 4, 3, 2, 1, 0});
        CHECK(w.location() == CPU);
        CHECK(w.storage()->pinned_to() == CPU);
        const tensor w2 = tensor::wrap(data.data(), dtype::float32, {2, 3}, {}, CPU, nullptr);
        CHECK(vals(w2.t()) == dv{0, 3, 1, 4, 2, 5});
        CHECK_ERROR(tensor::wrap(data.data(), dtype::float32, {2, 3}, {1}, CPU, nullptr),
                    value_error, "1 strides for 2 dimensions");
    }
    CHECK(calls == 1);

    // view_as reinterprets bits between dtypes of one size.
    const tensor f = tensor::from_vector<float>({1.0f, -2.0f});
    const tensor bits = f.view_as(dtype::int32);
    CHECK(same_storage(bits, f));
    CHECK(bits.to_vector<int32_t>() ==
          std::vector<int32_t>{0x3f800000, static_cast<int32_t>(0xc0000000u)});
    CHECK_ERROR(f.view_as(dtype::float64), type_error, "float32 (4 bytes)",
                "cannot be viewed as float64 (8 bytes)");
    CHECK(f.dtype() == dtype::float32);
    // See Note [bool bytes]: no bool view of other bytes, no byte view of bool storage.
    const tensor u = tensor::from_vector<uint8_t>({0, 2, 255});
    CHECK_ERROR(u.view_as(dtype::bool_), type_error, "uint8 cannot be viewed as bool", "x != 0");
    const tensor b = tensor::from_vector<bool>({true, false});
    CHECK_ERROR(b.view_as(dtype::int8), type_error, "bool cannot be viewed as int8");
    CHECK(same_storage(b.view_as(dtype::bool_), b));
}

TEST_CASE("views: from_vector and scalar_tensor") {
    CHECK(tensor::from_vector<int16_t>({1, 2, 3, 4}, {2, 2}).shape() == shape_t{2, 2});
    CHECK_ERROR(tensor::from_vector<float>({1, 2, 3, 4, 5}, {2, 3}), value_error,
                "5 values do not fill shape (2, 3)");
    CHECK_ERROR(tensor::from_vector<float>({1, 2}, {-1, -2}), value_error, "(-1, -2)");
    const tensor e = tensor::from_vector<float>({});
    CHECK(e.shape() == shape_t{0});
    const tensor b = tensor::from_vector<bool>({true, false, true});
    CHECK(b.dtype() == dtype::bool_);
    CHECK(b.to_vector<bool>() == std::vector<bool>{true, false, true});
    const tensor s = tensor::scalar_tensor<uint16_t>(65535);
    CHECK(s.dtype() == dtype::uint16);
    CHECK(s.dim() == 0);
    CHECK(s.item<uint16_t>() == 65535);
}

TEST_CASE("views: a partial-view write lock acts as readwrite on the storage") {
    registered_fake dev(DEV);
    const tensor t = tensor::from_vector<float>({0, 1, 2, 3, 4, 5, 6, 7});
    const tensor v = t.slice(0, 2, 4);
    REQUIRE_FALSE(v.covers_storage());
    auto* p = static_cast<float*>(v.lock(LOCK_WRITE, DEV));
    CHECK(dev->bytes_to_device == 32u); // the whole storage went over: the rest must stay valid
    CHECK(t.storage()->copy_on(DEV).write_locks == 1);
    CHECK(p[0] == 2); // the lock returns element 0 of the view
    p[0] = 20;
    p[1] = 30;
    v.unlock(LOCK_WRITE, DEV);
    CHECK(t.storage()->lock_count() == 0);
    CHECK(t.location() == DEV);
    CHECK(vals(t) == dv{0, 1, 20, 30, 4, 5, 6, 7});

    // A view that covers its storage (even transposed) writes without reading first.
    const tensor m = iota({2, 2});
    const size_t before = dev->bytes_to_device;
    m.t().lock(LOCK_WRITE, DEV);
    CHECK(dev->bytes_to_device == before);
    CHECK(m.storage()->valid_resources() == std::vector<resource_id>{DEV});
    m.t().unlock(LOCK_WRITE, DEV);

    // Partial writes through copy_from and fill on the CPU keep the rest too.
    tensor w = iota({6});
    w.slice(0, 1, 6, 2).fill(-1);
    CHECK(vals(w) == dv{0, -1, 2, -1, 4, -1});
    CHECK_ERROR(v.lock(static_cast<lock_mode>(5), DEV), value_error, "invalid lock mode");
}

TEST_CASE("views: writes into a tensor locked elsewhere raise and change nothing") {
    registered_fake dev(DEV);
    tensor t = iota({4});
    t.lock(LOCK_READ, DEV); // a kernel is reading it on the device
    CHECK_ERROR(t.fill(9), runtime_error, "read-locked on fake:2");
    CHECK_ERROR(t.copy_from(iota({4}).slice(0, NONE_HI, NONE_LO, -1)), runtime_error,
                "read-locked on fake:2");
    CHECK_ERROR(t.slice(0, 1, 3).copy_from(tensor::scalar_tensor(1.0)), runtime_error,
                "LOCK_READWRITE", "read-locked");
    // The source of a failed copy is not left locked, and the values are unchanged.
    const tensor src = iota({4});
    CHECK_ERROR(t.copy_from(src), runtime_error, "read-locked");
    CHECK(src.storage()->lock_count() == 0);
    CHECK(t.storage()->lock_count() == 1);
    CHECK(vals(t) == dv{0, 1, 2, 3}); // reading on the CPU is fine meanwhile
    t.unlock(LOCK_READ, DEV);
    t.fill(9);
    CHECK(vals(t) == dv{9, 9, 9, 9});
}

TEST_CASE("views: tensors on a device and location()") {
    registered_fake dev(DEV);
    tensor d = tensor::empty({4}, dtype::int32, DEV);
    CHECK(d.storage()->valid_resources() == std::vector<resource_id>{DEV});
    CHECK(d.location() == DEV);
    auto* p = static_cast<int32_t*>(d.lock(LOCK_WRITE, DEV));
    for (int i = 0; i < 4; ++i) p[i] = i * i;
    d.unlock(LOCK_WRITE, DEV);
    CHECK(d.location() == DEV);                                        // the only valid copy
    CHECK(d.to_vector<int32_t>() == std::vector<int32_t>{0, 1, 4, 9}); // read back on the CPU
    CHECK(dev->bytes_to_host == 16u);
    CHECK(d.storage()->valid_resources() == std::vector<resource_id>{CPU, DEV});
    CHECK(d.location() == CPU); // valid on both: the default resource wins
    set_default_resource(DEV);
    CHECK(d.location() == DEV);
    set_default_resource(CPU);
    CHECK(d.location() == CPU);
    // A copy that is not valid does not count.
    d.lock(LOCK_WRITE, CPU);
    d.unlock(LOCK_WRITE, CPU);
    set_default_resource(DEV);
    CHECK(d.location() == CPU);
    set_default_resource(CPU);
    CHECK(tensor::empty({2}, dtype::int8).location() == CPU);
    CHECK_ERROR(tensor::empty({2}, dtype::int8, 9), value_error, "unknown memory resource 9");
}

TEST_CASE("views: empty tensors (a zero dimension) everywhere") {
    const tensor e = tensor::empty({2, 0, 3}, dtype::float32);
    check_layout(e, {2, 0, 3}, {3, 3, 1}, 0);
    CHECK(e.numel() == 0);
    CHECK(e.nbytes() == 0);
    CHECK(e.storage()->nbytes() == 0);
    CHECK(e.reshape({0}).shape() == shape_t{0});
    CHECK(e.reshape({0, 5}).shape() == shape_t{0, 5});
    CHECK(e.reshape({-1, 3}).shape() == shape_t{0, 3});
    CHECK_ERROR(e.reshape({3, 0, -1}), value_error, "cannot reshape (2, 0, 3)");
    CHECK(e.transpose(0, 2).shape() == shape_t{3, 0, 2});
    CHECK(e.slice(0, 0, 1).shape() == shape_t{1, 0, 3});
    CHECK(e.slice(1, 0, 5).shape() == shape_t{2, 0, 3});
    CHECK(e.select(0, 1).shape() == shape_t{0, 3});
    CHECK_ERROR(e.select(1, 0), index_error, "index 0 is out of bounds for axis 1 with size 0");
    CHECK(e.expand({4, 2, 0, 3}).shape() == shape_t{4, 2, 0, 3});
    CHECK(e.squeeze().shape() == shape_t{2, 0, 3});
    CHECK(tensor::empty({1, 0}, dtype::int8).squeeze().shape() == shape_t{0});
    CHECK(e.unsqueeze(1).shape() == shape_t{2, 1, 0, 3});
    CHECK(e.contiguous().numel() == 0);
    CHECK(e.clone().shape() == shape_t{2, 0, 3});
    CHECK(e.to(dtype::int8).dtype() == dtype::int8);
    tensor e2 = tensor::empty({0, 3}, dtype::int64);
    e2.copy_from(tensor::from_vector<int64_t>({1, 2, 3}));
    e2.copy_from(tensor::scalar_tensor(1.0));
    e2.fill(4);
    CHECK_ERROR(e2.copy_from(iota({2})), value_error, "cannot broadcast");
    CHECK(e.to_vector<float>().empty());
    CHECK(e.to_string() == "[]");
    CHECK_ERROR(e.item<float>(), value_error, "has 0");
    CHECK(iota({0}).to_vector<double>().empty());
    // An empty tensor on a device: nothing to move.
    registered_fake dev(DEV);
    e.lock(LOCK_WRITE, DEV);
    e.unlock(LOCK_WRITE, DEV);
    CHECK(e.storage()->lock_count() == 0);
    CHECK(dev->bytes_to_device == 0u);
}

TEST_CASE("views: 0-d tensors everywhere") {
    const tensor s = tensor::scalar_tensor(2.5);
    check_layout(s, {}, {}, 0);
    CHECK(s.dim() == 0);
    CHECK(s.numel() == 1);
    CHECK(s.nbytes() == 8);
    CHECK(s.item<double>() == 2.5);
    CHECK(s.at<double>({}) == 2.5);
    CHECK(s.to_vector<float>() == std::vector<float>{2.5f});
    check_layout(s.reshape({1}), {1}, {1}, 0);
    check_layout(s.reshape({-1}), {1}, {1}, 0);
    CHECK(s.reshape({1, 1, 1}).numel() == 1);
    CHECK(s.reshape({1}).reshape({}).dim() == 0);
    check_layout(s.unsqueeze(0), {1}, {1}, 0);
    check_layout(s.expand({3}), {3}, {0}, 0);
    CHECK(vals(s.expand({2, 2})) == dv{2.5, 2.5, 2.5, 2.5});
    check_layout(s.t(), {}, {}, 0);
    check_layout(s.permute({}), {}, {}, 0);
    check_layout(s.squeeze(), {}, {}, 0);
    CHECK(same_storage(s.contiguous(), s));
    CHECK(s.clone().item<double>() == 2.5);
    CHECK(s.to(dtype::int32).item<int32_t>() == 2);
    CHECK(s.is_contiguous());
    CHECK(s.covers_storage());
    CHECK(s.to_string() == "2.5");
    tensor d = tensor::scalar_tensor(1);
    d.copy_from(tensor::scalar_tensor(7.9));
    CHECK(d.item<int>() == 7);
    d.fill(-2);
    CHECK(d.item<int>() == -2);
    CHECK_ERROR(d.copy_from(iota({2})), value_error, "cannot broadcast (2,) to ()");
    CHECK(d.item<int>() == -2);
    CHECK_ERROR(s.select(0, 0), index_error, "rank 0");
    CHECK_ERROR(s.slice(0, 0, 1), index_error, "rank 0");
    CHECK_ERROR(s.transpose(0, 0), index_error, "rank 0");
    CHECK_ERROR(s.size(0), index_error, "rank 0");
    CHECK_ERROR(s.squeeze(0), index_error, "rank 0");
    CHECK_ERROR(s.at<double>({0}), index_error, "1 indices given for a tensor of rank 0");
}

TEST_CASE("views: max_rank and negative dimensions") {
    const shape_t too_big(static_cast<size_t>(max_rank) + 1, 1);
    const shape_t biggest(static_cast<size_t>(max_rank), 1);
    CHECK_ERROR(tensor::empty(too_big, dtype::float32), value_error, "rank 33",
                "exceeds the maximum of 32");
    const tensor b = tensor::empty(biggest, dtype::float32);
    CHECK(b.dim() == max_rank);
    CHECK_ERROR(b.unsqueeze(0), value_error, "rank would exceed 32");
    CHECK_ERROR(b.reshape(too_big), value_error, "rank 33");
    CHECK_ERROR(b.expand(too_big), value_error, "rank 33");
    CHECK_ERROR(tensor::from_storage(b.storage(), dtype::float32, too_big, {}), value_error,
                "rank 33");
    CHECK(b.dim() == max_rank);
    CHECK_ERROR(tensor::empty({2, -1}, dtype::float32), value_error,
                "negative dimension in shape (2, -1)");
    CHECK_ERROR(tensor::empty({-3}, dtype::int8), value_error, "(-3,)");
    CHECK_ERROR(tensor::from_storage(b.storage(), dtype::float32, {-1}, {1}), value_error,
                "negative dimension");
    CHECK_ERROR(tensor::wrap(nullptr, dtype::float32, {-1}, {}, CPU, nullptr), value_error,
                "negative dimension");
}

TEST_CASE("views: to_string prints like numpy's str()") {
    auto f64 = [](std::vector<double> v) { return tensor::from_vector(v); };
    auto f32 = [](std::vector<float> v) { return tensor::from_vector(v); };
    auto arange = [](int64_t n, dtype dt) {
        std::vector<int64_t> v(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
        return tensor::from_vector(v).to(dt);
    };
    struct row {
        const char* what;
        tensor t;
        const char* expect; // str(a) with NumPy 2.4.6
    };
    const row rows[] = {
        {"i32", tensor::from_vector<int32_t>({1, 2, 3}), "[1 2 3]"},
        {"i64", tensor::from_vector<int64_t>({1, -2, 30}), "[ 1 -2 30]"},
        {"u8", tensor::from_vector<uint8_t>({0, 255, 7}), "[  0 255   7]"},
        {"f64 mixed", f64({1, 2.5, 3}), "[1.  2.5 3. ]"},
        {"f64 signs", f64({1, -2.5, 10}), "[ 1.  -2.5 10. ]"},
        {"f64 fractions", f64({0.1, 0.25}), "[0.1  0.25]"},
        {"f64 1/3", f64({1.0 / 3, 2}), "[0.33333333 2.        ]"},
        {"f64 100, 0.5", f64({100, 0.5}), "[100.    0.5]"},
        {"f64 small", f64({1.5e-5, 1}), "[1.5e-05 1.0e+00]"},
        {"f64 small signed", f64({-1.5e-5, 1}), "[-1.5e-05  1.0e+00]"},
        {"f64 1e-5", f64({1e-5, 1}), "[1.e-05 1.e+00]"},
        {"f64 ratio > 1e3", f64({1, 10000}), "[1.e+00 1.e+04]"},
        {"f64 ratio 1e3", f64({1, 1000}), "[   1. 1000.]"},
        {"f64 1e8", f64({1e8, 1}), "[1.e+08 1.e+00]"},
        {"f64 3-digit exponent", f64({1e100, 1e-5}), "[1.e+100 1.e-005]"},
        {"f64 nan inf", f64({NAN, 1, INFINITY}), "[nan  1. inf]"},
        {"f64 -inf", f64({-INFINITY, 2.5}), "[-inf  2.5]"},
        {"f64 nan sci", f64({NAN, 1.5e-5}), "[    nan 1.5e-05]"},
        {"f64 -0", f64({-0.0, 1}), "[-0.  1.]"},
        {"f64 zeros", f64({0, 0}), "[0. 0.]"},
        {"f64 0.001", f64({0.001, 0.5}), "[0.001 0.5  ]"},
        {"f64 123456.789", f64({123456.789}), "[123456.789]"},
        {"f64 1e-4", f64({1e-4, 1}), "[1.e-04 1.e+00]"},
        {"f32 1.1", f32({1.1f}), "[1.1]"},
        {"f32 tenths", f32({0.1f, 0.2f, 0.3f}), "[0.1 0.2 0.3]"},
        {"f16", f32({0.1f, 1000}).to(dtype::float16), "[1.e-01 1.e+03]"},
        // Not in numpy: bfloat16 prints the fewest digits that read back as the same bfloat16.
        {"bf16", f32({0.1f, 1.5f, -3}).to(dtype::bfloat16), "[ 0.1  1.5 -3. ]"},
        {"c128", tensor::from_vector<complex128_t>({{1, 2}, {3, -4.5}}), "[1.+2.j  3.-4.5j]"},
        {"c128 2x2",
         tensor::from_vector<complex128_t>({{1, 2}, {-3.25, -4}, {0, 0}, {0, 1}}, {2, 2}),
         "[[ 1.  +2.j -3.25-4.j]\n [ 0.  +0.j  0.  +1.j]]"},
        {"c64", tensor::from_vector<complex64_t>({{0.1f, 0.2f}}), "[0.1+0.2j]"},
        {"bool", tensor::from_vector<bool>({true, false, true}), "[ True False  True]"},
        {"i32 2x2", tensor::from_vector<int32_t>({1, 2, 3, 4}, {2, 2}), "[[1 2]\n [3 4]]"},
        {"i32 2x2 transposed", tensor::from_vector<int32_t>({1, 2, 3, 4}, {2, 2}).t(),
         "[[1 3]\n [2 4]]"},
        {"f64 2x2", f64({1.5, 2, 3, 4}).reshape({2, 2}), "[[1.5 2. ]\n [3.  4. ]]"},
        {"i32 2x2x2", arange(8, dtype::int32).reshape({2, 2, 2}),
         "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]"},
        {"f64 arange 1001", arange(1001, dtype::float64),
         "[   0.    1.    2. ...  998.  999. 1000.]"},
        {"i64 arange 2000", arange(2000, dtype::int64), "[   0    1    2 ... 1997 1998 1999]"},
        {"i32 100x100", arange(10000, dtype::int32).reshape({100, 100}),
         "[[   0    1    2 ...   97   98   99]\n [ 100  101  102 ...  197  198  199]\n [ 200  "
         "201  202 ...  297  298  299]\n ...\n [9700 9701 9702 ... 9797 9798 9799]\n [9800 9801 "
         "9802 ... 9897 9898 9899]\n [9900 9901 9902 ... 9997 9998 9999]]"},
        {"f64 0-d 2.5", tensor::scalar_tensor(2.5), "2.5"},
        {"f64 0-d 1.0", tensor::scalar_tensor(1.0), "1.0"},
        {"f64 0-d 1e20", tensor::scalar_tensor(1e20), "1e+20"},
        {"f64 0-d 1e-5", tensor::scalar_tensor(1e-5), "1e-05"},
        {"f32 0-d 0.1", tensor::scalar_tensor(0.1f), "0.1"},
        {"f64 0-d 1e16", tensor::scalar_tensor(1e16), "1e+16"},
        {"f64 0-d 9999999999999998", tensor::scalar_tensor(9999999999999998.0),
         "9999999999999998.0"},
        {"f64 0-d -0.0", tensor::scalar_tensor(-0.0), "-0.0"},
        {"f64 0-d 0.0001", tensor::scalar_tensor(0.0001), "0.0001"},
        {"f64 0-d nan", tensor::scalar_tensor(double(NAN)), "nan"},
        {"f64 0-d -inf", tensor::scalar_tensor(-double(INFINITY)), "-inf"},
        {"i32 0-d", tensor::scalar_tensor<int32_t>(5), "5"},
        {"bool 0-d", tensor::scalar_tensor(true), "True"},
        {"c128 0-d", tensor::scalar_tensor(complex128_t(1, 2)), "(1+2j)"},
        {"c128 0-d imaginary", tensor::scalar_tensor(complex128_t(0, 2)), "2j"},
        {"c128 0-d fractions", tensor::scalar_tensor(complex128_t(1.5, -0.5)), "(1.5-0.5j)"},
        {"c64 0-d", tensor::scalar_tensor(complex64_t(0.1f, 0.2f)), "(0.1+0.2j)"},
        {"f64 empty", f64({}), "[]"},
        {"f64 empty 0x3", tensor::empty({0, 3}, dtype::float64), "[]"},
    };
    for (const auto& r : rows) {
        CAPTURE(r.what);
        CHECK(r.t.to_string() == r.expect);
    }
    // The 3-d summary puts a blank line around the "..." block, as numpy does.
    const std::string big = arange(3000, dtype::int32).reshape({10, 10, 30}).to_string();
    CHECK(big.substr(0, 38) == "[[[   0    1    2 ...   27   28   29]\n");
    CHECK(big.find("  ...\n  [ 210  211  212 ...  237  238  239]") != std::string::npos);
    CHECK(big.find("]]\n\n ...\n\n [[2100 2101 2102 ... 2127 2128 2129]") != std::string::npos);
    CHECK(big.substr(big.size() - 40) == "\n  [2970 2971 2972 ... 2997 2998 2999]]]");
    std::ostringstream os;
    os << tensor::from_vector<int32_t>({1, 2});
    CHECK(os.str() == "[1 2]");
}
