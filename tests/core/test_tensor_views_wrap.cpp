// Tests for tensors over existing storage and devices: wrap, view_as, from_vector, locks.
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
