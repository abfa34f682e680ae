// The one backend interface: the CPU backend, the one-dispatch rule and its CPU fallback.
#include "fake_backend.hpp"
#include "test_support.hpp"

#include <isthmus/backend.hpp>
#include <isthmus/ops.hpp>
#include <isthmus/schedule.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

using namespace isthmus;
using isthmus_test::BACKEND_DEV;
using isthmus_test::fake_default_device;
using isthmus_test::fake_kernels;

namespace {

tensor floats(std::vector<float> v, shape_t shape = {}) {
    return tensor::from_vector(v, shape);
}

// Every op in these tests goes to the fake device when its backend can run it.
struct everything_on_device : fake_default_device {
    everything_on_device() { set_transfer_threshold(0); }
};

} // namespace

TEST_CASE("backend: the CPU is a backend, found by find_compute") {
    const auto cpu = backend::find_compute(MEMRESOURCE_CPU);
    REQUIRE(cpu != nullptr);
    CHECK(cpu->name() == "cpu");
    const unsigned all = backend::mixed_dtypes | backend::strided_reduce | backend::strided_matmul |
                         backend::host_index_rows;
    CHECK((cpu->features() & all) == all);
    CHECK(backend::find_compute(MEMRESOURCE_CPU) == cpu); // one instance
    CHECK(backend::find_compute(BACKEND_DEV) == nullptr);
    CHECK(backend::find_compute(-1) == nullptr);
    CHECK(backend::find_compute(max_resource_id + 1) == nullptr);
    {
        fake_default_device f;
        const auto dev = backend::find_compute(BACKEND_DEV);
        REQUIRE(dev != nullptr);
        CHECK(dev->name() == "fake compute");
        CHECK(dev->features() == 0u);                        // the canonical forms only
        CHECK_FALSE(dev->supports_variance(dtype::float32)); // optional entries default to no
        CHECK_FALSE(dev->supports_linear(dtype::int64));
        CHECK_FALSE(dev->supports_dotc(dtype::complex64));
        CHECK_FALSE(dev->supports_sort(dtype::float32));
        CHECK_FALSE(dev->supports_searchsorted(dtype::float32));
    }
    CHECK(backend::find_compute(BACKEND_DEV) == nullptr);
    // the CPU's backend is built in
    CHECK_THROWS_AS(backend::register_compute(MEMRESOURCE_CPU, nullptr), value_error);
    CHECK(backend::find_compute(MEMRESOURCE_CPU) == cpu);
}

TEST_CASE("backend: the CPU backend converts mixed operand dtypes itself") {
    // out (float32) = a (float64) + b (int16 scalar), computing in float64: the interface call
    // the dispatch makes for a mixed-dtype op on the CPU, without converted copies.
    const auto cpu = backend::find_compute(MEMRESOURCE_CPU);
    const tensor a = tensor::from_vector(std::vector<double>{0.5, 1.25, -3.0});
    tensor out = tensor::empty({3}, dtype::float32, MEMRESOURCE_CPU);
    const shape_t shape{3};
    backend::operand x, y, o;
    x.data = a.lock(LOCK_READ, MEMRESOURCE_CPU);
    x.dt = dtype::float64;
    x.strides = &a.strides();
    y.dt = dtype::int16;
    const int16_t seven = 7;
    std::memcpy(y.value, &seven, sizeof seven);
    o.data = out.lock(LOCK_WRITE, MEMRESOURCE_CPU);
    o.dt = dtype::float32;
    o.strides = &out.strides();
    cpu->binary(binary_op::add, dtype::float64, shape, o, x, y);
    out.unlock(LOCK_WRITE, MEMRESOURCE_CPU);
    a.unlock(LOCK_READ, MEMRESOURCE_CPU);
    CHECK(values(out) == std::vector<double>{7.5, 8.25, 4.0});
}

TEST_CASE("one dispatch: an op the device's backend supports runs there") {
    everything_on_device f;
    const tensor a = floats({1, 2, 3, 4, 5, 6}, {2, 3}), b = floats({10, 20, 30});
    const int before = fake_kernels::binaries;
    const tensor r = add(a, b); // broadcast, float32: the fake's add
    CHECK(fake_kernels::binaries == before + 1);
    CHECK(r.location() == BACKEND_DEV);
    CHECK(values(r) == std::vector<double>{11, 22, 33, 14, 25, 36});
    const tensor s = add(a, scalar(0.5)); // a scalar operand, stored as float32
    CHECK(fake_kernels::binaries == before + 2);
    CHECK(values(s) == std::vector<double>{1.5, 2.5, 3.5, 4.5, 5.5, 6.5});
    const int fills = fake_kernels::fills;
    const tensor z = full({4}, scalar(2.5), dtype::float32, MEMRESOURCE_DEVICE0);
    CHECK(fake_kernels::fills == fills + 1);
    CHECK(z.location() == BACKEND_DEV);
    CHECK(values(z) == std::vector<double>(4, 2.5));
}

TEST_CASE("one dispatch: inputs are brought into the canonical form on the device") {
    everything_on_device f;
    // float32 + int8 computes in float32: the fake converts the int8 input with its copy
    const tensor a = floats({1.5, 2.5, 3.5});
    const tensor i8 = tensor::from_vector(std::vector<int8_t>{-1, 2, 100});
    const int b0 = fake_kernels::binaries, c0 = fake_kernels::copies;
    const tensor r = add(a, i8);
    CHECK(fake_kernels::copies == c0 + 1);
    CHECK(fake_kernels::binaries == b0 + 1);
    CHECK(r.dtype() == dtype::float32);
    CHECK(values(r) == std::vector<double>{0.5, 4.5, 103.5});
    // float32 + int16 also computes in float32, but the fake cannot convert int16: the CPU
    // backend runs it, converting per block
    const tensor i16 = tensor::from_vector(std::vector<int16_t>{-1, 2, 100});
    const tensor q = add(a, i16);
    CHECK(fake_kernels::binaries == b0 + 1);
    CHECK(q.location() == MEMRESOURCE_CPU);
    CHECK(values(q) == values(r));
    // a reduction over the first axis: the input is permuted and made contiguous on the device
    // so that the reduced axis comes last
    const tensor m = floats({1, 2, 3, 4, 5, 6}, {2, 3});
    const int r0 = fake_kernels::reduces;
    const tensor s = sum(m, 0);
    CHECK(fake_kernels::reduces == r0 + 1);
    CHECK(s.location() == BACKEND_DEV);
    CHECK(values(s) == std::vector<double>{5, 7, 9});
    CHECK(values(sum(m, 1)) == std::vector<double>{6, 15});
}

TEST_CASE("one dispatch: what the device's backend does not support runs on the CPU backend") {
    everything_on_device f;
    const tensor a = floats({1, -2, 3, -4, 5, -6}, {2, 3});
    const tensor b = floats({0.5, 0.25, 2});
    const tensor on_dev = add(a, a); // valid on the device only
    REQUIRE(on_dev.location() == BACKEND_DEV);
    REQUIRE_FALSE(on_dev.storage()->valid_on(MEMRESOURCE_CPU));
    const int before = fake_kernels::binaries;
    // an op the fake has no kernel for: the inputs come to the host, the result stays there
    const tensor p = mul(on_dev, b);
    CHECK(fake_kernels::binaries == before);
    CHECK(p.location() == MEMRESOURCE_CPU);
    CHECK(values(p) == std::vector<double>{1, -1, 12, -4, 2.5, -24});
    // a dtype the fake has no kernel for (float64 add)
    const tensor d = add(on_dev, a.to(dtype::float64));
    CHECK(fake_kernels::binaries == before);
    CHECK(d.dtype() == dtype::float64);
    CHECK(values(d) == std::vector<double>{3, -6, 9, -12, 15, -18});
    // unary, ternary, reductions, scans, matmul, random, sequences, var: all fall back
    CHECK(values(neg(on_dev)) == std::vector<double>{-2, 4, -6, 8, -10, 12});
    CHECK(values(where(gt(on_dev, scalar(0)), on_dev, scalar(0))) ==
          std::vector<double>{2, 0, 6, 0, 10, 0});
    CHECK(values(fma(on_dev, b, b)) == std::vector<double>{1.5, -0.75, 14, -3.5, 2.75, -22});
    CHECK(values(max(on_dev)) == std::vector<double>{10});
    CHECK(values(argmax(on_dev, 1)) == std::vector<double>{2, 1});
    CHECK(values(cumsum(on_dev, 1)) == std::vector<double>{2, -2, 4, -8, 2, -10});
    // sort and searchsorted are optional entries the fake lacks: they read the device data on
    // the host; nextafter is composed of the backends' elementwise ops
    CHECK(values(sort(on_dev, 1)) == std::vector<double>{-4, 2, 6, -12, -8, 10});
    CHECK(values(argsort(on_dev, 0, true)) == std::vector<double>{0, 1, 0, 1, 0, 1});
    CHECK(values(searchsorted(floats({-5, 0, 5}), on_dev)) ==
          std::vector<double>{2, 1, 3, 0, 3, 0});
    CHECK(values(nextafter(on_dev, on_dev)) == values(on_dev));
    CHECK(values(matmul(on_dev, floats({1, 1, 1}, {3, 1}))) == std::vector<double>{4, -10});
    CHECK(values(arange(scalar(int64_t{3}))) == std::vector<double>{0, 1, 2});
    CHECK(rand({5}, dtype::float32).numel() == 5);
    // var/std have no fused kernel on the fake: they are composed of the backend's ops (here
    // the fake's sum, the CPU's others) and equal the CPU's fused result
    const tensor v_dev = var(on_dev, 1, false, 1);
    set_default_resource(MEMRESOURCE_CPU);
    const tensor v_cpu = var(a.to(dtype::float32) * scalar(2.0f), 1, false, 1);
    set_default_resource(BACKEND_DEV);
    const auto vd = values(v_dev), vc = values(v_cpu);
    REQUIRE(vd.size() == vc.size());
    for (size_t i = 0; i < vd.size(); ++i) CHECK(vd[i] == doctest::Approx(vc[i]));
}

TEST_CASE("one dispatch: in-place ops run where the target is, or on the CPU") {
    everything_on_device f;
    tensor t = add(floats({1, 2, 3}), floats({0, 0, 0})); // a float32 tensor on the device
    REQUIRE(t.location() == BACKEND_DEV);
    const int before = fake_kernels::binaries;
    t += floats({1, 1, 1});
    CHECK(fake_kernels::binaries == before + 1);
    CHECK(t.location() == BACKEND_DEV);
    CHECK(values(t) == std::vector<double>{2, 3, 4});
    // target float32, other float64: the compute dtype (float64) is not the target's, which a
    // canonical backend cannot write in place: the CPU backend does it
    t += tensor::from_vector(std::vector<double>{0.5, 0.5, 0.5});
    CHECK(fake_kernels::binaries == before + 1);
    CHECK(t.storage()->valid_on(MEMRESOURCE_CPU));
    CHECK(values(t) == std::vector<double>{2.5, 3.5, 4.5});
    t *= scalar(2); // no fake kernel
    CHECK(values(t) == std::vector<double>{5, 7, 9});
    clamp_inplace(t, scalar(6), scalar(8));
    CHECK(values(t) == std::vector<double>{6, 7, 8});
    // a unary op in place on device data the fake has no kernel for
    tensor u = add(floats({1, -2}), floats({0, 0}));
    REQUIRE(u.location() == BACKEND_DEV);
    unary_inplace(unary_op::neg, u);
    CHECK(values(u) == std::vector<double>{-1, 2});
    CHECK(u.storage()->valid_on(MEMRESOURCE_CPU));
}

TEST_CASE("one dispatch: a backend without index rows in host memory gets offset arrays") {
    everything_on_device f;
    const tensor t = add(floats({0, 1, 2, 3, 4, 5, 6, 7}, {4, 2}), floats({0, 0}));
    const int g0 = fake_kernels::gathers;
    const tensor g = index(t, {tensor::from_vector(std::vector<int64_t>{3, -4, 1})});
    CHECK(fake_kernels::gathers == g0 + 1);
    CHECK(g.location() == BACKEND_DEV);
    CHECK(values(g) == std::vector<double>{6, 7, 0, 1, 2, 3});
    // an int32 gather runs on the fake too (its index kernels copy bytes of any size), and an
    // assignment with a repeated row keeps the last value
    const tensor ints = tensor::from_vector(std::vector<int32_t>{5, 6, 7});
    const tensor gi = index(ints, {tensor::from_vector(std::vector<int64_t>{2, 0})});
    CHECK(fake_kernels::gathers == g0 + 2);
    CHECK(values(gi) == std::vector<double>{7, 5});
    const int s0 = fake_kernels::scatters;
    index_put(ints, {tensor::from_vector(std::vector<int64_t>{1, 1})},
              tensor::from_vector(std::vector<int32_t>{8, 9}));
    CHECK(fake_kernels::scatters == s0 + 1);
    CHECK(values(ints) == std::vector<double>{5, 9, 7});
}
