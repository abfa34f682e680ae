// The scheduling rule from C++: choose_resource, device_scope, the transfer threshold, to_resource.
#include "fake_backend.hpp"
#include "fake_resource.hpp"
#include "test_support.hpp"

#include <isthmus/ops/creation.hpp>
#include <isthmus/ops/elementwise.hpp>

#include <isthmus/backend.hpp>
#include <isthmus/ops.hpp>
#include <isthmus/schedule.hpp>
#include <isthmus/storage.hpp>

#include <doctest/doctest.h>

#include <cstring>
#include <thread>
#include <vector>

using namespace isthmus;
using isthmus_test::BACKEND_DEV;
using isthmus_test::fake_default_device;
using isthmus_test::fake_kernels;
using isthmus_test::registered_fake;

namespace {

resource_id where(std::initializer_list<const tensor*> ts) {
    return choose_resource(std::span<const tensor* const>(ts.begin(), ts.size()));
}

tensor host_values(int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i % 97) - 40.f;
    return tensor::from_vector(v);
}

} // namespace

TEST_CASE("schedule: on the CPU everything runs on the CPU") {
    const tensor a = host_values(10), b = host_values(10);
    CHECK(where({&a, &b}) == MEMRESOURCE_CPU);
    CHECK(where({}) == MEMRESOURCE_CPU);
    CHECK(where({&a, nullptr}) == MEMRESOURCE_CPU);
    CHECK(scoped_resource() == -1);
}

TEST_CASE("schedule: small work stays where its data is, large work moves to the default device") {
    fake_default_device f;
    set_transfer_threshold(1000);
    const tensor small = host_values(999), large = host_values(1000);
    CHECK(where({&small}) == MEMRESOURCE_CPU);
    CHECK(where({&large}) == BACKEND_DEV);
    CHECK(where({&small, &small}) == BACKEND_DEV); // 1998 elements read in all
    set_transfer_threshold(0);
    CHECK(where({&small}) == BACKEND_DEV);
    // A result computed there is valid there, equal to the CPU's, and the next op stays there.
    set_transfer_threshold(1000);
    const tensor r = binary(binary_op::add, large, large);
    CHECK(r.location() == BACKEND_DEV);
    CHECK(where({&r}) == BACKEND_DEV);
    const std::vector<double> in = values(large);
    std::vector<double> want;
    for (double x : in) want.push_back(2 * x);
    CHECK(values(r) == want);
    CHECK_ERROR(set_transfer_threshold(-1), value_error, ">= 0", "-1");
    CHECK(transfer_threshold() == 1000); // unchanged by the refused call
}

TEST_CASE("schedule: a pinned input decides, a device_scope overrides") {
    fake_default_device f;
    set_transfer_threshold(0);
    std::vector<float> mem(64, 1.f);
    const tensor pinned = tensor::from_storage(
        storage::wrap(mem.data(), mem.size() * sizeof(float), MEMRESOURCE_CPU, nullptr),
        dtype::float32, {64}, {}, 0);
    const tensor other = host_values(64);
    CHECK(where({&pinned, &other}) == MEMRESOURCE_CPU);
    {
        device_scope s(BACKEND_DEV);
        CHECK(scoped_resource() == BACKEND_DEV);
        CHECK(where({&pinned, &other}) == BACKEND_DEV);
        {
            device_scope inner(MEMRESOURCE_CPU);
            CHECK(where({&other}) == MEMRESOURCE_CPU);
            CHECK(zeros({3}, dtype::float32).location() == MEMRESOURCE_CPU);
        }
        CHECK(scoped_resource() == BACKEND_DEV);
        const tensor z = zeros({3}, dtype::float32, MEMRESOURCE_DEVICE0);
        CHECK(z.location() == BACKEND_DEV);
        // An op on the pinned value runs under the scope and still gives the right values.
        const tensor r = binary(binary_op::add, pinned, other);
        std::vector<double> want;
        for (double x : values(other)) want.push_back(x + 1);
        CHECK(values(r) == want);
    }
    CHECK(scoped_resource() == -1);
}

TEST_CASE("schedule: a device_scope belongs to its thread") {
    fake_default_device f;
    set_transfer_threshold(1 << 30);
    const tensor a = host_values(8);
    device_scope s(BACKEND_DEV);
    resource_id seen = -2;
    std::thread t([&] { seen = where({&a}); });
    t.join();
    CHECK(seen == MEMRESOURCE_CPU);
    CHECK(where({&a}) == BACKEND_DEV);
}

TEST_CASE("schedule: bad scopes and targets are refused with nothing changed") {
    CHECK_ERROR(device_scope(MEMRESOURCE_DEVICE4 + 20), value_error, "unknown memory resource");
    CHECK(scoped_resource() == -1);
    const tensor a = host_values(4);
    CHECK_ERROR(to_resource(a, MEMRESOURCE_DEVICE4 + 20), value_error, "unknown memory resource");
    CHECK(a.location() == MEMRESOURCE_CPU);
    CHECK_ERROR(to_resource(tensor(), MEMRESOURCE_CPU), value_error, "undefined");
}

TEST_CASE("schedule: to_resource makes data valid there, or copies it there") {
    fake_default_device f;
    set_default_resource(MEMRESOURCE_CPU);
    registered_fake& dev = f.dev;
    const tensor a = host_values(100);
    const size_t before = dev->bytes_to_device;
    const tensor same = to_resource(a, BACKEND_DEV);
    CHECK(same.storage() == a.storage());
    CHECK(a.storage()->valid_on(BACKEND_DEV));
    CHECK(a.storage()->valid_on(MEMRESOURCE_CPU));
    CHECK(dev->bytes_to_device - before == 100 * sizeof(float));
    to_resource(a, BACKEND_DEV); // already valid there: no second transfer
    CHECK(dev->bytes_to_device - before == 100 * sizeof(float));

    const tensor strided = host_values(40).reshape({5, 8}).permute({1, 0});
    const tensor c = to_resource(strided, BACKEND_DEV, true);
    CHECK(c.storage() != strided.storage());
    CHECK(c.is_contiguous());
    CHECK(c.shape() == shape_t{8, 5});
    CHECK(c.storage()->valid_on(BACKEND_DEV));
    CHECK(values(c) == values(strided));
    const tensor empty =
        to_resource(tensor::empty({0, 3}, dtype::int32, MEMRESOURCE_CPU), BACKEND_DEV);
    CHECK(empty.numel() == 0);
}

namespace {
std::vector<float> read_floats(const tensor& t) {
    const tensor c = t.contiguous();
    std::vector<float> out(static_cast<size_t>(c.numel()));
    std::memcpy(out.data(), c.lock(LOCK_READ, MEMRESOURCE_CPU), out.size() * sizeof(float));
    c.unlock(LOCK_READ, MEMRESOURCE_CPU);
    return out;
}
} // namespace

TEST_CASE("schedule: device scatters with repeated indices keep the last value, as the CPU") {
    fake_default_device f;
    set_transfer_threshold(0); // everything goes to the fake device
    const tensor idx = tensor::from_vector(std::vector<int64_t>{1, 3, 1, 0, -1, 1});
    const tensor vals = tensor::from_vector(
        std::vector<float>{10, 11, 12, 20, 21, 22, 30, 31, 32, 40, 41, 42, 50, 51, 52, 60, 61, 62},
        {6, 3});
    // the CPU's answer (sequential writes: the last row per target stays)
    const tensor expect = host_values(15).reshape({5, 3}).clone();
    {
        set_default_resource(MEMRESOURCE_CPU);
        index_put(expect, {idx}, vals);
        set_default_resource(BACKEND_DEV);
    }
    const tensor t = host_values(15).reshape({5, 3}).clone();
    const int g0 = fake_kernels::gathers, s0 = fake_kernels::scatters;
    index_put(t, {idx}, vals);
    CHECK(fake_kernels::gathers == g0 + 1); // the kept value rows, compacted
    CHECK(fake_kernels::scatters == s0 + 1);
    CHECK(t.storage()->valid_on(BACKEND_DEV));
    CHECK(read_floats(t) == read_floats(expect));
    CHECK(read_floats(t)[3] == 60.f); // row 1: written three times, the last value stays

    // one element per row (nothing beyond the rows), a broadcast value, a strided target
    const tensor flat = host_values(8).clone();
    const tensor flat_expect = flat.clone();
    const tensor idx2 = tensor::from_vector(std::vector<int64_t>{2, 2, 5, 2});
    const tensor v2 = tensor::from_vector(std::vector<float>{1, 2, 3, 4});
    index_put(flat, {idx2}, v2);
    set_default_resource(MEMRESOURCE_CPU);
    index_put(flat_expect, {idx2}, v2);
    set_default_resource(BACKEND_DEV);
    CHECK(read_floats(flat) == read_floats(flat_expect));
    CHECK(read_floats(flat)[2] == 4.f);

    const tensor idx3 = tensor::from_vector(std::vector<int64_t>{2, 2, 3});
    const tensor wide = host_values(24).reshape({4, 6}).clone();
    const tensor cols = wide.slice(1, 0, 6, 2); // (4, 3), strided rows
    const tensor wide_expect = wide.clone();
    index_put(cols, {idx3}, scalar(7.0)); // rows 2, 2, 3: a scalar broadcast
    set_default_resource(MEMRESOURCE_CPU);
    index_put(wide_expect.slice(1, 0, 6, 2), {idx3}, scalar(7.0));
    set_default_resource(BACKEND_DEV);
    CHECK(read_floats(wide) == read_floats(wide_expect));

    // a bad index is refused before anything is written
    const tensor before = t.clone();
    CHECK_THROWS_AS(
        index_put(t, {tensor::from_vector(std::vector<int64_t>{1, 5, 1})}, vals.slice(0, 0, 3, 1)),
        index_error);
    CHECK(read_floats(t) == read_floats(before));
}
