// Tests for storage coherence: lock/unlock transitions, nesting and lock errors.
#include "fake_resource.hpp"
#include "test_support.hpp"

#include <isthmus/error.hpp>
#include <isthmus/memory.hpp>
#include <isthmus/storage.hpp>
#include <isthmus/tensor.hpp>

#include <doctest/doctest.h>

#include <string>

using namespace isthmus;
using namespace storage_helpers;
using isthmus_test::registered_fake;

TEST_CASE("storage: a new storage allocates nothing until its first lock") {
    auto s = storage::create(64);
    CHECK(s->nbytes() == 64);
    CHECK(s->copies().empty());
    CHECK(s->valid_resources().empty());
    CHECK(s->lock_count() == 0);
    CHECK(s->pinned_to() == -1);
    CHECK_FALSE(s->copy_on(CPU).allocated);
    CHECK(s->copy_on(CPU).resource == CPU);

    auto a = storage::allocate(32, CPU);
    CHECK(a->valid_resources() == ids{CPU});
    CHECK(a->copy_on(CPU).owned);
    CHECK(a->lock_count() == 0);
}

TEST_CASE("storage: a read lock on a device transfers from the CPU once") {
    registered_fake dev(DEV);
    auto s = storage::create(64);
    write_cpu(*s, 7);
    CHECK(s->valid_resources() == ids{CPU});
    CHECK(dev->bytes_to_device == 0u);

    auto* p = static_cast<const unsigned char*>(s->lock(LOCK_READ, DEV));
    CHECK(dev->allocations == 1);
    CHECK(dev->bytes_to_device == 64u);
    CHECK(s->valid_resources() == ids{CPU, DEV});
    CHECK(s->copy_on(DEV).read_locks == 1);
    CHECK(s->copy_on(DEV).write_locks == 0);
    CHECK(p[0] == 7);
    CHECK(p[63] == 7 + 63);
    s->unlock(LOCK_READ, DEV);
    CHECK(s->copy_on(DEV).read_locks == 0);

    // Both copies are valid now: reading again on either side moves nothing.
    s->lock(LOCK_READ, DEV);
    s->unlock(LOCK_READ, DEV);
    s->lock(LOCK_READ, CPU);
    s->unlock(LOCK_READ, CPU);
    CHECK(dev->bytes_to_device == 64u);
    CHECK(dev->bytes_to_host == 0u);
    CHECK(dev->allocations == 1);
    CHECK(s->valid_resources() == ids{CPU, DEV});
}

TEST_CASE("storage: a write lock invalidates every other copy without a transfer") {
    registered_fake dev(DEV);
    auto s = storage::create(64);
    write_cpu(*s, 1);
    CHECK(holds(*s, DEV, 1));
    REQUIRE(s->valid_resources() == ids{CPU, DEV});

    s->lock(LOCK_WRITE, DEV);
    CHECK(dev->bytes_to_device == 64u); // only the earlier read transferred
    CHECK(s->valid_resources() == ids{DEV});
    CHECK(s->copy_on(CPU).allocated);   // the stale copy stays allocated...
    CHECK_FALSE(s->copy_on(CPU).valid); // ...but invalid
    CHECK(s->copy_on(DEV).write_locks == 1);
    s->unlock(LOCK_WRITE, DEV);

    // Reading on the CPU now transfers back.
    CHECK(holds(*s, CPU, 1));
    CHECK(dev->bytes_to_host == 64u);
    CHECK(s->valid_resources() == ids{CPU, DEV});

    // A write on the CPU invalidates the device copy in turn.
    s->lock(LOCK_WRITE, CPU);
    CHECK(s->valid_resources() == ids{CPU});
    CHECK_FALSE(s->copy_on(DEV).valid);
    s->unlock(LOCK_WRITE, CPU);
}

TEST_CASE("storage: a readwrite lock transfers, then invalidates the other copies") {
    registered_fake dev(DEV);
    auto s = storage::create(48);
    write_cpu(*s, 30);
    auto* p = static_cast<unsigned char*>(s->lock(LOCK_READWRITE, DEV));
    CHECK(dev->bytes_to_device == 48u);
    CHECK(p[5] == 35); // the CPU's bytes arrived
    CHECK(s->valid_resources() == ids{DEV});
    CHECK(s->copy_on(DEV).write_locks == 1); // readwrite counts as a writer
    CHECK(s->copy_on(DEV).read_locks == 0);
    p[5] = 200;
    s->unlock(LOCK_READWRITE, DEV);
    auto* h = static_cast<const unsigned char*>(s->lock(LOCK_READ, CPU));
    CHECK(h[5] == 200);
    CHECK(h[6] == 36);
    s->unlock(LOCK_READ, CPU);
}

TEST_CASE("storage: data survives CPU -> device -> device write -> CPU") {
    registered_fake dev(DEV);
    auto s = storage::create(100);
    write_cpu(*s, 11);
    CHECK(holds(*s, DEV, 11));
    write_on(*s, DEV, 99);
    CHECK(s->valid_resources() == ids{DEV});
    CHECK(holds(*s, CPU, 99)); // the device's bytes, not the stale CPU ones
    CHECK(dev->bytes_to_device == 100u);
    CHECK(dev->bytes_to_host == 100u);
}

TEST_CASE("storage: conflicting locks raise runtime_error and change nothing") {
    registered_fake dev(DEV);
    auto s = storage::create(16);
    write_cpu(*s, 3);

    SUBCASE("write on the CPU while read-locked on the device") {
        s->lock(LOCK_READ, DEV);
        const auto before = s->copies();
        CHECK_ERROR(s->lock(LOCK_WRITE, CPU), runtime_error, "LOCK_WRITE", "cpu", "read-locked",
                    "fake:2");
        CHECK_ERROR(s->lock(LOCK_READWRITE, CPU), runtime_error, "LOCK_READWRITE", "read-locked",
                    "fake:2");
        CHECK(same_states(s->copies(), before));
        CHECK(s->lock_count() == 1);
        // Reading elsewhere is no conflict.
        s->lock(LOCK_READ, CPU);
        s->unlock(LOCK_READ, CPU);
        s->unlock(LOCK_READ, DEV);
        // Once unlocked there, the write goes through.
        s->lock(LOCK_WRITE, CPU);
        s->unlock(LOCK_WRITE, CPU);
        CHECK(s->valid_resources() == ids{CPU});
    }
    SUBCASE("read on the device while write-locked on the CPU") {
        s->lock(LOCK_WRITE, CPU);
        const auto before = s->copies();
        const size_t moved = dev->bytes_to_device;
        CHECK_ERROR(s->lock(LOCK_READ, DEV), runtime_error, "LOCK_READ", "fake:2", "write-locked",
                    "cpu");
        CHECK_ERROR(s->lock(LOCK_WRITE, DEV), runtime_error, "write-locked");
        CHECK_ERROR(s->lock(LOCK_READWRITE, DEV), runtime_error, "write-locked");
        CHECK(same_states(s->copies(), before));
        CHECK(dev->bytes_to_device == moved);
        CHECK(dev->allocations == 0); // nothing was allocated for the refused lock
        CHECK(s->lock_count() == 1);
        s->unlock(LOCK_WRITE, CPU);
        CHECK(holds(*s, DEV, 3));
    }
    SUBCASE("write on the device while write-locked on the device is fine, CPU read is not") {
        s->lock(LOCK_READWRITE, DEV);
        CHECK_ERROR(s->lock(LOCK_READ, CPU), runtime_error, "write-locked", "fake:2");
        CHECK(s->copy_on(CPU).read_locks == 0);
        s->unlock(LOCK_READWRITE, DEV);
    }
    CHECK(s->lock_count() == 0);
}

TEST_CASE("storage: locks on one resource nest") {
    registered_fake dev(DEV);
    auto s = storage::create(8);
    write_cpu(*s, 0);
    void* a = s->lock(LOCK_READ, CPU);
    void* b = s->lock(LOCK_READ, CPU);
    void* c = s->lock(LOCK_WRITE, CPU); // an in-place op reads and writes one storage
    void* d = s->lock(LOCK_READWRITE, CPU);
    CHECK(a == b);
    CHECK(b == c);
    CHECK(c == d);
    CHECK(s->copy_on(CPU).read_locks == 2);
    CHECK(s->copy_on(CPU).write_locks == 2);
    CHECK(s->lock_count() == 4);
    // Unlock in any order.
    s->unlock(LOCK_READ, CPU);
    s->unlock(LOCK_READWRITE, CPU);
    s->unlock(LOCK_READ, CPU);
    s->unlock(LOCK_WRITE, CPU);
    CHECK(s->lock_count() == 0);

    // Nested on the device too, with one transfer.
    s->lock(LOCK_READ, DEV);
    s->lock(LOCK_READ, DEV);
    CHECK(s->copy_on(DEV).read_locks == 2);
    CHECK(dev->bytes_to_device == 8u);
    s->unlock(LOCK_READ, DEV);
    s->unlock(LOCK_READ, DEV);

    // storage_lock releases in its destructor and can be moved.
    {
        storage_lock l1(s, LOCK_READ, CPU);
        CHECK(l1.data() == a);
        storage_lock l2(std::move(l1));
        CHECK(l2.data() == a);
        CHECK(s->lock_count() == 1);
    }
    CHECK(s->lock_count() == 0);
}

TEST_CASE("storage: unlock without a matching lock raises runtime_error") {
    registered_fake dev(DEV);
    auto s = storage::create(8);
    CHECK_ERROR(s->unlock(LOCK_READ, CPU), runtime_error, "unlock(LOCK_READ, cpu)",
                "without a matching lock");
    CHECK(s->copies().empty());

    s->lock(LOCK_READ, CPU);
    s->unlock(LOCK_READ, CPU);
    // Double unlock.
    CHECK_ERROR(s->unlock(LOCK_READ, CPU), runtime_error, "double unlock");
    CHECK(s->copy_on(CPU).read_locks == 0);

    // Wrong mode: the read lock stays held.
    s->lock(LOCK_READ, CPU);
    CHECK_ERROR(s->unlock(LOCK_WRITE, CPU), runtime_error, "LOCK_WRITE", "without a matching");
    CHECK_ERROR(s->unlock(LOCK_READWRITE, CPU), runtime_error, "LOCK_READWRITE");
    CHECK(s->copy_on(CPU).read_locks == 1);
    // Wrong resource: the device has no lock (and no copy).
    CHECK_ERROR(s->unlock(LOCK_READ, DEV), runtime_error, "fake:2");
    CHECK(s->copy_on(CPU).read_locks == 1);
    CHECK_FALSE(s->copy_on(DEV).allocated);
    s->unlock(LOCK_READ, CPU);
    CHECK(s->lock_count() == 0);

    // A write lock is not released by a read unlock either.
    s->lock(LOCK_WRITE, CPU);
    CHECK_ERROR(s->unlock(LOCK_READ, CPU), runtime_error, "LOCK_READ");
    CHECK(s->copy_on(CPU).write_locks == 1);
    s->unlock(LOCK_WRITE, CPU);
}

TEST_CASE("storage: an invalid lock mode raises value_error") {
    auto s = storage::create(8);
    for (int m : {0, 4, -1, 7}) {
        CAPTURE(m);
        const auto mode = static_cast<lock_mode>(m);
        const std::string given = "invalid lock mode " + std::to_string(m);
        CHECK_ERROR(s->lock(mode, CPU), value_error, given, "LOCK_READ=1");
        CHECK_ERROR(s->unlock(mode, CPU), value_error, "invalid lock mode");
    }
    CHECK(s->copies().empty());
    CHECK(s->lock_count() == 0);
}
