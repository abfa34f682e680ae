// The fork handler and the helper thread behind openmp_region (Note [OpenMP after fork]).
#include "isthmus/openmp_region.hpp"

#include <omp.h>
#include <pthread.h>

#include <condition_variable>
#include <exception>
#include <mutex>
#include <new>
#include <thread>
#include <utility>

namespace isthmus::detail {

// Note [OpenMP after fork]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// GNU OpenMP (libgomp, which isthmus and torch share) keeps a thread pool per thread that
// opened a parallel region, and it has no fork handler: in a child forked after the parent ran
// a region, the forking thread (the only thread left) still points at a pool whose threads did
// not survive the fork, and its next region waits for them forever. `omp_pause_resource_all`
// waits for them too. A thread created in the child starts with no pool and builds a fresh one
// on its first region. So:
// - a pthread_atfork child handler marks the forking thread (a thread_local flag; no other
//   thread exists at that moment) and forgets any helper of an earlier generation;
// - openmp_region() checks the flag (one call, false everywhere but there) and, when set, hands
//   the region to a helper thread, made on first need, that owns a fresh pool of
//   the caller's omp_get_max_threads() threads; the caller waits and gets its exception, if any;
// - threads the child makes itself (Python threads, C++ workers) have fresh pools already.
// The result: after `fork` (multiprocessing's "fork" start method, os.fork, a C++ host that
// forks) isthmus runs with its full thread count in the child, at the cost of a hand-over
// (a few microseconds) per parallel region on the forking thread. Serial work (below the
// parallel grain) never goes through the helper. OpenBLAS has fork handlers of its own.
// Tests: tests/core/test_openmp_region.cpp and tests/python/cpp_in_py/test_processes.py.

namespace {

thread_local bool t_pool_is_stale = false;

// The helper of a child: one job at a time (only the forking thread hands jobs over).
struct pool_helper {
    std::mutex mu;
    std::condition_variable cv;
    void (*fn)(void*) = nullptr;
    void* ctx = nullptr;
    int threads = 1; // the caller's omp_get_max_threads()
    bool has_job = false;
    bool done = false;
    std::exception_ptr error;
    std::thread thread;

    pool_helper() : thread([this] { loop(); }) { thread.detach(); }

    void loop() {
        std::unique_lock lk(mu);
        for (;;) {
            cv.wait(lk, [this] { return has_job; });
            has_job = false;
            lk.unlock();
            std::exception_ptr e;
            try {
                omp_set_num_threads(threads);
                fn(ctx);
            } catch (...) {
                e = std::current_exception();
            }
            lk.lock();
            error = e;
            done = true;
            cv.notify_all();
        }
    }
};

std::mutex g_helper_mu;
// Never deleted: its thread is detached and lives as long as the process; a later fork forgets
// it (the thread does not exist in the grandchild).
pool_helper* g_helper = nullptr;

void on_fork_child() {
    t_pool_is_stale = true;
    new (&g_helper_mu) std::mutex; // a lock held by a thread of the parent stays held otherwise
    g_helper = nullptr;
}

const int g_registered = pthread_atfork(nullptr, nullptr, &on_fork_child);

} // namespace

bool openmp_pool_is_stale() noexcept {
    (void)g_registered;
    return t_pool_is_stale;
}

void run_on_fresh_openmp_pool(void (*fn)(void*), void* ctx) {
    pool_helper* h;
    {
        std::lock_guard lk(g_helper_mu);
        if (!g_helper) g_helper = new pool_helper();
        h = g_helper;
    }
    std::unique_lock lk(h->mu);
    h->fn = fn;
    h->ctx = ctx;
    h->threads = omp_get_max_threads();
    h->done = false;
    h->error = nullptr;
    h->has_job = true;
    h->cv.notify_all();
    h->cv.wait(lk, [h] { return h->done; });
    if (h->error) std::rethrow_exception(std::exchange(h->error, nullptr));
}

} // namespace isthmus::detail
