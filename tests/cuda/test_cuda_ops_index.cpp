// CUDA op coverage, indexing and copies: gather, scatter, concat, pad, tile on cuda:0.
#include "cuda_ops_helpers.hpp"

using namespace isthmus;
using namespace cuda_ops_test;

TEST_CASE("cuda ops: gather and scatter by integer index arrays and masks" *
          doctest::skip(!cuda::available())) {
    cuda::init(0);
    for (dtype dt :
         {dtype::bool_, dtype::int16, dtype::float32, dtype::float64, dtype::complex128}) {
        const std::string what = name_of(dt);
        const tensor x = random_tensor(dt, {6, 7, 5}, 27);
        // indices with negatives and repeats (a gather may repeat rows)
        const tensor i = tensor::from_vector<int64_t>({0, -1, 3, 3, 5, -6});
        const tensor j = tensor::from_vector<int32_t>({6, 0, -7}, {3, 1}); // axis 1 (7)
        const tensor k = tensor::from_vector<int32_t>({4, 0, -5}, {3, 1}); // axis 2 (5)
        const index_slice all;
        both([&] { return index(x, {i}); }, "x[i] " + what);
        both([&] { return index(x, {all, j}); }, "x[:, j] " + what);
        both(
            [&] {
                return index(x, {i.slice(0, 0, 3), all, k.view({3, 1})});
            },
            "x[i, :, j] (separated) " + what);
        both([&] { return index(x.permute({2, 0, 1}), {all, i}); }, "strided source " + what);
        both(
            [&] {
                return take(x, tensor::from_vector<int64_t>({0, 209, -1, 17}));
            },
            "take flat " + what);
        both([&] { return take_along_axis(x, argmax(x.to(dtype::float64), 1, true), 1); },
             "take_along_axis " + what);
        const tensor mask = gt(random_tensor(dtype::float32, {6, 7}, 28), 0.0);
        both([&] { return index(x, {mask}); }, "x[mask] " + what);
        both([&] { return index(x, {tensor::from_vector<int64_t>({}, {0})}); }, "empty " + what);
        // assignment on the GPU; repeated rows keep the last value (Note [repeated scatter rows])
        const tensor vals = random_tensor(dt, {3, 7, 5}, 29);
        both(
            [&] {
                tensor t = x.clone();
                index_put(t, {tensor::from_vector<int64_t>({4, 0, -1})}, vals);
                return t;
            },
            "x[rows] = v " + what);
        both(
            [&] {
                tensor t = x.clone();
                index_put(t, {all, j.view({3})}, vals.select(0, 0).slice(0, 0, 3).t().t());
                return t;
            },
            "x[:, j] = v " + what);
        both(
            [&] {
                tensor t = x.clone();
                index_put(t, {mask}, scalar(int64_t{1}));
                return t;
            },
            "x[mask] = 1 " + what);
        both(
            [&] {
                tensor t = x.clone();
                index_put(t, {tensor::from_vector<int64_t>({2, 2, 5})}, vals);
                return t;
            },
            "repeated rows, last wins " + what, 0);
        both(
            [&] {
                tensor t = x.clone(); // repeated (row, column) pairs, a broadcast value row
                index_put(t,
                          {tensor::from_vector<int64_t>({1, 4, 1, 1}), all,
                           tensor::from_vector<int64_t>({0, 2, 0, 0})},
                          vals.select(0, 1).select(1, 0));
                return t;
            },
            "repeated pairs, last wins " + what, 0);
    }
    // an out-of-range index raises before anything is written, on the GPU too
    device_scope s(gpu);
    const tensor x = random_tensor(dtype::float32, {4, 3}, 30);
    const tensor before = x.clone();
    CHECK_THROWS_AS(index(x, {tensor::from_vector<int64_t>({1, 4})}), index_error);
    CHECK_THROWS_AS(index_put(x, {tensor::from_vector<int64_t>({-5})}, scalar(1.0)), index_error);
    check_same(x, before, 0, "unchanged after the errors");
    set_default_resource(MEMRESOURCE_CPU);
}

TEST_CASE("cuda ops: concat, stack, pad, tile and repeat copy on the GPU" *
          doctest::skip(!cuda::available())) {
    cuda::init(0);
    for (dtype dt :
         {dtype::bool_, dtype::uint8, dtype::bfloat16, dtype::float64, dtype::complex64}) {
        const std::string what = name_of(dt);
        const tensor a = random_tensor(dt, {3, 4, 5}, 31), b = random_tensor(dt, {3, 2, 5}, 32);
        both([&] { return concat({a, b, a.slice(1, 0, 1)}, 1); }, "concat " + what);
        both(
            [&] {
                return concat({a, random_tensor(dtype::int16, {3, 4, 5}, 33)}, -1);
            },
            "concat with promotion " + what);
        both([&] { return stack({a, a.permute({0, 1, 2}), a}, 3); }, "stack " + what);
        for (pad_mode m : {pad_mode::constant, pad_mode::edge, pad_mode::reflect,
                           pad_mode::symmetric, pad_mode::wrap})
            both(
                [&] {
                    return pad(a, {{1, 2}, {0, 3}, {2, 2}}, m, scalar(int64_t{1}));
                },
                "pad " + what);
        both([&] { return tile(a.t(), {2, 1, 3}); }, "tile " + what);
        both([&] { return repeat(a, 3, 1); }, "repeat " + what);
        both(
            [&] {
                return repeat(a, tensor::from_vector<int64_t>({2, 0, 1}), 0);
            },
            "repeat counts " + what);
    }
    set_default_resource(MEMRESOURCE_CPU);
}
