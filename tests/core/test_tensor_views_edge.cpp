// Tests for edge shapes of views: empty tensors, 0-d tensors, max_rank, negative dimensions.
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
