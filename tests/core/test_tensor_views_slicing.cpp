// Tests for slicing views: Python slice semantics, negative steps, select.
#include "fake_resource.hpp"
#include "test_support.hpp"

#include <isthmus/error.hpp>
#include <isthmus/tensor.hpp>

#include <doctest/doctest.h>

#include <cstdint>

using namespace isthmus;
using namespace views_helpers;
using isthmus_test::registered_fake;

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
