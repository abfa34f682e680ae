"""The CPU launch plan (Note [CPU launch plan], plugins/src/cpu_launch.cpp): a few expensive
positions still share the threads, every launch size from none to many gives every position
once, and the plan a kernel learnt from one launch does not change another launch's results."""
import os

import numpy as np
import pytest

import isthmus as q

SRC = r"""
#include <functional>
#include <thread>
namespace ip = isthmus::plugin;
ISTHMUS_PLUGIN(launch_plan, m) {
    // Each position spins for `work` rounds, then writes its thread's id hash and its index.
    m.kernel("slow_tag",
             [](ip::view<double, 1> who, ip::view<int64_t, 1> seen, int64_t work, int64_t i) {
                 volatile double acc = 0.0;
                 for (int64_t k = 0; k < work; ++k) acc = acc + 1.0;
                 who(i) = static_cast<double>(
                     std::hash<std::thread::id>{}(std::this_thread::get_id()) % 1000003);
                 seen(i) += i + 1;
             },
             {"who", "seen", "work"})
        .at_position({"who", "seen"});
    // Only position `at` spins, for `work` rounds; every position writes its thread's id hash.
    m.kernel("stall_tag",
             [](ip::view<double, 1> who, int64_t at, int64_t work, int64_t i) {
                 volatile double acc = 0.0;
                 if (i == at)
                     for (int64_t k = 0; k < work; ++k) acc = acc + 1.0;
                 who(i) = static_cast<double>(
                     std::hash<std::thread::id>{}(std::this_thread::get_id()) % 1000003);
             },
             {"who", "at", "work"})
        .at_position({"who"});
}
"""


@pytest.fixture(scope="module")
def mod(worker_cache):
    with worker_cache("launch_plan"):
        yield q.compile_string("launch_plan", SRC)


@pytest.mark.skipif(q.build_info()["openmp_threads"] < 2, reason="needs two OpenMP threads")
def test_a_few_expensive_positions_share_the_threads(mod):
    # 64 positions of about 0.2 ms each: far below any position-count cutoff, far above the
    # work worth one thread. Before the plan measured, they ran on one thread.
    for _ in range(3):  # the first launch probes, later ones start from the hint
        who = np.zeros(64)
        seen = np.zeros(64, np.int64)
        q.parallel_do(64, who, seen, 200_000, mod.slow_tag)
        assert np.array_equal(seen, np.arange(1, 65))
        assert len(set(who.tolist())) >= 2, "every position ran on one thread"


@pytest.mark.parametrize("n", [0, 1, 2, 15, 16, 17, 31, 33, 1000, 4095, 4097, 100_003])
@pytest.mark.parametrize("work", [0, 300])
def test_every_position_runs_once(mod, n, work):
    for _ in range(2):
        who = np.zeros(n)
        seen = np.zeros(n, np.int64)
        q.parallel_do(n, who, seen, work, mod.slow_tag)
        assert np.array_equal(seen, np.arange(1, n + 1))


def test_a_hint_from_a_cheap_launch_does_not_serialise_an_expensive_one(mod):
    # many cheap positions teach a tiny cost; the next launch is small but expensive
    q.parallel_do(200_000, np.zeros(200_000), np.zeros(200_000, np.int64), 0, mod.slow_tag)
    who = np.zeros(48)
    seen = np.zeros(48, np.int64)
    q.parallel_do(48, who, seen, 400_000, mod.slow_tag)
    assert np.array_equal(seen, np.arange(1, 49))
    if q.build_info()["openmp_threads"] >= 2:
        assert len(set(who.tolist())) >= 2


@pytest.mark.skipif("asan" in os.environ.get("LD_PRELOAD", ""),
                    reason="under the sanitizer a position costs several times more: 64 of "
                           "them are no longer below the serial cutoff, so the launch rightly "
                           "goes to the threads")
def test_one_stalled_block_does_not_send_later_launches_to_the_threads(mod):
    # One position of the first launch stalls (a preemption, a page fault look the same): the
    # hint is the fastest block's cost, so the cheap launches after it stay on the calling
    # thread instead of waking the team (whose threads then spin on the caller's cores).
    q.parallel_do(64, np.zeros(64), 40, 3_000_000, mod.stall_tag)
    for _ in range(5):
        who = np.zeros(64)
        q.parallel_do(64, who, -1, 0, mod.stall_tag)
        assert len(set(who.tolist())) == 1, "a cheap launch ran on several threads"
