// Storage: one byte buffer that may have copies on several memory resources (the coherence model).
#pragma once

#include "isthmus/export.hpp"
#include "isthmus/memory.hpp"
#include "isthmus/small_vector.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace isthmus {

/// How a lock will use the memory. The values match the PyQuasar manual's LOCK_* constants.
enum class lock_mode : int { read = 1, write = 2, readwrite = 3 };
inline constexpr lock_mode LOCK_READ = lock_mode::read;
inline constexpr lock_mode LOCK_WRITE = lock_mode::write;
inline constexpr lock_mode LOCK_READWRITE = lock_mode::readwrite;

constexpr bool reads(lock_mode m) {
    return (static_cast<int>(m) & 1) != 0;
}
constexpr bool writes(lock_mode m) {
    return (static_cast<int>(m) & 2) != 0;
}

/// What a storage reports about its copy on one resource (for inspection and tests).
struct copy_state {
    resource_id resource = MEMRESOURCE_CPU;
    bool allocated = false;
    bool valid = false;
    bool owned = true;
    int read_locks = 0;
    int write_locks = 0;
};

namespace detail {

/// A mutex for short critical sections: one atomic exchange to lock and a plain store to
/// unlock; a thread that finds it held spins briefly, then yields until it is free.
///
/// Note [storage mutex]
/// ~~~~~~~~~~~~~~~~~~~~
/// Every op locks and unlocks each operand's storage, so the storage's mutex is on the small-op
/// path several times per op. std::mutex costs two atomic read-modify-writes and two library calls
/// per lock/unlock pair; this costs one atomic exchange. Critical sections are short (slot
/// bookkeeping) except transfers between resources, which a waiter sits out by yielding.
class spin_mutex {
public:
    void lock() noexcept {
        if (!held_.exchange(true, std::memory_order_acquire)) return;
        lock_slow();
    }
    bool try_lock() noexcept {
        return !held_.load(std::memory_order_relaxed) &&
               !held_.exchange(true, std::memory_order_acquire);
    }
    void unlock() noexcept { held_.store(false, std::memory_order_release); }

private:
    void lock_slow() noexcept;
    std::atomic<bool> held_{false};
};

} // namespace detail

/// A buffer of `nbytes` bytes with copies on one or more memory resources.
///
/// Note [coherence]
/// ~~~~~~~~~~~~~~~~
/// Each copy has a valid bit. `lock(read, r)` makes the copy on r valid, transferring from any
/// valid copy; `lock(write, r)` allocates on r without transfer and invalidates the other copies;
/// `lock(readwrite, r)` does both. A locked copy is never moved or freed. A lock that would
/// invalidate or read past a lock elsewhere raises runtime_error at once; it never waits. Locks on
/// the same resource nest freely (an in-place op reads and writes one storage). A storage with no
/// valid copy yet (fresh, uninitialised) reads as whatever the allocation holds.
///
/// Note [pinning]
/// ~~~~~~~~~~~~~~
/// A storage whose bytes are seen by a foreign library (wrapped external memory, or an exported
/// live view) is pinned to that resource. The pinned copy is never evicted or freed, reads
/// elsewhere make copies, and a write elsewhere is written back to the pinned copy when its last
/// write lock is released, so the foreign view is never stale outside a lock and never dangling.
/// Copies elsewhere are valid only while locked (the foreign side may write the pinned copy at any
/// time): pinning, and the last unlock of a copy elsewhere, invalidate them, so the next lock there
/// transfers the foreign side's latest data. Several pins on one resource count; pins on two
/// different resources at once are refused.
class ISTHMUS_API storage : public std::enable_shared_from_this<storage> {
public:
    /// A new storage of `nbytes`, with nothing allocated until the first lock.
    static std::shared_ptr<storage> create(size_t nbytes);
    /// A new storage allocated (but not initialised) on `resource`, marked valid there.
    static std::shared_ptr<storage> allocate(size_t nbytes, resource_id resource);
    /// Wraps foreign memory at `ptr` on `resource`, valid and pinned there for the storage's
    /// lifetime. `release` runs exactly once, when the storage is destroyed (it may be empty);
    /// when wrap throws, it has not run and will not.
    static std::shared_ptr<storage> wrap(void* ptr, size_t nbytes, resource_id resource,
                                         std::function<void()> release);

    ~storage();
    storage(const storage&) = delete;
    storage& operator=(const storage&) = delete;

    size_t nbytes() const noexcept { return nbytes_; }

    /// Locks the copy on `resource` and returns its address, valid until the matching unlock.
    /// Throws runtime_error on a conflicting lock, memory_error when allocation fails even
    /// after evicting, value_error / not_implemented_error for a bad resource.
    void* lock(lock_mode mode, resource_id resource);
    /// Releases a lock taken with the same mode and resource; throws runtime_error when no
    /// such lock is held (double unlock).
    void unlock(lock_mode mode, resource_id resource);

    /// Pins the storage to `resource` (making that copy valid) and returns that copy's address,
    /// valid while the pin lasts; see Note [pinning].
    void* pin(resource_id resource);
    /// Releases one pin; throws runtime_error when not pinned there.
    void unpin(resource_id resource);
    /// The resource the storage is pinned to, or -1. Takes no lock (Note [lock-free placement]).
    resource_id pinned_to() const noexcept { return pinned_.load(std::memory_order_acquire); }

    /// The state of every copy that is allocated (for inspection and tests).
    std::vector<copy_state> copies() const;
    /// The state of the copy on `resource` (allocated=false when there is none).
    copy_state copy_on(resource_id resource) const;
    /// True when the copy on `resource` is valid. Takes no lock (Note [lock-free placement]).
    bool valid_on(resource_id resource) const noexcept {
        return resource >= 1 && resource <= 64 &&
               ((valid_mask_.load(std::memory_order_acquire) >> (resource - 1)) & 1) != 0;
    }
    /// Resources holding a valid copy, lowest id first.
    std::vector<resource_id> valid_resources() const;
    /// Total locks held on every resource.
    int lock_count() const;
    /// A counter that every write or read-write lock increments: autograd compares it with the
    /// value seen when a tensor was saved for backward (Note [saved tensor versions]).
    uint64_t version() const noexcept { return version_.load(std::memory_order_relaxed); }
    /// Counts a write that takes no lock (Note [fresh outputs] writes are to new storages).
    void bump_version() noexcept { version_.fetch_add(1, std::memory_order_relaxed); }

    /// The address of the host copy of `s` when an op may write it without a lock: `s` is the
    /// only handle to the storage (a fresh output the op has not handed out), its only copy is
    /// on the host, valid, unlocked and unpinned. Otherwise nullptr (the caller locks).
    ///
    /// Note [fresh outputs]
    /// ~~~~~~~~~~~~~~~~~~~~
    /// A lock protects a copy from other handles (their locks, pins and writes) and from eviction;
    /// a host-only storage with one handle has neither, so the op that just allocated it writes it
    /// directly. Device copies are listed for eviction by other threads and always take the lock.
    static void* fresh_host_data(const std::shared_ptr<storage>& s) noexcept;

    /// Moves the data off `resource` (to the CPU if that is the only valid copy) and frees it
    /// there, if the copy there is unlocked and not pinned. Returns false when it could not.
    bool evict(resource_id resource);

private:
    // The copy on one resource (storage.cpp).
    struct copy_slot {
        resource_id res = 1;                   // MEMRESOURCE_CPU
        memory_resource* mem = nullptr;        // the resource (never null once allocated)
        std::shared_ptr<memory_resource> keep; // keeps a device resource alive (not the CPU's)
        void* ptr = nullptr;
        bool valid = false;
        bool owned = true;
        int n_read = 0;      // LOCK_READ locks held
        int n_write = 0;     // LOCK_WRITE locks held
        int n_readwrite = 0; // LOCK_READWRITE locks held
        uint64_t last_use = 0;

        int writers() const { return n_write + n_readwrite; }
        int locks() const { return n_read + n_write + n_readwrite; }
    };
    using mutex_type = detail::spin_mutex;

    explicit storage(size_t nbytes);
    copy_slot* slot(resource_id r);
    copy_slot& ensure_allocated(resource_id r, std::unique_lock<mutex_type>& lk);
    void make_valid(copy_slot& dst);
    void free_slot(copy_slot& s);
    bool evict_locked(resource_id r);
    void join_registry(resource_id r);
    void publish() noexcept;
    friend struct storage_registry_access;

    size_t nbytes_;
    mutable mutex_type mu_;
    small_vector<copy_slot, 2> slots_; // nearly every storage has at most two copies
    std::function<void()> release_;
    // Note [lock-free placement]
    // ~~~~~~~~~~~~~~~~~~~~~~~~~~
    // The pin and the valid copies as the scheduling rule reads them without taking the mutex
    // (written under it by publish()): bit r - 1 of valid_mask_ is set while the copy on resource r
    // (1..64) is allocated and valid.
    std::atomic<resource_id> pinned_{-1};
    std::atomic<uint64_t> valid_mask_{0};
    std::atomic<uint64_t> version_{0};
    int pin_count_ = 0;
    bool registered_ = false; // listed for eviction (Note [eviction registry] in storage.cpp)
};

/// Evicts unlocked, unpinned copies on `resource`, least recently used first, until at least
/// `nbytes` were freed. Returns the bytes freed. Used when an allocation fails.
ISTHMUS_API size_t evict_from(resource_id resource, size_t nbytes);

/// RAII lock on a storage: locks in the constructor, unlocks in the destructor.
class ISTHMUS_API storage_lock {
public:
    storage_lock(std::shared_ptr<storage> s, lock_mode mode, resource_id resource);
    ~storage_lock();
    storage_lock(const storage_lock&) = delete;
    storage_lock& operator=(const storage_lock&) = delete;
    storage_lock(storage_lock&& o) noexcept;
    void* data() const noexcept { return ptr_; }

private:
    std::shared_ptr<storage> s_;
    lock_mode mode_;
    resource_id resource_;
    void* ptr_;
};

} // namespace isthmus
