// Tests for storage under concurrency: locks and eviction from several threads.
#include "fake_resource.hpp"
#include "test_support.hpp"

#include <isthmus/error.hpp>
#include <isthmus/memory.hpp>
#include <isthmus/storage.hpp>
#include <isthmus/tensor.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

using namespace isthmus;
using namespace storage_helpers;
using isthmus_test::registered_fake;

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
