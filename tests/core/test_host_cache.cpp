// The caching host allocator: reuse, alignment, the byte limit and emptying.
#include "isthmus/memory.hpp"
#include "isthmus/tensor.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>

using namespace isthmus;

TEST_CASE("host cache: a freed block is reused for the same size class") {
    memory_resource& cpu = get_resource(MEMRESOURCE_CPU);
    set_host_cache_limit(size_t{1} << 30);
    empty_host_cache();
    const host_cache_stats before = host_cache_info();
    void* p = cpu.allocate(100000);
    REQUIRE(p != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(p) % 64 == 0);
    std::memset(p, 1, 100000); // the whole requested size is usable
    cpu.deallocate(p, 100000);
    CHECK(host_cache_info().cached_bytes >= 100000);
    void* q = cpu.allocate(99000); // same class (slack at most 25%)
    CHECK(q == p);
    CHECK(host_cache_info().hits == before.hits + 1);
    cpu.deallocate(q, 99000);
    CHECK(empty_host_cache() >= 100000);
    CHECK(host_cache_info().cached_bytes == 0);
}

TEST_CASE("host cache: every size is served, aligned, and sizes of other classes differ") {
    memory_resource& cpu = get_resource(MEMRESOURCE_CPU);
    for (size_t n : {size_t{0}, size_t{1}, size_t{255}, size_t{256}, size_t{257}, size_t{4096},
                     size_t{5000}, size_t{1} << 20, (size_t{1} << 22) + 3}) {
        void* p = cpu.allocate(n);
        REQUIRE(p != nullptr);
        CHECK(reinterpret_cast<uintptr_t>(p) % 64 == 0);
        if (n) std::memset(p, 0xab, n);
        cpu.deallocate(p, n);
    }
    void* a = cpu.allocate(1000);
    cpu.deallocate(a, 1000);
    void* b = cpu.allocate(4000); // another class: not the 1000-byte block
    CHECK(b != a);
    cpu.deallocate(b, 4000);
    empty_host_cache();
}

TEST_CASE("host cache: a limit of 0 turns caching off and a lower limit empties the cache") {
    memory_resource& cpu = get_resource(MEMRESOURCE_CPU);
    set_host_cache_limit(size_t{1} << 30);
    void* p = cpu.allocate(1 << 16);
    cpu.deallocate(p, 1 << 16);
    CHECK(host_cache_info().cached_bytes > 0);
    set_host_cache_limit(0);
    CHECK(host_cache_info().cached_bytes == 0);
    CHECK(host_cache_info().limit_bytes == 0);
    void* q = cpu.allocate(1 << 16);
    cpu.deallocate(q, 1 << 16);
    CHECK(host_cache_info().cached_bytes == 0);
    set_host_cache_limit(size_t{1} << 30);
}

TEST_CASE("host cache: tensors recycle their outputs and stay correct") {
    set_host_cache_limit(size_t{1} << 30);
    for (int i = 0; i < 5; ++i) {
        tensor t = tensor::empty({1000}, dtype::float32, MEMRESOURCE_CPU);
        t.fill(static_cast<double>(i));
        const auto v = t.to_vector<float>();
        CHECK(v.front() == static_cast<float>(i));
        CHECK(v.back() == static_cast<float>(i));
    }
    CHECK(host_cache_info().hits > 0);
}
