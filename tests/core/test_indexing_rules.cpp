// Tests for NumPy's subscript rules in index / index_put (Note [NumPy's subscript rules]):
// placement of advanced indices, integers and newaxis, 0-d index tensors, limits, error order.
#include <doctest/doctest.h>

#include "test_support.hpp"

#include "isthmus/ops/creation.hpp"
#include "isthmus/ops/indexing.hpp"

#include <cstdint>
#include <limits>
#include <vector>

using namespace isthmus;

namespace {

tensor iota(const shape_t& shape) {
    std::vector<int64_t> v(static_cast<size_t>(numel_of(shape)));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(i);
    return tensor::from_vector(v, shape);
}

tensor int_tensor(std::vector<int64_t> v) {
    const auto n = static_cast<int64_t>(v.size());
    return tensor::from_vector(std::move(v), {n});
}

std::vector<int64_t> as_ints(const tensor& t) {
    return t.to_vector<int64_t>();
}

} // namespace

TEST_CASE("indexing rules: an ellipsis standing for no dimension still separates index arrays") {
    const tensor a = iota({2, 4});
    // The example: NumPy gives (2, 1, 1); the arrays' shape goes first.
    const tensor r = index(a, {newaxis, int_tensor({1, 0}), ellipsis, int_tensor({0}), newaxis});
    CHECK(r.shape() == shape_t{2, 1, 1});
    CHECK(as_ints(r) == std::vector<int64_t>{4, 0});
    CHECK(index_shape(a, {newaxis, int_tensor({1, 0}), ellipsis, int_tensor({0}), newaxis}) ==
          shape_t{2, 1, 1});
    CHECK(index(a, {int_tensor({1, 0}), ellipsis, int_tensor({0})}).shape() == shape_t{2});
    // Separated by a slice or newaxis: first. Next to each other (integers count): in place.
    const tensor b = iota({2, 3, 4});
    CHECK(index(b, {int_tensor({0, 1}), index_slice{}, int_tensor({0, 2})}).shape() ==
          shape_t{2, 3});
    CHECK(index(b, {int_tensor({0, 1}), newaxis, int_tensor({0, 2})}).shape() == shape_t{2, 1, 4});
    CHECK(index(b, {0, index_slice{}, int_tensor({0, 1})}).shape() == shape_t{2, 3});
    CHECK(index(b, {index_slice{}, 0, int_tensor({0, 1})}).shape() == shape_t{2, 2});
    CHECK(index(b, {newaxis, index_slice{}, int_tensor({1}), int_tensor({0, 1})}).shape() ==
          shape_t{1, 2, 2});
    // A 0-d bool is an advanced item too.
    CHECK(index(b, {int_tensor({0, 1}), true, int_tensor({0, 2})}).shape() == shape_t{2, 4});
    CHECK(index(b, {true, int_tensor({0, 1}), int_tensor({0, 2})}).shape() == shape_t{2, 4});
    CHECK(index(b, {int_tensor({0, 1}), ellipsis, true}).shape() == shape_t{2, 3, 4});
}

TEST_CASE("indexing rules: integers with newaxis or ellipsis keep the new dimensions") {
    const tensor a = iota({3});
    CHECK(index(a, {0, newaxis}).shape() == shape_t{1});
    CHECK(index(a, {newaxis, -1, newaxis}).shape() == shape_t{1, 1});
    CHECK(index(a, {1, ellipsis}).shape() == shape_t{});
    CHECK(index(a, {1, ellipsis}).storage() == a.storage()); // a 0-d view
    const tensor z = tensor::scalar_tensor<int64_t>(7);
    CHECK(index(z, {newaxis}).shape() == shape_t{1});
    CHECK(index(z, {newaxis, ellipsis, newaxis}).shape() == shape_t{1, 1});
    CHECK(index(z, {}).shape() == shape_t{});
    CHECK(index(z, {false, newaxis}).shape() == shape_t{0, 1});
    CHECK(is_full_integer_index({}, 0));
    CHECK(is_full_integer_index({1, tensor::scalar_tensor<int8_t>(-1)}, 2));
    CHECK_FALSE(is_full_integer_index({0, newaxis}, 1));
    CHECK_FALSE(is_full_integer_index({ellipsis}, 0));
    CHECK_FALSE(is_full_integer_index({true}, 0));
    CHECK_FALSE(is_full_integer_index({1}, 2));
}

TEST_CASE("indexing rules: 0-d integer tensors act as integers; beside slices they copy") {
    const tensor a = iota({3, 4});
    const tensor i = tensor::scalar_tensor<int32_t>(1);
    CHECK(index(a, {i}).shape() == shape_t{4});
    CHECK(index(a, {i, 2}).storage() == a.storage()); // all integers: a view (a scalar in Python)
    const tensor c = index(a, {i, index_slice{}});    // NumPy: a copy
    CHECK(c.storage() != a.storage());
    CHECK(as_ints(c) == std::vector<int64_t>{4, 5, 6, 7});
    CHECK(index(a, {i, newaxis}).storage() != a.storage());
    CHECK(index(a, {1, index_slice{}}).storage() == a.storage()); // a plain integer: a view
    CHECK(index(a, {i, int_tensor({0, 3})}).shape() == shape_t{2});
    const tensor big = tensor::scalar_tensor<uint64_t>(std::numeric_limits<uint64_t>::max());
    CHECK(contains(error_of([&] { index(a, {big}); }), "18446744073709551615"));
    CHECK_THROWS_AS(index(a, {big}), index_error);
}

TEST_CASE("indexing rules: unsigned integers above INT64_MAX are out of range, never wrapped") {
    const tensor a = iota({3});
    const uint64_t huge = std::numeric_limits<uint64_t>::max(); // would wrap to -1
    CHECK_THROWS_AS(index(a, {huge}), index_error);
    CHECK_THROWS_AS(index_put(a, {huge}, scalar(5)), index_error);
    CHECK_THROWS_AS(index(a, {uint64_t{1} << 63}), index_error);
    CHECK(as_ints(a) == std::vector<int64_t>{0, 1, 2});
    CHECK(index(a, {uint64_t{2}}).item<int64_t>() == 2);
}

TEST_CASE("indexing rules: at most max_rank result dimensions (an index_error, as NumPy's 64)") {
    const tensor a = iota({1, 1, 1});
    std::vector<index_item> items(max_rank - 3, index_item(newaxis));
    CHECK(index(a, items).dim() == max_rank);
    items.emplace_back(newaxis);
    CHECK_THROWS_AS(index(a, items), index_error);
    CHECK(contains(error_of([&] { index(a, items); }), "must be within [0, 32]"));
    // Index arrays: new dimensions plus the 2-d broadcast of two arrays plus the one left.
    std::vector<index_item> adv(max_rank - 3, index_item(newaxis));
    adv.emplace_back(int_tensor({0}).reshape({1, 1}));
    adv.emplace_back(int_tensor({0}));
    CHECK(index(a, adv).dim() == max_rank);
    adv.insert(adv.begin(), index_item(newaxis));
    CHECK_THROWS_AS(index(a, adv), index_error);
    CHECK_THROWS_AS(index_put(a, adv, scalar(1)), index_error);
    // The indexed view may be wider than the result: an index_error too, never another error.
    std::vector<index_item> wide(max_rank - 2, index_item(newaxis));
    wide.emplace_back(int_tensor({0}));
    wide.emplace_back(int_tensor({0}));
    CHECK_THROWS_AS(index(a, wide), index_error);
}

TEST_CASE("indexing rules: masks; a mask dimension of size 0 is not checked (as NumPy)") {
    const tensor a = iota({2, 2});
    const tensor m00 = zeros({0, 0}, dtype::bool_);
    CHECK(index(a, {newaxis, m00}).shape() == shape_t{1, 0});
    CHECK(index(a, {zeros({2, 0}, dtype::bool_)}).shape() == shape_t{0});
    CHECK(index(a, {zeros({0}, dtype::bool_), 0}).shape() == shape_t{0});
    CHECK_THROWS_AS(index(a, {zeros({0, 3}, dtype::bool_)}), index_error);
    CHECK_THROWS_AS(index(a, {zeros({3}, dtype::bool_)}), index_error);
}

TEST_CASE("indexing rules: errors come in NumPy's order") {
    const tensor a = iota({2, 2});
    const index_slice zero_step{std::nullopt, std::nullopt, 0};
    // Structure first (too many indices), even before a zero step or a bad integer.
    CHECK_THROWS_AS(index(a, {zero_step, 5, 0}), index_error);
    // Then the items in order: integers (also beside index arrays), slices.
    CHECK_THROWS_AS(index(a, {5, zero_step}), index_error);
    CHECK_THROWS_AS(index(a, {zero_step, 5}), value_error);
    CHECK_THROWS_AS(index(a, {zero_step, int_tensor({5})}), value_error);
    CHECK_THROWS_AS(index(a, {int_tensor({5}), zero_step}), value_error);
    // An integer is checked even when the index arrays select nothing.
    CHECK_THROWS_AS(index(a, {3, false}), index_error);
    CHECK(index(a, {int_tensor({}), int_tensor({5})}).shape() ==
          shape_t{0}); // arrays: only what is used
    // Mask shapes are structure: before the items.
    CHECK_THROWS_AS(index(a, {zero_step, zeros({3}, dtype::bool_)}), index_error);
}

TEST_CASE("indexing rules: index_put takes NumPy's value shapes") {
    tensor a = iota({2, 3});
    const std::vector<int64_t> before = as_ints(a);
    // One element: a 0-d value only.
    CHECK_THROWS_AS(index_put(a, {0, 0}, int_tensor({5})), value_error);
    index_put(a, {0, 0}, tensor::scalar_tensor<int64_t>(9));
    CHECK(as_ints(a)[0] == 9);
    index_put(a, {0, 0}, tensor::scalar_tensor<int64_t>(0));
    // (A bool element takes the truth value of a one-element value, as NumPy.)
    const tensor flags = zeros({2}, dtype::bool_);
    index_put(flags, {1}, int_tensor({-3}).reshape({1, 1}));
    CHECK(flags.to_vector<bool>() == std::vector<bool>{false, true});
    CHECK_THROWS_AS(index_put(flags, {0}, int_tensor({1, 1})), value_error);
    // ... but a 0-d view drops leading size-1 dimensions like any other.
    index_put(a, {0, 0, ellipsis}, int_tensor({0}).reshape({1, 1}));
    // A lone mask of the tensor's shape: a value of at most 1 dimension.
    const tensor m =
        tensor::from_vector(std::vector<bool>{true, false, true, false, false, true}, {2, 3});
    CHECK_THROWS_AS(index_put(a, {m}, int_tensor({1}).reshape({1, 1})), type_error);
    CHECK_THROWS_AS(index_put(a, {m}, int_tensor({1, 2})), value_error);
    CHECK(as_ints(a) == before);
    index_put(a, {m}, int_tensor({-1, -2, -3}));
    CHECK(as_ints(a) == std::vector<int64_t>{-1, 1, -2, 3, 4, -3});
    // A mask of fewer dimensions takes the general rule (leading 1s dropped).
    index_put(a, {tensor::from_vector(std::vector<bool>{false, true})},
              int_tensor({7, 8, 9}).reshape({1, 1, 3}));
    CHECK(as_ints(a) == std::vector<int64_t>{-1, 1, -2, 7, 8, 9});
    // Separated index arrays: the value is laid out with the arrays' shape first.
    tensor b = iota({2, 4});
    index_put(b, {newaxis, int_tensor({1, 0}), ellipsis, int_tensor({0}), newaxis},
              int_tensor({10, 20}).reshape({2, 1, 1}));
    CHECK(as_ints(b) == std::vector<int64_t>{20, 1, 2, 3, 10, 5, 6, 7});
}

TEST_CASE("indexing rules: index_shape matches index and reads no index values") {
    const tensor a = iota({3, 4, 5});
    const std::vector<std::vector<index_item>> keys = {
        {},
        {1},
        {newaxis, 1, ellipsis},
        {int_tensor({0, 2}), index_slice{}, int_tensor({1})},
        {index_slice{}, int_tensor({0, 2}), int_tensor({1})},
        {true, index_slice{std::nullopt, std::nullopt, -2}},
        {tensor::from_vector(std::vector<bool>{true, false, true}), ellipsis, newaxis},
    };
    for (const auto& k : keys) CHECK(index_shape(a, k) == index(a, k).shape());
    CHECK(index_shape(a, {int_tensor({7})}) == shape_t{1, 4, 5}); // out of range: not looked at
    CHECK_THROWS_AS(index_shape(a, {int_tensor({0, 1}), int_tensor({0, 1, 2})}), index_error);
}
