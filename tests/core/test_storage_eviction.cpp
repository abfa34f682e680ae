// Tests for storage eviction: least-recently-used copies, stale copies, locked copies.
#include "fake_resource.hpp"
#include "test_support.hpp"

#include <isthmus/error.hpp>
#include <isthmus/memory.hpp>
#include <isthmus/storage.hpp>
#include <isthmus/tensor.hpp>

#include <doctest/doctest.h>

using namespace isthmus;
using namespace storage_helpers;
using isthmus_test::registered_fake;

TEST_CASE("storage: a full device evicts the least recently used unlocked copy to the CPU") {
    constexpr size_t n = 256;
    registered_fake dev(DEV, 2 * n);
    auto s0 = storage::create(n), s1 = storage::create(n), s2 = storage::create(n);
    write_on(*s0, DEV, 10);
    write_on(*s1, DEV, 20);
    CHECK(dev->live() == 2 * n);
    // Touch s0 so that s1 becomes the least recently used.
    CHECK(holds(*s0, DEV, 10));
    CHECK(dev->bytes_to_host == 0u);

    write_on(*s2, DEV, 30); // does not fit: s1's copy moves to the CPU
    CHECK(dev->failed_allocations == 1);
    CHECK(dev->frees == 1);
    CHECK(dev->bytes_to_host == n); // s1's only valid copy was saved first
    CHECK(dev->live() == 2 * n);
    CHECK_FALSE(s1->copy_on(DEV).allocated);
    CHECK(s1->valid_resources() == ids{CPU});
    CHECK(s0->valid_resources() == ids{DEV});
    CHECK(s2->valid_resources() == ids{DEV});
    CHECK(holds(*s1, CPU, 20)); // the data is intact

    // Reading s1 on the device again evicts the LRU among s0 and s2 (s0: touched earlier).
    CHECK(holds(*s1, DEV, 20));
    CHECK_FALSE(s0->copy_on(DEV).allocated);
    CHECK(s2->copy_on(DEV).allocated);
    CHECK(holds(*s0, CPU, 10));
    CHECK(holds(*s2, DEV, 30));
}

TEST_CASE("storage: eviction drops a stale copy without a transfer") {
    constexpr size_t n = 64;
    registered_fake dev(DEV, n);
    auto s0 = storage::create(n), s1 = storage::create(n);
    write_cpu(*s0, 1);
    CHECK(holds(*s0, DEV, 1)); // valid on both: the device copy is a cache
    write_on(*s1, DEV, 2);     // evicts s0's device copy; the CPU already has the data
    CHECK(dev->bytes_to_host == 0u);
    CHECK(s0->copies().size() == 1);
    CHECK(s0->valid_resources() == ids{CPU});
    CHECK(holds(*s0, CPU, 1));
}

TEST_CASE("storage: locked copies are never evicted; if all are locked allocation fails") {
    constexpr size_t n = 128;
    registered_fake dev(DEV, 2 * n);
    auto s0 = storage::create(n), s1 = storage::create(n), s2 = storage::create(n);
    write_on(*s0, DEV, 1);
    write_on(*s1, DEV, 2);
    s0->lock(LOCK_READ, DEV);
    CHECK(holds(*s1, DEV, 2)); // s0 is now the least recently used, but locked: s1 goes
    write_on(*s2, DEV, 3);
    CHECK(s0->copy_on(DEV).allocated);
    CHECK_FALSE(s1->copy_on(DEV).allocated);

    s2->lock(LOCK_READ, DEV);
    // Every copy on the device is locked now: a new allocation fails and nothing changes.
    auto s3 = storage::create(n);
    write_cpu(*s3, 4);
    const auto st0 = s0->copies(), st2 = s2->copies(), st3 = s3->copies();
    const int frees = dev->frees, allocs = dev->allocations;
    CHECK_ERROR(s3->lock(LOCK_READ, DEV), memory_error, "out of memory on fake:2", "128 bytes",
                "0 bytes of unlocked copies were evicted");
    CHECK_ERROR(s3->lock(LOCK_WRITE, DEV), memory_error, "out of memory");
    CHECK(same_states(s0->copies(), st0));
    CHECK(same_states(s2->copies(), st2));
    CHECK(same_states(s3->copies(), st3));
    CHECK(dev->frees == frees);
    CHECK(dev->allocations == allocs);
    CHECK(holds(*s3, CPU, 4));
    CHECK(holds(*s0, DEV, 1));
    CHECK(holds(*s2, DEV, 3));

    // Unlocking makes room again.
    s0->unlock(LOCK_READ, DEV);
    CHECK(holds(*s3, DEV, 4));
    CHECK_FALSE(s0->copy_on(DEV).allocated);
    CHECK(holds(*s0, CPU, 1));
    s2->unlock(LOCK_READ, DEV);
}

TEST_CASE("storage: evict and evict_from by hand") {
    constexpr size_t n = 32;
    registered_fake dev(DEV);
    auto s = storage::create(n);
    write_on(*s, DEV, 9);
    CHECK(s->evict(CPU)); // no copy there: trivially done
    CHECK(s->valid_resources() == ids{DEV});
    s->lock(LOCK_READ, DEV);
    CHECK_FALSE(s->evict(DEV)); // locked
    s->unlock(LOCK_READ, DEV);
    CHECK(s->evict(DEV));
    CHECK(s->valid_resources() == ids{CPU});
    CHECK(holds(*s, CPU, 9));
    CHECK(s->evict(DEV));       // nothing there: trivially done
    CHECK_FALSE(s->evict(CPU)); // host memory is where evicted data goes; never evicted
    CHECK(s->valid_on(CPU));

    auto a = storage::create(n), b = storage::create(n);
    write_on(*a, DEV, 1);
    write_on(*b, DEV, 2);
    CHECK(evict_from(DEV, 1) == n); // stops once enough was freed: the LRU (a) only
    CHECK_FALSE(a->copy_on(DEV).allocated);
    CHECK(b->copy_on(DEV).allocated);
    CHECK(evict_from(DEV, SIZE_MAX) == n);
    CHECK(dev->live() == 0u);
    CHECK(holds(*a, CPU, 1));
    CHECK(holds(*b, CPU, 2));
    CHECK(evict_from(DEV, 1) == 0u);
}
