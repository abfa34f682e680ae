// Tests for interrupting long operations: the poll, the check, and a large product in panels.
#include "isthmus/interrupt.hpp"
#include "isthmus/ops.hpp"
#include "isthmus/tensor.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

using namespace isthmus;

namespace {

std::atomic<int> g_polls{0};
std::atomic<int> g_stop_after{0}; // the poll answers true from this call on (0: never)

bool counting_poll() noexcept {
    const int n = ++g_polls;
    return g_stop_after > 0 && n >= g_stop_after;
}

// Installs counting_poll for one test and puts the previous poll back.
struct poll_guard {
    interrupt_poll_fn previous;
    explicit poll_guard(int stop_after) : previous(set_interrupt_poll(&counting_poll)) {
        g_polls = 0;
        g_stop_after = stop_after;
    }
    ~poll_guard() { set_interrupt_poll(previous); }
};

// A row of c = a @ b in double, for checking chosen rows of a large product.
std::vector<double> reference_row(const tensor& a, const tensor& b, int64_t r) {
    const auto av = a.contiguous().to_vector<float>();
    const auto bv = b.contiguous().to_vector<float>();
    const int64_t k = a.size(1), n = b.size(1);
    std::vector<double> row(static_cast<size_t>(n), 0.0);
    for (int64_t j = 0; j < k; ++j)
        for (int64_t c = 0; c < n; ++c)
            row[static_cast<size_t>(c)] += double(av[static_cast<size_t>(r * k + j)]) *
                                           double(bv[static_cast<size_t>(j * n + c)]);
    return row;
}

} // namespace

TEST_CASE("interrupt: the check polls only on the starting thread, at most every 50 ms") {
    poll_guard guard(0);
    interrupt_check ic;
    CHECK_FALSE(ic.stop()); // before 50 ms: no poll
    CHECK(g_polls == 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    std::thread other([&] { CHECK_FALSE(ic.stop()); }); // another thread never polls
    other.join();
    CHECK(g_polls == 0);
    CHECK_FALSE(ic.stop());
    CHECK(g_polls == 1);
    CHECK_FALSE(ic.stopped());
    CHECK_NOTHROW(ic.raise_if_stopped("op"));
    g_stop_after = 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    CHECK(ic.stop());
    CHECK(ic.stopped());
    std::thread after([&] { CHECK(ic.stop()); }); // every thread sees the stop
    after.join();
    CHECK_THROWS_WITH_AS(ic.raise_if_stopped("op"), "op: interrupted", interrupted);
}

TEST_CASE("interrupt: without a poll nothing stops") {
    const interrupt_poll_fn previous = set_interrupt_poll(nullptr);
    interrupt_check ic;
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    CHECK_FALSE(ic.stop());
    set_interrupt_poll(previous);
}

TEST_CASE("interrupt: a large product runs in panels, stops at a poll, and is exact otherwise") {
    // 4096 x 2048 @ 2048 x 2048: 2^34 multiply-adds, four panels of 1024 rows. Multiples of
    // 1/4 up to 12.5: every sum is exact in float32, so any panel offset error shows.
    const tensor a = random_tensor({4096, 2048}, dtype::float32, 91);
    const tensor b = random_tensor({2048, 2048}, dtype::float32, 92);
    {
        poll_guard guard(0); // polled, never stops
        const tensor c = matmul(a, b);
        for (int64_t r : {int64_t{0}, int64_t{1023}, int64_t{1024}, int64_t{2500}, int64_t{4095}}) {
            const auto want = reference_row(a, b, r);
            const auto got = c.select(0, r).to_vector<float>();
            for (size_t j = 0; j < want.size(); j += 97) CHECK(double(got[j]) == want[j]);
        }
        // a transposed left operand (BLAS's Trans layout): rows of the panels start elsewhere
        const tensor at = a.t().contiguous().t();
        CHECK(matmul(at, b).to_vector<float>() == c.to_vector<float>());
    }
    {
        poll_guard guard(1); // the first poll stops it
        CHECK_THROWS_AS((void)matmul(a, b), interrupted);
        CHECK(g_polls >= 1);
    }
    // the operands are untouched and the runtime works after an interrupt
    const tensor c2 = matmul(a.slice(0, 0, 4), b);
    CHECK(c2.size(0) == 4);
}
