// Tests for storage coherence: lock/unlock transitions, errors, eviction, pinning, threads.
#include "fake_resource.hpp"

#include <isthmus/error.hpp>
#include <isthmus/memory.hpp>
#include <isthmus/storage.hpp>
#include <isthmus/tensor.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace isthmus;
using isthmus_test::registered_fake;

namespace {

constexpr resource_id CPU = MEMRESOURCE_CPU;
constexpr resource_id DEV = MEMRESOURCE_DEVICE2;

// Writes `n` bytes of a pattern derived from `seed` through a CPU write lock.
void write_cpu(storage& s, unsigned char seed) {
    auto* p = static_cast<unsigned char*>(s.lock(LOCK_WRITE, CPU));
    for (size_t i = 0; i < s.nbytes(); ++i) p[i] = static_cast<unsigned char>(seed + i);
    s.unlock(LOCK_WRITE, CPU);
}

// Writes the pattern through a write lock on `r` (the fake device's memory is host memory).
void write_on(storage& s, resource_id r, unsigned char seed) {
    auto* p = static_cast<unsigned char*>(s.lock(LOCK_WRITE, r));
    for (size_t i = 0; i < s.nbytes(); ++i) p[i] = static_cast<unsigned char>(seed + i);
    s.unlock(LOCK_WRITE, r);
}

// True when the copy on `r` (read-locked for the check) holds the pattern of `seed`.
bool holds(storage& s, resource_id r, unsigned char seed) {
    auto* p = static_cast<const unsigned char*>(s.lock(LOCK_READ, r));
    bool ok = true;
    for (size_t i = 0; i < s.nbytes(); ++i) ok &= p[i] == static_cast<unsigned char>(seed + i);
    s.unlock(LOCK_READ, r);
    return ok;
}

bool same_states(const std::vector<copy_state>& a, const std::vector<copy_state>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i].resource != b[i].resource || a[i].allocated != b[i].allocated ||
            a[i].valid != b[i].valid || a[i].owned != b[i].owned ||
            a[i].read_locks != b[i].read_locks || a[i].write_locks != b[i].write_locks)
            return false;
    return true;
}

using ids = std::vector<resource_id>;

} // namespace

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

TEST_CASE("storage: unknown and unsupported resources") {
    auto s = storage::create(8);
    write_cpu(*s, 5);
    const auto before = s->copies();
    CHECK_ERROR(s->lock(LOCK_READ, 7), value_error, "unknown memory resource 7");
    CHECK_ERROR(s->lock(LOCK_WRITE, -3), value_error, "unknown memory resource -3");
    CHECK_ERROR(s->lock(LOCK_READ, 1000), value_error, "unknown memory resource 1000");
    CHECK_ERROR(s->lock(LOCK_READ, MEMRESOURCE_SINGLE_CUDA), value_error, "no device");
    CHECK_ERROR(s->lock(LOCK_READ, MEMRESOURCE_SINGLE_OPENCL), not_implemented_error, "OpenCL",
                "not supported");
    CHECK_ERROR(s->unlock(LOCK_READ, MEMRESOURCE_SINGLE_OPENCL), not_implemented_error, "OpenCL");
    CHECK_ERROR(s->pin(MEMRESOURCE_SINGLE_OPENCL), not_implemented_error, "OpenCL");
    CHECK_ERROR(s->evict(9), value_error, "unknown memory resource 9");
    CHECK(same_states(s->copies(), before));
    CHECK(s->pinned_to() == -1);
    CHECK_ERROR(get_resource(12), value_error, "unknown memory resource 12");
    CHECK(find_resource(12) == nullptr);
    CHECK(find_resource(-1) == nullptr);
    CHECK(find_resource(CPU) != nullptr);
    CHECK(get_resource(CPU).host_accessible());
    CHECK(get_resource(CPU).name() == "cpu");
}

TEST_CASE("storage: MEMRESOURCE_DEVICE0 resolves to the default resource") {
    registered_fake dev(DEV);
    REQUIRE(default_resource() == CPU);
    CHECK(resolve_resource(MEMRESOURCE_DEVICE0) == CPU);
    auto s = storage::create(8);
    s->lock(LOCK_WRITE, MEMRESOURCE_DEVICE0);
    CHECK(s->copy_on(CPU).write_locks == 1);
    s->unlock(LOCK_WRITE, MEMRESOURCE_DEVICE0);

    set_default_resource(DEV);
    CHECK(default_resource() == DEV);
    CHECK(resolve_resource(MEMRESOURCE_DEVICE0) == DEV);
    CHECK(&get_resource(MEMRESOURCE_DEVICE0) == dev.res.get());
    s->lock(LOCK_READ, MEMRESOURCE_DEVICE0);
    CHECK(s->copy_on(DEV).read_locks == 1);
    s->unlock(LOCK_READ, DEV); // the resolved id and DEVICE0 name the same lock
    CHECK(s->lock_count() == 0);

    // A bad default is refused and the old one kept.
    CHECK_ERROR(set_default_resource(11), value_error, "unknown memory resource 11");
    CHECK(default_resource() == DEV);
    set_default_resource(CPU);
    CHECK(default_resource() == CPU);

    // Unregistering the default device falls back to the CPU.
    set_default_resource(DEV);
    {
        auto other = std::make_shared<isthmus_test::fake_resource>(MEMRESOURCE_DEVICE3);
        register_resource(other);
        set_default_resource(MEMRESOURCE_DEVICE3);
        unregister_resource(MEMRESOURCE_DEVICE3);
        CHECK(default_resource() == CPU);
    }
}

TEST_CASE("storage: the resource registry refuses bad registrations") {
    registered_fake dev(DEV);
    const auto dup = std::make_shared<isthmus_test::fake_resource>(DEV);
    CHECK_ERROR(register_resource(dup), value_error, "id 2", "already taken", "fake:2");
    CHECK(find_resource(DEV) == dev.res.get()); // the first one stays
    CHECK_ERROR(register_resource(std::make_shared<isthmus_test::fake_resource>(CPU)), value_error,
                "id 1", "not a device slot");
    CHECK_ERROR(
        register_resource(std::make_shared<isthmus_test::fake_resource>(max_resource_id + 1)),
        value_error, "not a device slot");
    CHECK_ERROR(register_resource(nullptr), value_error, "null");
    CHECK_ERROR(unregister_resource(20), value_error, "no resource has id 20");
    CHECK_ERROR(unregister_resource(CPU), value_error, "not a device slot");
    CHECK(find_resource(CPU) != nullptr);
}

TEST_CASE("storage: a storage keeps an unregistered resource alive for its copies") {
    auto s = storage::create(32);
    std::weak_ptr<isthmus_test::fake_resource> weak;
    {
        registered_fake dev(DEV);
        weak = dev.res;
        write_on(*s, DEV, 4);
    }
    REQUIRE_FALSE(weak.expired()); // the storage's copy holds the resource object
    CHECK(weak.lock()->live() == 32u);
    s.reset();
    CHECK(weak.expired()); // the storage freed its copy, then released the resource
}

TEST_CASE("storage: destroying a storage frees its copies") {
    registered_fake dev(DEV);
    {
        auto s = storage::create(40);
        write_cpu(*s, 0);
        CHECK(holds(*s, DEV, 0));
        CHECK(dev->live() == 40u);
    }
    CHECK(dev->live() == 0u);
    CHECK(dev->allocations == 1);
    CHECK(dev->frees == 1);
}

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

TEST_CASE("storage: concurrent read locks from several threads") {
    registered_fake dev(DEV);
    auto s = storage::create(1024);
    write_cpu(*s, 17);
    std::atomic<int> bad{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
        threads.emplace_back([&, t] {
            const resource_id r = t % 2 ? CPU : DEV;
            for (int i = 0; i < 500; ++i) {
                auto* p = static_cast<const unsigned char*>(s->lock(LOCK_READ, r));
                if (p[i % 1024] != static_cast<unsigned char>(17 + i % 1024)) ++bad;
                s->unlock(LOCK_READ, r);
            }
        });
    for (auto& th : threads) th.join();
    CHECK(bad == 0);
    CHECK(s->lock_count() == 0);
    CHECK(dev->bytes_to_device == 1024u); // one transfer however many readers raced for it
    CHECK(dev->allocations == 1);
}

TEST_CASE("storage: concurrent storages and eviction from several threads") {
    constexpr size_t n = 256;
    registered_fake dev(DEV, 4 * n);
    std::atomic<int> bad{0}, oom{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            std::vector<std::shared_ptr<storage>> mine;
            for (int k = 0; k < 4; ++k) mine.push_back(storage::create(n));
            for (int i = 0; i < 50; ++i) {
                auto& s = *mine[static_cast<size_t>(i % 4)];
                const auto seed = static_cast<unsigned char>(t * 50 + i);
                try {
                    write_on(s, DEV, seed);
                    if (!holds(s, CPU, seed)) ++bad;
                } catch (const memory_error&) {
                    ++oom; // every other copy was locked at that instant
                }
            }
        });
    for (auto& th : threads) th.join();
    CHECK(bad == 0);
    // Each thread locks at most one device copy at a time, so some copy is always evictable:
    // no allocation may fail (even when another thread takes the memory just freed).
    CHECK(oom == 0);
    CHECK(dev->live() == 0u); // every storage is gone, every copy freed
    CHECK(dev->allocations - dev->frees == 0);
}
