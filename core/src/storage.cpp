// Storage: copies on memory resources, valid bits, locks, pinning and LRU eviction.
#include "isthmus/storage.hpp"
#include "isthmus/error.hpp"

#include <algorithm>
#include <atomic>
#include <thread>
#include <unordered_set>

namespace isthmus {

namespace {

const char* mode_name(lock_mode m) {
    switch (m) {
    case lock_mode::read:
        return "LOCK_READ";
    case lock_mode::write:
        return "LOCK_WRITE";
    case lock_mode::readwrite:
        return "LOCK_READWRITE";
    }
    return "an invalid lock mode";
}

[[noreturn, gnu::cold, gnu::noinline]] void throw_bad_mode(int v) {
    ISTHMUS_THROW(value_error, "invalid lock mode ", v,
                  " (expected LOCK_READ=1, LOCK_WRITE=2 or LOCK_READWRITE=3)");
}

// Inline on every lock and unlock: the message is built only when it throws.
inline void check_mode(lock_mode m) {
    const int v = static_cast<int>(m);
    if (v < 1 || v > 3) [[unlikely]]
        throw_bad_mode(v);
}

std::string res_name(resource_id r) {
    memory_resource* m = find_resource(r);
    return m ? m->name() : detail::concat("resource ", r);
}

std::atomic<uint64_t> g_tick{0}; // device copies' last use, for LRU eviction

// The resource behind a new copy on `r`, and what keeps it alive: the CPU's is never
// unregistered (Note [cpu fast path] in memory.cpp), so its slots hold no reference count.
std::shared_ptr<memory_resource> keep_of(resource_id r) {
    return r == MEMRESOURCE_CPU ? nullptr : resource_handle(r);
}

// Note [eviction registry]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// Every live storage with a copy off the host is listed here so that a failed allocation can evict
// other storages' unlocked copies. Host copies are never evicted, so a storage joins the list only
// when it first gets a copy elsewhere (and stays until it is destroyed): host-only storages, every
// small op's output among them, skip the registry's mutex and its node allocation. Lock order: a
// storage's own mutex, then this registry's mutex, then other storages' mutexes only through
// try_lock (a busy storage is skipped), so two threads evicting at once never deadlock.
struct live_storages {
    std::mutex mu;
    std::unordered_set<storage*> all;
};
live_storages& live() {
    static live_storages* l = new live_storages;
    return *l;
}

} // namespace

size_t evict_from_except(resource_id resource, size_t nbytes, const storage* requester);

void detail::spin_mutex::lock_slow() noexcept {
    for (int spins = 0;; ++spins) {
        if (!held_.load(std::memory_order_relaxed) &&
            !held_.exchange(true, std::memory_order_acquire))
            return;
        if (spins < 64)
            __builtin_ia32_pause();
        else
            std::this_thread::yield(); // a transfer between resources is under way
    }
}

struct storage_registry_access {
    static storage::mutex_type& mutex_of(storage& s) { return s.mu_; }
    static bool evict_locked(storage& s, resource_id r) { return s.evict_locked(r); }
    static auto& slots(storage& s) { return s.slots_; }
    static resource_id pinned(storage& s) { return s.pinned_; }
};

storage::storage(size_t nbytes) : nbytes_(nbytes) {}

void storage::publish() noexcept {
    uint64_t mask = 0;
    for (const auto& c : slots_)
        if (c.ptr && c.valid && c.res >= 1 && c.res <= 64) mask |= uint64_t{1} << (c.res - 1);
    valid_mask_.store(mask, std::memory_order_release);
}

void storage::join_registry(resource_id r) {
    if (r == MEMRESOURCE_CPU || registered_) return;
    auto& l = live();
    std::lock_guard lk(l.mu);
    l.all.insert(this);
    registered_ = true;
}

storage::~storage() {
    if (registered_) {
        auto& l = live();
        std::lock_guard lk(l.mu);
        l.all.erase(this);
    }
    for (auto& s : slots_)
        if (s.owned && s.ptr) s.mem->deallocate(s.ptr, nbytes_);
    if (release_) release_();
}

std::shared_ptr<storage> storage::create(size_t nbytes) {
    // One allocation for the storage, its control block (make_shared needs a public
    // constructor, hence the local subclass) and room for two copies (host + one device, the
    // slot list's inline part): every op output goes through here.
    struct enabler : storage {
        explicit enabler(size_t n) : storage(n) {}
    };
    return std::make_shared<enabler>(nbytes);
}

std::shared_ptr<storage> storage::allocate(size_t nbytes, resource_id resource) {
    // What lock(write) + unlock(write) would do on a fresh storage (no other copies, no locks,
    // not pinned), with one pass through the mutex.
    resource = resolve_resource(resource);
    auto s = create(nbytes);
    std::unique_lock lk(s->mu_);
    copy_slot& d = s->ensure_allocated(resource, lk);
    d.valid = true;
    if (resource != MEMRESOURCE_CPU) d.last_use = ++g_tick;
    s->publish();
    return s;
}

std::shared_ptr<storage> storage::wrap(void* ptr, size_t nbytes, resource_id resource,
                                       std::function<void()> release) {
    resource = resolve_resource(resource);
    ISTHMUS_CHECK(ptr != nullptr || nbytes == 0, value_error, "storage::wrap: null pointer for ",
                  nbytes, " bytes");
    auto s = create(nbytes);
    copy_slot c;
    c.res = resource;
    c.keep = keep_of(resource);
    c.mem = c.keep ? c.keep.get() : find_resource(resource);
    c.ptr = ptr;
    c.valid = true;
    c.owned = false;
    s->slots_.push_back(std::move(c));
    s->join_registry(resource);
    s->release_ = std::move(release);
    s->pinned_.store(resource);
    s->pin_count_ = 1; // the wrap's own pin, held for the storage's lifetime
    s->publish();
    return s;
}

storage::copy_slot* storage::slot(resource_id r) {
    for (auto& s : slots_)
        if (s.res == r) return &s;
    return nullptr;
}

storage::copy_slot& storage::ensure_allocated(resource_id r, std::unique_lock<mutex_type>&) {
    if (copy_slot* s = slot(r); s && s->ptr) return *s;
    std::shared_ptr<memory_resource> keep = keep_of(r);
    memory_resource* handle = keep ? keep.get() : find_resource(r);
    void* p = handle->allocate(nbytes_);
    size_t freed = 0;
    // Note [eviction retries]
    // ~~~~~~~~~~~~~~~~~~~~~~~
    // Another thread may take the memory just freed before this one allocates it, and a copy that
    // was busy (its storage's mutex held for a moment) is skipped rather than waited for. So retry,
    // a bounded number of times: while eviction makes progress, and a few times more (yielding)
    // when it found nothing to free.
    for (int attempt = 0, idle = 0; !p && attempt < 16 && idle < 3; ++attempt) {
        const size_t f = evict_from_except(r, nbytes_, this);
        freed += f;
        p = handle->allocate(nbytes_);
        if (!p && f == 0) {
            ++idle;
            std::this_thread::yield();
        }
    }
    ISTHMUS_CHECK(p != nullptr, memory_error, "out of memory on ", handle->name(),
                  ": could not allocate ", nbytes_, " bytes (", freed,
                  " bytes of unlocked copies were evicted first)");
    copy_slot c;
    c.res = r;
    c.mem = handle;
    c.keep = std::move(keep);
    c.ptr = p;
    slots_.push_back(std::move(c));
    join_registry(r); // lock order: this storage's mutex, then the registry's (Note above)
    return slots_.back();
}

void storage::make_valid(copy_slot& dst) {
    if (dst.valid) return;
    for (auto& src : slots_) {
        if (&src != &dst && src.valid) {
            copy_bytes(*dst.mem, dst.ptr, *src.mem, src.ptr, nbytes_);
            break;
        }
    }
    dst.valid = true; // with no valid copy anywhere the storage is uninitialised: any bytes do
}

void* storage::lock(lock_mode mode, resource_id resource) {
    check_mode(mode);
    if (resource != MEMRESOURCE_CPU) resource = resolve_resource(resource);
    std::unique_lock lk(mu_);
    for (auto& s : slots_) {
        if (s.res == resource) continue;
        ISTHMUS_CHECK(s.writers() == 0, runtime_error, "cannot lock for ", mode_name(mode), " on ",
                      res_name(resource), ": the storage is write-locked on ", res_name(s.res),
                      " (unlock it there first)");
        ISTHMUS_CHECK(!writes(mode) || s.n_read == 0, runtime_error, "cannot lock for ",
                      mode_name(mode), " on ", res_name(resource),
                      ": the storage is read-locked on ", res_name(s.res),
                      " and writing would invalidate that copy (unlock it there first)");
    }
    copy_slot* d = &ensure_allocated(resource, lk);
    bool changed = !d->valid; // the valid copies change (published for the scheduling rule)
    if (reads(mode)) make_valid(*d);
    if (writes(mode)) {
        // Under the mutex, a plain increment; See Note [saved tensor versions].
        version_.store(version_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        // See Note [coherence]: a writer on one resource makes every other copy stale.
        for (auto& s : slots_)
            if (s.res != resource && s.valid) {
                s.valid = false;
                changed = true;
            }
        d->valid = true;
    }
    switch (mode) {
    case lock_mode::read:
        ++d->n_read;
        break;
    case lock_mode::write:
        ++d->n_write;
        break;
    case lock_mode::readwrite:
        ++d->n_readwrite;
        break;
    }
    if (resource != MEMRESOURCE_CPU) d->last_use = ++g_tick; // host copies are never evicted
    if (changed) publish();
    return d->ptr;
}

void storage::unlock(lock_mode mode, resource_id resource) {
    check_mode(mode);
    if (resource != MEMRESOURCE_CPU) resource = resolve_resource(resource);
    std::unique_lock lk(mu_);
    copy_slot* d = slot(resource);
    int* counter = nullptr;
    if (d) {
        counter = mode == lock_mode::read    ? &d->n_read
                  : mode == lock_mode::write ? &d->n_write
                                             : &d->n_readwrite;
    }
    ISTHMUS_CHECK(counter && *counter > 0, runtime_error, "unlock(", mode_name(mode), ", ",
                  res_name(resource),
                  ") without a matching lock (double unlock, or a lock taken "
                  "with another mode or on another resource)");
    --*counter;
    if (resource != MEMRESOURCE_CPU) d->last_use = ++g_tick;
    // See Note [pinning]: the pinned copy is brought up to date when the last writer elsewhere
    // ends.
    if (writes(mode) && d->writers() == 0 && pinned_ != -1 && pinned_ != resource) {
        copy_slot* p = slot(pinned_);
        ISTHMUS_ASSERT(p && p->ptr, "pinned storage lost its pinned copy");
        copy_bytes(*p->mem, p->ptr, *d->mem, d->ptr, nbytes_);
        p->valid = true;
        publish();
    }
    // Note [copies away from a pin]
    // ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    // The foreign library may write the pinned copy at any time without telling isthmus, so a copy
    // elsewhere is trusted only while it is locked: when its last lock ends it becomes invalid (the
    // allocation stays for reuse) and the next lock there transfers again. A read of shared memory
    // from another device therefore always sees the foreign side's latest writes.
    if (pinned_ != -1 && pinned_ != resource && d->locks() == 0) {
        const copy_slot* p = slot(pinned_);
        if (p && p->ptr && p->valid) {
            d->valid = false;
            publish();
        }
    }
}

void* storage::fresh_host_data(const std::shared_ptr<storage>& s) noexcept {
    if (!s || s.use_count() != 1 || s->registered_ || s->slots_.size() != 1) return nullptr;
    const copy_slot& c = s->slots_[0];
    if (c.res != MEMRESOURCE_CPU || !c.ptr || !c.valid || c.locks() != 0 ||
        s->pinned_.load(std::memory_order_relaxed) != -1)
        return nullptr;
    return c.ptr;
}

void* storage::pin(resource_id resource) {
    resource = resolve_resource(resource);
    std::unique_lock lk(mu_);
    ISTHMUS_CHECK(pinned_ == -1 || pinned_ == resource, runtime_error, "cannot pin to ",
                  res_name(resource), ": the storage is already pinned to ", res_name(pinned_),
                  " (shared with a foreign library there)");
    for (auto& s : slots_)
        ISTHMUS_CHECK(s.res == resource || s.writers() == 0, runtime_error, "cannot pin to ",
                      res_name(resource), ": the storage is write-locked on ", res_name(s.res));
    copy_slot& d = ensure_allocated(resource, lk);
    make_valid(d);
    d.last_use = ++g_tick;
    pinned_.store(resource);
    ++pin_count_;
    // See Note [copies away from a pin]: from now on the foreign side may write the pinned copy.
    for (auto& s : slots_)
        if (s.res != resource && s.locks() == 0) s.valid = false;
    publish();
    return d.ptr;
}

void storage::unpin(resource_id resource) {
    resource = resolve_resource(resource);
    std::lock_guard lk(mu_);
    const bool wrapped = slot(resource) && !slot(resource)->owned;
    ISTHMUS_CHECK(pinned_ == resource && pin_count_ > (wrapped ? 1 : 0), runtime_error, "unpin(",
                  res_name(resource), ") without a matching pin");
    if (--pin_count_ == 0) pinned_.store(-1);
}

std::vector<copy_state> storage::copies() const {
    std::lock_guard lk(mu_);
    std::vector<copy_state> out;
    for (const auto& s : slots_)
        if (s.ptr) out.push_back({s.res, true, s.valid, s.owned, s.n_read, s.writers()});
    std::sort(out.begin(), out.end(),
              [](const copy_state& a, const copy_state& b) { return a.resource < b.resource; });
    return out;
}

copy_state storage::copy_on(resource_id resource) const {
    for (const auto& c : copies())
        if (c.resource == resource) return c;
    copy_state none;
    none.resource = resource;
    return none;
}

std::vector<resource_id> storage::valid_resources() const {
    std::vector<resource_id> out;
    uint64_t mask = valid_mask_.load(std::memory_order_acquire); // Note [lock-free placement]
    for (resource_id r = 1; mask != 0; ++r, mask >>= 1)
        if (mask & 1) out.push_back(r);
    return out;
}

int storage::lock_count() const {
    std::lock_guard lk(mu_);
    int n = 0;
    for (const auto& s : slots_) n += s.locks();
    return n;
}

void storage::free_slot(copy_slot& s) {
    if (s.owned && s.ptr) s.mem->deallocate(s.ptr, nbytes_);
    slots_.erase(&s);
}

bool storage::evict_locked(resource_id r) {
    copy_slot* s = slot(r);
    if (!s) return true;
    if (r == MEMRESOURCE_CPU || s->locks() > 0 || pinned_ == r || !s->owned) return false;
    bool other_valid = false;
    for (auto& o : slots_) other_valid |= (&o != s && o.valid);
    if (s->valid && !other_valid) {
        // Keep the data: move it to host memory first.
        copy_slot* h = slot(MEMRESOURCE_CPU);
        if (!h || !h->ptr) {
            memory_resource* handle = find_resource(MEMRESOURCE_CPU);
            void* p = handle->allocate(nbytes_);
            if (!p) return false;
            copy_slot c;
            c.res = MEMRESOURCE_CPU;
            c.mem = handle;
            c.ptr = p;
            slots_.push_back(std::move(c));
            s = slot(r); // push_back may have moved the slots
            h = &slots_.back();
        }
        copy_bytes(*h->mem, h->ptr, *s->mem, s->ptr, nbytes_);
        h->valid = true;
    }
    free_slot(*s);
    publish();
    return true;
}

bool storage::evict(resource_id resource) {
    resource = resolve_resource(resource);
    std::lock_guard lk(mu_);
    return evict_locked(resource);
}

size_t evict_from(resource_id resource, size_t nbytes) {
    return evict_from_except(resolve_resource(resource), nbytes, nullptr);
}

size_t evict_from_except(resource_id resource, size_t nbytes, const storage* requester) {
    struct candidate {
        storage* s;
        uint64_t last_use;
        size_t bytes;
    };
    auto& l = live();
    std::lock_guard lk(l.mu);
    std::vector<candidate> cands;
    for (storage* s : l.all) {
        if (s == requester) continue; // its mutex is held by this thread
        std::unique_lock slk(storage_registry_access::mutex_of(*s), std::try_to_lock);
        if (!slk.owns_lock()) continue; // busy, or the storage asking for memory: skip
        if (storage_registry_access::pinned(*s) == resource) continue;
        for (auto& c : storage_registry_access::slots(*s))
            if (c.res == resource && c.ptr && c.owned && c.locks() == 0)
                cands.push_back({s, c.last_use, s->nbytes()});
    }
    std::sort(cands.begin(), cands.end(),
              [](const candidate& a, const candidate& b) { return a.last_use < b.last_use; });
    size_t freed = 0;
    for (const auto& c : cands) {
        if (freed >= nbytes) break;
        std::unique_lock slk(storage_registry_access::mutex_of(*c.s), std::try_to_lock);
        if (!slk.owns_lock()) continue;
        if (storage_registry_access::evict_locked(*c.s, resource)) freed += c.bytes;
    }
    return freed;
}

storage_lock::storage_lock(std::shared_ptr<storage> s, lock_mode mode, resource_id resource)
    : s_(std::move(s)), mode_(mode), resource_(resource) {
    ptr_ = s_->lock(mode_, resource_);
}

storage_lock::~storage_lock() {
    try {
        if (s_) s_->unlock(mode_, resource_);
    } catch (...) {
        // Unlocking a lock this object took cannot fail unless the storage was misused
        // elsewhere (unlocked twice by hand); a destructor must not throw.
    }
}

storage_lock::storage_lock(storage_lock&& o) noexcept
    : s_(std::move(o.s_)), mode_(o.mode_), resource_(o.resource_), ptr_(o.ptr_) {
    o.s_.reset();
}

} // namespace isthmus
