// Tests for the core's memory-safety rules: checked sizes, slice lengths, read-only broadcast
// views, cycle-free cells and exact number conversion (regression reproducers of memory-safety
// faults, in C++).
#include "fake_resource.hpp"

#include <isthmus/error.hpp>
#include <isthmus/ops.hpp>
#include <isthmus/tensor.hpp>
#include <isthmus/value.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

using namespace isthmus;

namespace {
constexpr int64_t big = int64_t{1} << 32;
constexpr int64_t i64max = std::numeric_limits<int64_t>::max();
constexpr int64_t i64min = std::numeric_limits<int64_t>::min();
} // namespace

TEST_CASE("safety: checked_numel follows NumPy's size rule") {
    CHECK(checked_numel({}, 4, "t") == 1);
    CHECK(checked_numel({2, 3}, 8, "t") == 6);
    CHECK(checked_numel({0, 5}, 8, "t") == 0);
    CHECK(checked_numel({int64_t{1} << 59}, 8, "t") == int64_t{1} << 59); // 2^62 bytes
    CHECK_ERROR(checked_numel({int64_t{1} << 61}, 8, "t"), value_error, "t: array is too big");
    CHECK_ERROR(checked_numel({big, big}, 1, "zeros"), value_error, "zeros: array is too big",
                "(4294967296, 4294967296)");
    // Zero-size dimensions are skipped in the product, so a zero does not hide an overflow.
    CHECK_ERROR(checked_numel({0, int64_t{1} << 62, int64_t{1} << 62}, 1, "t"), value_error,
                "array is too big");
    CHECK_ERROR(checked_numel({2, -1}, 4, "t"), value_error, "negative dimensions");
    CHECK_ERROR(numel_of({big, big}), value_error, "array is too big");
    CHECK(numel_of({i64max}) == i64max);
}

TEST_CASE("safety: shapes that overflow are refused where shapes grow") {
    CHECK_ERROR(tensor::empty({big, big}, dtype::float32), value_error, "empty: array is too big");
    CHECK_ERROR(zeros({big, big}), value_error, "array is too big");
    CHECK_ERROR(ones({big, big}, dtype::int8), value_error, "array is too big");
    CHECK_ERROR(full({big, big}, scalar(1.0)), value_error, "array is too big");
    CHECK_ERROR(rand({big, big}), value_error, "array is too big");
    CHECK_ERROR(arange(scalar(int64_t{0}), scalar(int64_t{1} << 62)), value_error,
                "array is too big");
    tensor one = zeros({1});
    CHECK_ERROR(one.expand({int64_t{1} << 62, 4}), value_error, "expand: array is too big");
    CHECK_ERROR(zeros({0}).reshape({int64_t{1} << 62, int64_t{1} << 62, 0}), value_error,
                "reshape: array is too big");
    CHECK_ERROR(value::make_cell({int64_t{1} << 62}), value_error, "cell: array is too big");
    // A view whose strides overflow cannot be made over any storage.
    auto st = storage::allocate(64, MEMRESOURCE_CPU);
    CHECK_ERROR(tensor::from_storage(st, dtype::float32, {3, 3}, {i64max / 2, 1}, 0), value_error,
                "reaches outside its storage");
    CHECK_ERROR(tensor::from_storage(st, dtype::float32, {2}, {1}, i64max), value_error,
                "reaches outside its storage");
    float x = 0;
    CHECK_ERROR(tensor::wrap(&x, dtype::float32, {3}, {i64max / 2}, MEMRESOURCE_CPU, nullptr),
                value_error, "beyond the address space");
    // Large but representable: the allocator's memory_error, never a short buffer.
    CHECK_THROWS_AS(tensor::empty({int64_t{1} << 60}, dtype::int8), memory_error);
    CHECK(sum(zeros({3})).item<double>() == 0.0);
}

TEST_CASE("safety: eye with a diagonal offset near 2^63 selects nothing") {
    for (int64_t k : {i64max, i64min, i64min + 1, int64_t{-3}, int64_t{3}}) {
        CAPTURE(k);
        CHECK(sum(eye(3, std::nullopt, k)).item<double>() == 0.0);
    }
    CHECK(sum(eye(3, std::nullopt, 1)).item<double>() == 2.0);
}

TEST_CASE("safety: slice lengths never overflow") {
    tensor a = arange(scalar(int64_t{0}), scalar(int64_t{4}));
    struct row {
        int64_t start, stop, step;
        std::vector<int64_t> expect;
    };
    for (const row& r : std::vector<row>{
             {0, 4, i64max, {0}},
             {1, 4, i64max, {1}},
             {3, -5, -i64max, {3}},
             {3, -5, i64min, {3}},
             {0, 4, int64_t{1} << 62, {0}},
             {0, 4, 3, {0, 3}},
             {3, -5, -2, {3, 1}},
             {4, 0, 1, {}},
         }) {
        CAPTURE(r.start);
        CAPTURE(r.step);
        tensor s = a.slice(0, r.start, r.stop, r.step);
        CHECK(s.to_vector<int64_t>() == r.expect);
    }
    tensor m = zeros({4, 3});
    CHECK(m.slice(0, 0, 4, i64max).shape() == shape_t{1, 3});
}

TEST_CASE("safety: broadcast views are read-only") {
    tensor b = arange(scalar(int64_t{0}), scalar(int64_t{3}), scalar(int64_t{1}), dtype::float32);
    tensor e = b.expand({2, 3});
    CHECK_FALSE(e.is_writable());
    CHECK(b.is_writable());
    CHECK(b.expand({1, 3}).is_writable());       // repeats nothing
    CHECK_FALSE(e.slice(0, 0, 1).is_writable()); // views of a broadcast view stay read-only
    CHECK_FALSE(e.select(0, 0).select(0, 0).is_writable()); // E[0, 0] writes every row
    CHECK_ERROR(e.fill(5), value_error, "fill: assignment destination is read-only");
    CHECK_ERROR(e.copy_from(zeros({2, 3})), value_error, "read-only");
    CHECK_ERROR(e.lock(lock_mode::write, MEMRESOURCE_CPU), value_error, "read-only");
    CHECK_ERROR(e.lock(lock_mode::readwrite, MEMRESOURCE_CPU), value_error, "read-only");
    CHECK_ERROR(index_put(e, {index_item(int64_t{0})}, scalar(1.0)), value_error, "read-only");
    CHECK_ERROR(binary_inplace(binary_op::add, e, scalar(1.0)), value_error, "read-only");
    // Reading is fine, and nothing was written.
    e.lock(lock_mode::read, MEMRESOURCE_CPU);
    e.unlock(lock_mode::read, MEMRESOURCE_CPU);
    CHECK(b.to_vector<float>() == std::vector<float>{0, 1, 2});
    CHECK(e.contiguous().is_writable());
}

TEST_CASE("safety: cells never contain themselves") {
    value c = value::make_cell({3});
    CHECK_ERROR(c.as_cell().set(0, c), value_error, "cannot contain itself");
    value d = value::make_cell({1});
    d.as_cell().set(0, c);
    CHECK_ERROR(c.as_cell().set(1, d), value_error, "cannot contain itself");
    CHECK_ERROR(c.as_cell().set(3, value(1.0)), index_error, "out of bounds");
    CHECK(c.as_cell().items[1].is_none());
    c.as_cell().set(2, value(2.0));
    CHECK(c.to_string() == "{none, none, 2.0}");
    // A cycle made by writing items directly still prints finitely.
    value e = value::make_cell({1});
    e.as_cell().items[0] = e;
    CHECK(e.to_string() == "{{...}}");
    e.as_cell().items[0] = value(); // break it, or it leaks
}

TEST_CASE("safety: deeply nested cells free without deep recursion") {
    value top = value::make_cell({1});
    value cur = top;
    for (int i = 0; i < 200000; ++i) {
        value next = value::make_cell({1});
        cur.as_cell().set(0, next);
        cur = next;
    }
    CHECK(top.to_string().find("{...}") != std::string::npos);
    cur = value();
    top = value(); // See Note [cell teardown]: must not overflow the stack
    CHECK(top.is_none());
}

TEST_CASE("safety: a typed scalar's cast wraps as a tensor cast, from all 64 bits") {
    CHECK(scalar(std::numeric_limits<int64_t>::max()).cast(dtype::int8).to<int64_t>() == -1);
    CHECK(scalar(int64_t{-1}).cast(dtype::uint64).to<uint64_t>() ==
          std::numeric_limits<uint64_t>::max());
    CHECK(scalar(uint64_t{1} << 63).cast(dtype::int64).to<int64_t>() ==
          std::numeric_limits<int64_t>::min());
    CHECK(scalar(int64_t{(int64_t{1} << 53) + 1}).cast(dtype::float64).to<double>() == 0x1p53);
    CHECK(scalar(-2.7).cast(dtype::int8).to<int64_t>() == -2);
    CHECK(!scalar(complex128_t(0, 0)).cast(dtype::bool_).to<bool>());
    CHECK(scalar(complex128_t(3, 4)).cast(dtype::float32).to<double>() == 3.0);
    CHECK(scalar(int64_t{7}).cast(dtype::int64) == scalar(int64_t{7}));
    CHECK(scalar(int64_t{300}).cast(dtype::uint8).type() == dtype::uint8);
    CHECK(scalar(int64_t{300}).cast(dtype::uint8).to<int64_t>() == 44);
}

TEST_CASE("safety: exact number conversion follows NumPy 2") {
    CHECK_ERROR(scalar(int64_t{300}).to_checked(dtype::int8), overflow_error,
                "Python integer 300 out of bounds for int8");
    CHECK_ERROR(scalar(int64_t{-1}).to_checked(dtype::uint8), overflow_error,
                "Python integer -1 out of bounds for uint8");
    CHECK_ERROR(scalar(uint64_t{1} << 63).to_checked(dtype::int64), overflow_error,
                "9223372036854775808 out of bounds for int64");
    CHECK_ERROR(scalar(300.5).to_checked(dtype::int8), overflow_error, "300 out of bounds");
    CHECK_ERROR(scalar(std::nan("")).to_checked(dtype::int32), value_error, "NaN");
    CHECK_ERROR(scalar(INFINITY).to_checked(dtype::int64), overflow_error, "infinity");
    CHECK_ERROR(scalar(1e30).to_checked(dtype::uint64), overflow_error, "out of bounds");
    CHECK_ERROR(scalar(complex128_t(1, 2)).to_checked(dtype::int32), type_error, "complex");
    CHECK_ERROR(scalar(complex128_t(1, 2)).to_checked(dtype::float32), type_error, "complex");
    CHECK(scalar(int64_t{127}).to_checked(dtype::int8).to<int64_t>() == 127);
    CHECK(scalar(int64_t{-128}).to_checked(dtype::int8).to<int64_t>() == -128);
    CHECK(scalar(uint64_t{18446744073709551615ull}).to_checked(dtype::uint64).to<uint64_t>() ==
          18446744073709551615ull);
    CHECK(scalar(-2.7).to_checked(dtype::int16).to<int64_t>() == -2);
    CHECK(scalar(0x1p63).to_checked(dtype::uint64).to<uint64_t>() == uint64_t{1} << 63);
    CHECK(scalar(true).to_checked(dtype::int8).to<int64_t>() == 1);
    CHECK(scalar(int64_t{5}).to_checked(dtype::bool_).to<bool>());
    CHECK(!scalar(complex128_t(0, 0)).to_checked(dtype::bool_).to<bool>());
    CHECK(scalar(complex128_t(0, 1)).to_checked(dtype::bool_).to<bool>());
    CHECK(scalar(complex128_t(std::nan(""), 0)).to_checked(dtype::bool_).to<bool>());
    CHECK(scalar(int64_t{3}).to_checked(dtype::complex64).type() == dtype::complex64);
    CHECK(std::isinf(scalar(1e300).to_checked(dtype::float32).to<double>())); // as a cast
    // Weak scalars in ops raise the same error type.
    CHECK_ERROR(add(zeros({3}, dtype::int8), scalar(int64_t{300})), overflow_error,
                "Python integer 300 out of bounds for int8");
}
