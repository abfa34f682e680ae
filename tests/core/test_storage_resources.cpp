// Tests for storage resources: unknown ids, the default device, the registry, freeing.
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
