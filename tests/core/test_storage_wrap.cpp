// Tests for wrapped and pinned storage memory: release, write-back, eviction, pin counts.
#include "fake_resource.hpp"
#include "test_support.hpp"

#include <isthmus/error.hpp>
#include <isthmus/memory.hpp>
#include <isthmus/storage.hpp>
#include <isthmus/tensor.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

using namespace isthmus;
using namespace storage_helpers;
using isthmus_test::registered_fake;

TEST_CASE("storage: wrapped memory's release runs exactly once, after the last reference") {
    std::vector<float> data{1, 2, 3, 4, 5, 6};
    int calls = 0;
    SUBCASE("storage references") {
        auto s = storage::wrap(data.data(), data.size() * 4, CPU, [&] { ++calls; });
        CHECK(s->pinned_to() == CPU);
        CHECK_FALSE(s->copy_on(CPU).owned);
        CHECK(s->valid_on(CPU));
        auto s2 = s;
        s.reset();
        CHECK(calls == 0);
        s2.reset();
        CHECK(calls == 1);
    }
    SUBCASE("views outlive the original tensor") {
        tensor t = tensor::wrap(data.data(), dtype::float32, {2, 3}, {}, CPU, [&] { ++calls; });
        CHECK(t.at<float>({1, 2}) == 6);
        tensor col = t.select(1, 1);
        tensor row = t.slice(0, 1, 2);
        t = tensor();
        CHECK(calls == 0);
        CHECK(col.to_vector<float>() == std::vector<float>{2, 5});
        col = tensor();
        CHECK(calls == 0);
        row.fill(0); // writes go to the foreign memory itself
        CHECK(data == std::vector<float>{1, 2, 3, 0, 0, 0});
        row = tensor();
        CHECK(calls == 1);
    }
    SUBCASE("an empty release is allowed") {
        auto s = storage::wrap(data.data(), 8, CPU, nullptr);
        s.reset();
    }
    CHECK(data.size() == 6);
    CHECK(calls <= 1);
    CHECK_ERROR(storage::wrap(nullptr, 8, CPU, [&] { ++calls; }), value_error, "null pointer",
                "8 bytes");
    CHECK_ERROR(storage::wrap(data.data(), 8, 13, [&] { ++calls; }), value_error,
                "unknown memory resource 13");
    CHECK(calls <= 1); // a refused wrap does not call release
}

TEST_CASE("storage: a write elsewhere is written back into wrapped host memory on unlock") {
    registered_fake dev(DEV);
    std::vector<int32_t> data{1, 2, 3, 4};
    int calls = 0;
    {
        auto s = storage::wrap(data.data(), 16, CPU, [&] { ++calls; });
        SUBCASE("write lock") {
            auto* p = static_cast<int32_t*>(s->lock(LOCK_WRITE, DEV));
            CHECK(dev->bytes_to_device == 0u);
            for (int i = 0; i < 4; ++i) p[i] = 10 * (i + 1);
            CHECK(data == std::vector<int32_t>{1, 2, 3, 4}); // not yet: still locked
            CHECK_FALSE(s->valid_on(CPU));
            s->unlock(LOCK_WRITE, DEV);
            CHECK(data == std::vector<int32_t>{10, 20, 30, 40});
            CHECK(dev->bytes_to_host == 16u);
            // See Note [copies away from a pin]: the device copy is trusted only while locked.
            CHECK(s->valid_resources() == ids{CPU});
        }
        SUBCASE("readwrite lock, nested") {
            auto* p = static_cast<int32_t*>(s->lock(LOCK_READWRITE, DEV));
            CHECK(p[2] == 3);
            s->lock(LOCK_WRITE, DEV);
            p[2] = -3;
            s->unlock(LOCK_WRITE, DEV);
            CHECK(data[2] == 3); // one writer still holds the device copy
            s->unlock(LOCK_READWRITE, DEV);
            CHECK(data == std::vector<int32_t>{1, 2, -3, 4});
        }
        SUBCASE("reads elsewhere copy and leave the pinned memory alone") {
            CHECK(static_cast<const int32_t*>(s->lock(LOCK_READ, DEV))[3] == 4);
            s->unlock(LOCK_READ, DEV);
            CHECK(dev->bytes_to_host == 0u);
            CHECK(s->valid_resources() == ids{CPU});
            // The foreign side writes its memory; the next read elsewhere sees it.
            data[3] = 44;
            CHECK(static_cast<const int32_t*>(s->lock(LOCK_READ, DEV))[3] == 44);
            CHECK(s->valid_resources() == ids{CPU, DEV}); // valid while locked
            s->unlock(LOCK_READ, DEV);
            CHECK(dev->bytes_to_device == 32u); // transferred once per lock
        }
        CHECK(s->pinned_to() == CPU);
        CHECK(s->lock(LOCK_READ, CPU) == data.data());
        s->unlock(LOCK_READ, CPU);
    }
    CHECK(calls == 1);
}

TEST_CASE("storage: a wrapped or pinned copy is never evicted") {
    constexpr size_t n = 64;
    registered_fake dev(DEV, 2 * n);
    // Host memory standing for foreign device memory (a torch CUDA tensor, say).
    std::vector<unsigned char> foreign(n);
    for (size_t i = 0; i < n; ++i) foreign[i] = static_cast<unsigned char>(42 + i);
    const auto original = foreign;
    int calls = 0;
    auto w = storage::wrap(foreign.data(), n, DEV, [&] { ++calls; });
    CHECK(w->pinned_to() == DEV);
    CHECK_FALSE(w->evict(DEV));
    CHECK(evict_from(DEV, SIZE_MAX) == 0u);
    CHECK(w->copy_on(DEV).allocated);

    auto p = storage::create(n);
    write_on(*p, DEV, 5);
    p->pin(DEV);
    CHECK_FALSE(p->evict(DEV));
    CHECK(evict_from(DEV, SIZE_MAX) == 0u);

    // The device is full (one owned pinned copy; the wrapped one costs the fake nothing, so
    // fill the rest) and nothing can move.
    auto q = storage::create(n);
    write_on(*q, DEV, 6);
    q->pin(DEV);
    auto r = storage::create(n);
    CHECK_ERROR(r->lock(LOCK_WRITE, DEV), memory_error, "out of memory on fake:2");
    CHECK(r->copies().empty());
    CHECK(w->valid_on(DEV));
    CHECK(p->valid_on(DEV));
    q->unpin(DEV);
    write_on(*r, DEV, 7); // q's copy is movable again
    CHECK_FALSE(q->copy_on(DEV).allocated);
    CHECK(holds(*q, CPU, 6));
    CHECK(holds(*w, CPU, 42)); // reading a wrapped device buffer on the CPU copies it
    CHECK(calls == 0);
    w.reset();
    CHECK(calls == 1);
    CHECK(foreign == original);
}

TEST_CASE("storage: pin and unpin count, and refuse mismatches") {
    registered_fake dev(DEV);
    auto s = storage::create(24);
    write_cpu(*s, 8);
    s->pin(DEV);
    CHECK(s->pinned_to() == DEV);
    // Pinning makes the pinned copy valid, and the unlocked copies elsewhere invalid (the
    // foreign side may write the pinned copy from now on).
    CHECK(s->valid_resources() == ids{DEV});
    CHECK(dev->bytes_to_device == 24u);
    s->pin(DEV);
    s->unpin(DEV);
    CHECK(s->pinned_to() == DEV);

    // A pin on a second resource is refused while the first holds.
    CHECK_ERROR(s->pin(CPU), runtime_error, "cannot pin to cpu", "already pinned to fake:2");
    CHECK(s->pinned_to() == DEV);
    CHECK_ERROR(s->unpin(CPU), runtime_error, "unpin(cpu)", "without a matching pin");
    CHECK(s->pinned_to() == DEV);

    s->unpin(DEV);
    CHECK(s->pinned_to() == -1);
    CHECK_ERROR(s->unpin(DEV), runtime_error, "unpin(fake:2) without a matching pin");
    CHECK(s->pinned_to() == -1);

    // Pinning is refused while another resource holds a write lock.
    s->lock(LOCK_WRITE, CPU);
    CHECK_ERROR(s->pin(DEV), runtime_error, "cannot pin", "write-locked on cpu");
    CHECK(s->pinned_to() == -1);
    s->unlock(LOCK_WRITE, CPU);

    // Wrapped storage: the wrap's own pin cannot be released by hand.
    std::vector<char> buf(8);
    auto w = storage::wrap(buf.data(), 8, CPU, nullptr);
    CHECK_ERROR(w->unpin(CPU), runtime_error, "without a matching pin");
    CHECK(w->pinned_to() == CPU);
    w->pin(CPU);
    w->unpin(CPU);
    CHECK(w->pinned_to() == CPU);
    CHECK_ERROR(w->pin(DEV), runtime_error, "already pinned to cpu");
    CHECK_FALSE(w->copy_on(DEV).allocated);
}
