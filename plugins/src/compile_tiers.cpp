// Compile tiers: the background worker that builds a quick plugin's optimised tier, moves the
// quick build's kernels onto it, and the waits for it (library::wait_optimised, at exit).
#include "compile_tiers.hpp"

#include "compile_cache.hpp"
#include "compile_notice.hpp"
#include "isthmus/interrupt.hpp"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

namespace isthmus::plugin_host {

// Note [compile tiers]
// ~~~~~~~~~~~~~~~~~~~~
// A new kernel's compile is mostly GCC's optimiser (Note [where a kernel compile's time goes]),
// and the edit loop wants the kernel's first answer, not its best speed. So a tiered compile_string
// (Python's default; compile_options::tiered in C++) builds a kernel-only C++ plugin (Note
// [kernel-only plugins]) twice:
//   - the quick build, at -O1 with a launcher of one loop (See Note [the quick build's launcher]),
//     while the caller waits: about two thirds of the -O3 compile's time on the development
//     machine; a cache entry of its own (the key adds "tier quick", its .meta says `tier quick`);
//   - the optimised build, at -O3, on one background thread (one build at a time, in the order
//     they were asked for), under the entry's lock like any compile, its compiler paused while a
//     foreground compile runs (See Note [background compiles yield]); its cache entry is the one
//     an untiered compile of the same source writes, and compile_string loads it directly once it
//     is there (every later run, in this process or another).
// When the optimised build is loaded, each kernel of the quick library follows it: kernel::abi()
// answers with the optimised library's record from then on (one acquire load per launch until
// then), and a CPU launch takes the current record for each block of positions, so a long
// launch that started on the quick build finishes on the optimised one. Libraries are never
// unloaded (Note [no unload]), so a block still running quick code is never cut off. Only
// kernels move: a kernel-only plugin has no functions, types or objects, whose state would live
// in one library; the optimised library is used only when it defines the same kernels with the
// same signatures.
// Both builds compute the same values: the fixed flags hold -ffp-contract=off (See Note [one
// rounding per operation]), neither level reassociates floating point, and a compile whose extra
// flags could change the arithmetic is not tiered (tierable_flags: only -D, -U, -I, -W, -g). The
// tests compare every kernel of a set of multiply-add, stencil, strided and empty launches bit
// for bit. The one thing that could differ is a libm call on an argument that only -O3's constant
// propagation finds constant, which GCC folds with correctly rounded arithmetic (glibc's
// functions are within an ulp of it).
// Waits and exits: library::wait_optimised waits for one library, wait_for_compiles for all. An
// exit does not wait: a process's exit cannot wait for a thread that uses the library's statics
// while they are destroyed, and a short script would pay its optimised builds at its end (three
// saxpy kernels: 0.8 s, the script then slower than Numba's). So stop_background_builds stops the
// build under way (its compiler killed, its files removed: the interrupt poll of background
// builds) and drops the queued ones, returning them: the Python module calls it from an atexit
// hook and hands them to a detached `python -m isthmus._finish_builds`, which compiles them
// untiered into the cache for the next run; a C++ host (tiers are its choice:
// compile_options::tiered) gets the stop from an atexit hook registered after each job (atexit
// runs in reverse order, before the destructors of the statics constructed until then) and calls
// wait_for_compiles before it exits when it wants the builds. $ISTHMUS_COMPILE_TIERS=0, or
// tiered=False, compiles the optimised build at once instead. A failed optimised build (the same
// source that compiled at -O1: it should not happen) is reported as a compile notice and the
// quick build stays. A fork()ed child starts without the parent's queue: its quick libraries
// whose builds were pending stay quick.

// The friend of library that sets its tier.
struct library_tiers {
    static void adopt(library& quick, const std::shared_ptr<const library>& optimised) {
        quick.successor_owner_ = optimised;
        quick.successor_.store(optimised.get(), std::memory_order_release);
    }
};

namespace {

enum class tier_state { pending, done, failed };

struct job {
    std::shared_ptr<library> quick;
    std::function<std::shared_ptr<library>()> build;
    pending_build what;
};

struct worker {
    std::mutex mu;
    std::condition_variable wake; // a job was queued
    std::condition_variable idle; // a job finished
    std::deque<job> queue;
    std::map<const library*, tier_state> tiers; // the quick libraries and their builds
    bool started = false;
    bool hook_fresh = false; // the exit hook was registered since the last job ended
};

worker* g_worker = new worker(); // never destroyed: the exit hook and the thread use it
std::atomic<bool> g_exiting{false};

worker& the_worker() {
    return *g_worker;
}

// Why `optimised` cannot replace `quick` ("" when it can): See Note [compile tiers].
std::string mismatch(const library& quick, const library& optimised) {
    if (optimised.name() != quick.name())
        return "it declares the plugin \"" + optimised.name() + "\"";
    const isthmus_plugin& a = quick.descriptor();
    const isthmus_plugin& b = optimised.descriptor();
    if (b.nfunctions != 0 || b.ntypes != 0 || a.nkernels != b.nkernels)
        return "it defines other functions, kernels or types";
    for (int32_t i = 0; i < a.nkernels; ++i)
        if (std::string(a.kernels[i].name) != b.kernels[i].name ||
            std::string(a.kernels[i].signature) != b.kernels[i].signature)
            return std::string("its kernel ") + b.kernels[i].signature + " differs";
    return {};
}

void run_jobs() {
    worker& w = the_worker();
    for (;;) {
        job j;
        {
            std::unique_lock lk(w.mu);
            w.wake.wait(lk, [&] { return !w.queue.empty(); });
            j = w.queue.front(); // stays queued (for the waits) until it is done
        }
        std::string why;
        std::shared_ptr<library> optimised;
        try {
            ISTHMUS_CHECK(!g_exiting.load(), interrupted, "the process exits");
            optimised = j.build();
            why = mismatch(*j.quick, *optimised);
            if (why.empty()) library_tiers::adopt(*j.quick, optimised);
        } catch (const std::exception& e) {
            why = e.what();
        } catch (...) {
            why = "an unknown error";
        }
        if (!why.empty() && !g_exiting.load()) {
            compile_notice n{j.quick->name(), "C++", compiler(), j.quick->path(), false, {}};
            n.message = "isthmus: the optimised build of plugin '" + j.quick->name() +
                        "' failed, so its kernels keep running the quick build (" +
                        j.quick->path() + "): " + why;
            report_compile_notice(n);
        }
        std::lock_guard lk(w.mu);
        w.tiers[j.quick.get()] = why.empty() ? tier_state::done : tier_state::failed;
        w.queue.pop_front();
        w.hook_fresh = false;
        w.idle.notify_all();
    }
}

// fork() happens under the worker's lock (so that the child copies a consistent queue); in the
// child only the forking thread runs: the queue starts over, and the builds the parent had
// pending are failed there (their quick builds stay).
void before_fork() {
    g_worker->mu.lock();
}
void after_fork_parent() {
    g_worker->mu.unlock();
}
void after_fork_child() {
    worker* fresh = new worker();
    for (const auto& [lib, state] : g_worker->tiers)
        fresh->tiers[lib] = state == tier_state::pending ? tier_state::failed : state;
    g_worker = fresh; // the parent's, locked and with a thread that does not run here, is leaked
}

} // namespace

bool tierable_flags(const std::vector<std::string>& flags) {
    for (const auto& f : flags) {
        const bool harmless = f.rfind("-D", 0) == 0 || f.rfind("-U", 0) == 0 ||
                              f.rfind("-I", 0) == 0 || f.rfind("-isystem", 0) == 0 ||
                              f.rfind("-W", 0) == 0 || f == "-w" || f.rfind("-g", 0) == 0;
        if (!harmless) return false;
    }
    return true;
}

bool background_stop() noexcept {
    return g_exiting.load(std::memory_order_relaxed);
}

bool tiers_enabled() {
    return !switched_off("ISTHMUS_COMPILE_TIERS");
}

void build_optimised_later(const std::shared_ptr<library>& quick,
                           std::function<std::shared_ptr<library>()> build, pending_build what) {
    static std::once_flag fork_hooks;
    std::call_once(fork_hooks,
                   [] { pthread_atfork(&before_fork, &after_fork_parent, &after_fork_child); });
    worker& w = the_worker();
    std::lock_guard lk(w.mu);
    if (!w.tiers.emplace(quick.get(), tier_state::pending).second) return; // asked before
    // Registered again after each job, so that it runs before the destructors of the statics that
    // the foreground compile and the last job constructed (atexit runs in reverse order).
    // The C++ exit hook: the build under way stops (its compiler is killed, its temporary files
    // removed) and the queued ones are dropped, before the statics the worker uses are destroyed.
    if (!w.hook_fresh) w.hook_fresh = std::atexit([] { stop_background_builds(); }) == 0;
    if (!w.started) {
        std::thread(&run_jobs).detach();
        w.started = true;
    }
    w.queue.push_back(job{quick, std::move(build), std::move(what)});
    w.wake.notify_one();
}

std::vector<pending_build> stop_background_builds() {
    g_exiting.store(true);
    worker& w = the_worker();
    std::unique_lock lk(w.mu);
    std::vector<pending_build> left;
    for (const job& j : w.queue) left.push_back(j.what);
    w.idle.wait(lk, [&] { return w.queue.empty(); });
    return left;
}

void wait_for_compiles() {
    worker& w = the_worker();
    std::unique_lock lk(w.mu);
    w.idle.wait(lk, [&] { return w.queue.empty(); });
}

std::string library::tier() const {
    if (successor() != nullptr) return "optimised";
    worker& w = the_worker();
    std::lock_guard lk(w.mu);
    return w.tiers.count(this) ? "quick" : "optimised";
}

std::string library::wait_optimised() const {
    worker& w = the_worker();
    {
        std::unique_lock lk(w.mu);
        w.idle.wait(lk, [&] {
            auto it = w.tiers.find(this);
            return it == w.tiers.end() || it->second != tier_state::pending;
        });
    }
    return tier();
}

} // namespace isthmus::plugin_host
