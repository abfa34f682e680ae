// parallel_do on the CPU: the launch plan (serial or parallel, block sizes) from the body's
// measured cost, and the interruptible block loop of the OpenMP threads.
#include "cpu_launch.hpp"

#include "isthmus/openmp_region.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <limits>

namespace isthmus::plugin_host::detail {

namespace {

using clock = std::chrono::steady_clock;

// Note [CPU launch plan]
// ~~~~~~~~~~~~~~~~~~~~~~
// How many positions go into one call of a kernel's CPU launcher, and whether other threads
// help, depends on what one position costs, which only running the body tells: a saxpy position
// takes a fraction of a nanosecond, a position that sums a 4096-float row a few microseconds,
// one that integrates an ODE milliseconds. A fixed serial cutoff or block size is wrong for
// most of them (with 4096-position blocks, a row sum over 4096 rows ran on one of two threads).
// So the launch measures:
//  - Each kernel keeps the last measured cost of a position (nanoseconds on one thread; the
//    hint): that of the last launch's fastest block, since one block slowed by a preemption or
//    a timer tick would otherwise send the next launches to the threads (a 1,000-position saxpy
//    went parallel once in about 3,000 launches, and each parallel region leaves libgomp's
//    threads spinning for milliseconds, on a core the caller shares on a small machine; the
//    spinning thread slowed every launch by about a third). Work measured to take under
//    k_serial_ns runs on the calling thread: waking the OpenMP team and sharing a cursor would
//    cost more than it saves. A launch over 1,000 saxpy positions is two launcher calls and
//    four clock reads.
//  - Without a hint, or when the hint says the launch is small, the calling thread probes: it
//    runs a first block (16 positions, or with a hint an eighth of the launch on two threads),
//    timed, then either the rest in one call, when this launch's own measurement says the rest
//    is small, or hands the rest to the threads. The hint alone never decides that a launch is
//    small: a cheap launch's hint must not serialise the next one over costlier arguments.
//    Against such a hint a second block confirms a slow first one, and the faster of the two
//    decides (a page fault or a preemption is no reason to wake the team). The probe's blocks
//    are the launch's own positions, not a rehearsal: nothing runs twice.
//  - The rest is shared: blocks sized to take about k_block_ns each (and at most a quarter of
//    a thread's share, so every thread gets work at once), between 1 and k_max_block
//    positions; each block's time adjusts the next ones' size (Note [interruptible
//    launches]), and the fastest becomes the hint.
// The hint is a plan, never a result: which thread runs a position, and in how many calls,
// does not change what a position computes. A wrong hint (an earlier launch over much larger or
// smaller arguments) costs a serial probe step or an early parallel start, and is corrected by
// the launch that finds it wrong. Arguments are converted once per launcher call: at blocks of
// k_block_ns that is under a thousandth of the time.
constexpr double k_serial_ns = 20'000.0;
constexpr double k_block_ns = 250'000.0;
constexpr double k_block_too_long_ns = 20'000'000.0;
constexpr int64_t k_first_probe = 16;
constexpr int64_t k_max_block = int64_t{1} << 16;

double ns_since(clock::time_point t0) {
    return std::chrono::duration<double, std::nano>(clock::now() - t0).count();
}

int64_t positions_for(double ns, double per_position, int64_t lo, int64_t hi) {
    lo = std::min(lo, hi);
    const double n = ns / std::max(per_position, 1e-3);
    return std::clamp<int64_t>(n >= static_cast<double>(hi) ? hi : static_cast<int64_t>(n), lo, hi);
}

} // namespace

void launch_cpu_blocks(const kernel& k, call_context& ctx, const isthmus_range& base, int64_t total,
                       const isthmus_value* vals, int32_t nvals, interrupt_check& ic) {
    std::atomic<float>& cost_hint = k.cpu_cost_hint();
    // One launcher call over [b, e); false after a failure (recorded in ctx). Each call takes the
    // build the kernel runs from now: an optimised build that replaces a quick one takes over
    // between blocks (See Note [compile tiers]).
    auto run = [&](int64_t b, int64_t e) {
        isthmus_range r = base;
        r.begin = b;
        r.end = e;
        const isthmus_kernel* a = k.abi();
        if (a->launch_cpu(a, &ctx.base, &r, vals, nvals) == 0) return true;
        if (!ctx.failed()) ctx.fail(ISTHMUS_ERR_RUNTIME, "the kernel failed without a message");
        return false;
    };
    // One thread in deterministic mode (See Note [deterministic launches]) and in checked mode,
    // where the positions then run in order and an error names the first bad one (See Note
    // [checked mode]).
    const bool alone = deterministic() || (ctx.flags & ISTHMUS_CALL_CHECKED) != 0;
    const int threads = alone ? 1 : omp_get_max_threads();
    const double hint = cost_hint.load(std::memory_order_relaxed);
    int64_t done = 0;
    double per = hint;

    // The calling thread alone: a small launch, or a probe (See Note [CPU launch plan]).
    if (threads == 1 || hint <= 0 || hint * static_cast<double>(total) <= k_serial_ns) {
        int64_t step = std::min(k_first_probe, total);
        if (threads == 1 && hint > 0)
            step = positions_for(k_block_ns, hint, 1, k_max_block);
        else if (hint > 0)
            step = std::min(total, std::max(k_first_probe, total / (int64_t{threads} * 4)));
        double spent = 0;
        double fastest = std::numeric_limits<double>::infinity(); // per position, of one block
        bool confirmed = false;
        while (done < total) {
            const int64_t e = done + std::min(step, total - done);
            const clock::time_point t0 = clock::now();
            if (!run(done, e)) return;
            const double took = ns_since(t0);
            spent += took;
            fastest = std::min(fastest, took / static_cast<double>(e - done));
            done = e;
            per = spent / static_cast<double>(done);
            if (done == total || ic.stop()) break;
            // Against a hint that said small, one slow block may be noise (a page fault, a
            // preemption, a timer tick): a second block confirms before the threads wake, and
            // it confirms only when it is slow too (the faster block's cost decides).
            const double estimate = confirmed ? fastest : per;
            if (threads > 1 && estimate * static_cast<double>(total - done) > k_serial_ns) {
                if (!(hint > 0 && !confirmed)) break;
                confirmed = true;
                continue;
            }
            // Alone, blocks of about k_block_ns keep a Ctrl-C prompt (Note [interruptible
            // launches]); with threads, the rest is measured to be small: one call.
            step = threads == 1 ? positions_for(k_block_ns, per, 1, k_max_block) : total - done;
        }
        if (spent > 0) cost_hint.store(static_cast<float>(fastest), std::memory_order_relaxed);
        if (done == total || ic.stopped()) return;
    }

    // Note [interruptible launches]
    // ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    // The OpenMP threads take blocks of the range in turn from a shared cursor; between blocks
    // each thread checks the launch's interrupt_check, and the calling thread polls the host, so
    // a Ctrl-C ends a long kernel after the blocks under way (Note [interrupting long
    // operations]). Blocks start at the size the launch plan chose (Note [CPU launch plan]) and
    // follow the body: a block that took under a quarter of k_block_ns doubles the next ones (up
    // to the cap), one over 20 ms halves them (down to one position), so a Ctrl-C takes effect
    // within about one block of a slow body, and a memory-bound body runs in blocks of 65536
    // positions, where the per-block costs (the cursor, the launcher's argument conversions) are
    // near 1%.
    const int64_t rest = total - done;
    const int64_t cap = std::clamp<int64_t>(rest / (int64_t{threads} * 4), int64_t{1}, k_max_block);
    std::atomic<int64_t> cursor{done};
    std::atomic<int64_t> size{positions_for(k_block_ns, per, 1, cap)};
    std::atomic<bool> halt{false};
    std::atomic<double> fastest{std::numeric_limits<double>::infinity()};
    // One thread's blocks, until none is left, one fails or an interrupt comes; `mine` is its
    // fastest block's cost per position.
    auto blocks = [&](double& mine) {
        while (!halt.load(std::memory_order_relaxed) && !ic.stop()) {
            const int64_t s = size.load(std::memory_order_relaxed);
            int64_t b = cursor.load(std::memory_order_relaxed);
            do {
                if (b >= total) return;
            } while (!cursor.compare_exchange_weak(b, b + std::min(s, total - b),
                                                   std::memory_order_relaxed));
            const int64_t e = b + std::min(s, total - b);
            const clock::time_point t0 = clock::now();
            if (!run(b, e)) {
                halt.store(true, std::memory_order_relaxed);
                return;
            }
            const double took = ns_since(t0);
            mine = std::min(mine, took / static_cast<double>(e - b));
            int64_t expected = s;
            if (took < k_block_ns / 4 && s < cap)
                size.compare_exchange_strong(expected, std::min(cap, 2 * s),
                                             std::memory_order_relaxed);
            else if (took > k_block_too_long_ns && s > 1)
                size.compare_exchange_strong(expected, s / 2, std::memory_order_relaxed);
        }
    };
    auto work = [&] {
        double mine = std::numeric_limits<double>::infinity();
        blocks(mine);
        double seen = fastest.load(std::memory_order_relaxed);
        while (mine < seen &&
               !fastest.compare_exchange_weak(seen, mine, std::memory_order_relaxed)) {
        }
    };
    openmp_region([&] {
#pragma omp parallel num_threads(threads)
        work();
    });
    const double best = fastest.load(std::memory_order_relaxed);
    if (best < std::numeric_limits<double>::infinity())
        cost_hint.store(static_cast<float>(best), std::memory_order_relaxed);
}

} // namespace isthmus::plugin_host::detail
