// Tests for view layouts: shape helpers, reshape, transpose/permute, squeeze, expand, contiguity.
#include "fake_resource.hpp"
#include "test_support.hpp"

#include <isthmus/error.hpp>
#include <isthmus/tensor.hpp>

#include <doctest/doctest.h>

using namespace isthmus;
using namespace views_helpers;
using isthmus_test::registered_fake;

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
