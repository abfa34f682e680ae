// Test-only helpers: a memory resource posing as a device (capacity, counters), error checks.
#pragma once

#include <isthmus/memory.hpp>

#include <doctest/doctest.h>

#include "error_text.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace isthmus_test {

/// Host memory that the storage layer must treat as device memory: host_accessible() is false,
/// so every transfer goes through copy_from_host / copy_to_host and is counted. allocate returns
/// nullptr when the live bytes would exceed the capacity, which drives eviction.
struct fake_resource : isthmus::memory_resource {
    explicit fake_resource(isthmus::resource_id id, size_t capacity = SIZE_MAX)
        : id_(id), capacity(capacity) {}

    isthmus::resource_id id() const noexcept override { return id_; }
    std::string name() const override { return "fake:" + std::to_string(id_); }
    bool host_accessible() const noexcept override { return false; }

    void* allocate(size_t nbytes) noexcept override {
        std::lock_guard lk(mu);
        if (live_bytes + nbytes > capacity) {
            ++failed_allocations;
            return nullptr;
        }
        void* p = std::malloc(nbytes == 0 ? 1 : nbytes);
        if (!p) return nullptr;
        live_bytes += nbytes;
        ++allocations;
        return p;
    }
    void deallocate(void* p, size_t nbytes) noexcept override {
        std::lock_guard lk(mu);
        std::free(p);
        live_bytes -= nbytes;
        ++frees;
    }
    void copy_from_host(void* dst, const void* src, size_t nbytes) override {
        std::memcpy(dst, src, nbytes);
        bytes_to_device += nbytes;
    }
    void copy_to_host(void* dst, const void* src, size_t nbytes) override {
        std::memcpy(dst, src, nbytes);
        bytes_to_host += nbytes;
    }
    void copy_within(void* dst, const void* src, size_t nbytes) override {
        std::memmove(dst, src, nbytes);
        bytes_within += nbytes;
    }

    isthmus::resource_id id_;
    size_t capacity;
    std::mutex mu;
    size_t live_bytes = 0; // guarded by mu
    std::atomic<int> allocations{0};
    std::atomic<int> frees{0};
    std::atomic<int> failed_allocations{0};
    std::atomic<size_t> bytes_to_device{0};
    std::atomic<size_t> bytes_to_host{0};
    std::atomic<size_t> bytes_within{0};

    size_t live() {
        std::lock_guard lk(mu);
        return live_bytes;
    }
};

/// Registers a fake_resource for the lifetime of the object (RAII); unregisters it afterwards.
/// Storages still holding copies there keep the resource object alive (shared_ptr).
struct registered_fake {
    explicit registered_fake(isthmus::resource_id id = isthmus::MEMRESOURCE_DEVICE2,
                             size_t capacity = SIZE_MAX)
        : res(std::make_shared<fake_resource>(id, capacity)) {
        isthmus::register_resource(res);
    }
    ~registered_fake() { isthmus::unregister_resource(res->id()); }
    registered_fake(const registered_fake&) = delete;
    registered_fake& operator=(const registered_fake&) = delete;

    isthmus::resource_id id() const { return res->id(); }
    fake_resource* operator->() const { return res.get(); }

    std::shared_ptr<fake_resource> res;
};

} // namespace isthmus_test

/// Checks that `expr` throws exactly the typed error E and that its message contains every
/// string that follows (the key words a user needs: what was expected, what was given).
#define CHECK_ERROR(expr, E, ...)                                                                  \
    do {                                                                                           \
        CHECK_THROWS_AS(expr, E);                                                                  \
        const std::string error_msg_ = ::error_of<E>([&] { (void)(expr); });                       \
        CAPTURE(error_msg_);                                                                       \
        for (std::string_view part_ : std::initializer_list<std::string_view>{__VA_ARGS__})        \
            CHECK_MESSAGE(::contains(error_msg_, part_), "message lacks: " << part_);              \
    } while (0)
