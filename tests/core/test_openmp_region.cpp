// Tests for openmp_region: parallel regions and library ops in children forked after OpenMP ran.
#include <doctest/doctest.h>

#include "isthmus/openmp_region.hpp"
#include "isthmus/ops.hpp"
#include "isthmus/tensor.hpp"
#include "test_support.hpp"

#include <omp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <stdexcept>

using namespace isthmus;

namespace {

// The size of the team a region gets, opened through openmp_region.
int team_size() {
    std::atomic<int> size{0};
    openmp_region([&] {
#pragma omp parallel
        size.fetch_add(1);
    });
    return size.load();
}

// 0 + 1 + ... + (n - 1), computed by the library (a parallel arange, then a parallel sum).
double library_sum(int64_t n) {
    return sum(arange(scalar(n), dtype::float64)).item<double>();
}

// What a child checks; its exit status is the number of the first failed check (0: all passed).
int child_checks(int threads, int64_t n) {
    alarm(60); // a hang fails the test instead of stopping the suite
    if (!detail::openmp_pool_is_stale()) return 1;
    if (team_size() != threads) return 2;
    if (library_sum(n) != static_cast<double>(n) * static_cast<double>(n - 1) / 2) return 3;
    if (team_size() != threads) return 4; // the helper is reused
    try {
        openmp_region([] { throw std::runtime_error("from the helper"); });
        return 5;
    } catch (const std::runtime_error&) {
    }
    return 0;
}

// Forks, runs body in the child (its result is the exit status) and returns the child's status.
template <class F>
int in_child(F&& body) {
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) _exit(body());
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status)); // not killed by the alarm
    return WEXITSTATUS(status);
}

} // namespace

TEST_CASE("openmp_region: a child forked after parallel regions runs them with a full team") {
    const int threads = omp_get_max_threads();
    const int64_t n = int64_t{1} << 22; // far above the parallel grain
    const double expected = static_cast<double>(n) * static_cast<double>(n - 1) / 2;
    // The parent's pool exists: a region and a library op ran before the fork.
    CHECK(team_size() == threads);
    CHECK(library_sum(n) == expected);
    CHECK_FALSE(detail::openmp_pool_is_stale());

    CHECK(in_child([&] { return child_checks(threads, n); }) == 0);

    // A grandchild, forked after the child's helper ran, gets a helper of its own.
    CHECK(in_child([&] {
              if (team_size() != threads) return 10;
              return in_child([&] { return child_checks(threads, n); });
          }) == 0);

    // The parent is untouched: its own threads, no helper.
    CHECK_FALSE(detail::openmp_pool_is_stale());
    CHECK(team_size() == threads);
}
