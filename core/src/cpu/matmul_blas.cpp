// The BLAS library as a whole: what was loaded (cpu_blas_info), its threads and their pool.
#include "cpu/matmul_blas.hpp"

#include "isthmus/openmp_region.hpp"
#include "isthmus/ops/linalg.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <omp.h>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace isthmus::cpu {

namespace {

// OPENBLAS_NUM_THREADS (or GOTO_NUM_THREADS, its older name) fixes OpenBLAS's own pool; isthmus
// then leaves its size alone.
bool blas_threads_from_env() {
    static const bool fixed = std::getenv("OPENBLAS_NUM_THREADS") != nullptr ||
                              std::getenv("GOTO_NUM_THREADS") != nullptr;
    return fixed;
}

#if ISTHMUS_BLAS_THREADS_CALLBACK
// Note [BLAS jobs on the OpenMP pool]: OpenBLAS's pthread build (scipy-openblas32 is one) runs
// a threaded product on its own pool, whose idle workers busy-wait (a loop of nops on x86) for
// 2^28 TSC ticks, about 0.1 s, after every threaded call before they sleep. On a machine with
// few cores that tail takes a core away from whatever runs next: isthmus's own OpenMP loops,
// NumPy's or torch's products. Since 0.3.27 OpenBLAS can hand the jobs of a threaded call to
// the caller instead (openblas_set_threads_callback_function), and isthmus runs them on its
// OpenMP pool, the one its elementwise loops use (and torch's, when torch shares the process's
// libgomp): one pool for everything isthmus does, idle under OpenMP's own wait policy (a short
// spin, then sleep). OpenBLAS's own workers, started when the library loads, then sleep for
// good. Requirements of the callback, from OpenBLAS's server code:
// - the jobs of a level-3 product wait on one another, so all `numjobs` must run at once, on
//   distinct threads: an OpenMP team of exactly that size, else (inside a parallel region,
//   OMP_DYNAMIC, a thread limit) threads of their own;
// - job i uses OpenBLAS's per-thread state and buffer number i, so two threaded calls must
//   not overlap: a mutex serialises them (single-threaded calls never come here);
// - the workers tell job slot 1 from a job only since 0.3.28, which cmake/isthmus_blas.cmake
//   requires for this path.
// ISTHMUS_BLAS_THREADS=openblas keeps OpenBLAS's own pool (for comparison and diagnosis).
std::mutex g_jobs_mutex;

void run_blas_jobs(int /*sync: always 1 from exec_blas*/, openblas_dojob_callback dojob,
                   int numjobs, size_t jobdata_elsize, void* jobdata, int dojob_data) {
    std::lock_guard lock(g_jobs_mutex);
    auto* base = static_cast<char*>(jobdata);
    auto job = [&](int i) { dojob(i, base + static_cast<size_t>(i) * jobdata_elsize, dojob_data); };
    if (numjobs <= 1) {
        if (numjobs == 1) job(0);
        return;
    }
    bool done = false;
    if (!omp_in_parallel()) {
        int team = 0;
        openmp_region([&] {
#pragma omp parallel num_threads(numjobs)
            {
                // All threads of the team see the same size: every job runs here or none.
                const int size = omp_get_num_threads();
                if (size == numjobs) job(omp_get_thread_num());
                if (omp_get_thread_num() == 0) team = size;
            }
        });
        done = team == numjobs;
    }
    if (!done) {
        std::vector<std::thread> others;
        others.reserve(static_cast<size_t>(numjobs - 1));
        for (int i = 1; i < numjobs; ++i) others.emplace_back(job, i);
        job(0);
        for (auto& t : others) t.join();
    }
}

void install_jobs_callback() {
    const char* mode = std::getenv("ISTHMUS_BLAS_THREADS");
    if (mode != nullptr && std::strcmp(mode, "openblas") == 0) return;
    ISTHMUS_BLAS(openblas_set_threads_callback_function)(&run_blas_jobs);
}
#endif

} // namespace

// Note [BLAS pool size]: scipy-openblas32 and Debian's OpenBLAS are pthread builds: their pool
// is sized once, when the library loads, from OPENBLAS_NUM_THREADS, else GOTO_NUM_THREADS,
// else OMP_NUM_THREADS, else the core count, and knows nothing of OpenMP. isthmus's own loops
// use the OpenMP pool (omp_get_max_threads(): OMP_NUM_THREADS, omp_set_num_threads). Before a
// product that OpenBLAS may thread, its thread count is set to the OpenMP pool's size, so one
// setting bounds both; OPENBLAS_NUM_THREADS, when set, wins for OpenBLAS. The two never run at
// once (See Note [BLAS threads] in matmul.cpp), and with scipy-openblas32 OpenBLAS's jobs run
// on the OpenMP pool itself (See Note [BLAS jobs on the OpenMP pool]). docs/threads.md has
// the whole picture, NumPy's and torch's pools included.
void blas_sync_threads() noexcept {
#if ISTHMUS_BLAS_THREADS_CALLBACK
    static std::once_flag installed;
    std::call_once(installed, install_jobs_callback);
#endif
    if (blas_threads_from_env() || omp_in_parallel()) return;
    static std::atomic<int> last{0};
    const int want = omp_get_max_threads();
    if (last.exchange(want, std::memory_order_relaxed) != want)
        ISTHMUS_BLAS(openblas_set_num_threads)(want);
}

} // namespace isthmus::cpu

namespace isthmus {

blas_info cpu_blas_info() noexcept {
    // openblas_get_config(): "OpenBLAS 0.3.34.481.3 DYNAMIC_ARCH NO_AFFINITY SkylakeX ..."; the
    // library's strings are static, the version is parsed once.
    struct loaded {
        std::string version;
        loaded() {
            std::istringstream words(ISTHMUS_BLAS(openblas_get_config)());
            std::string first;
            words >> first >> version;
        }
    };
    static const loaded lib;
    cpu::blas_sync_threads();
    blas_info info{};
    info.name = ISTHMUS_BLAS_NAME;
    info.version = lib.version.c_str();
    info.core = ISTHMUS_BLAS(openblas_get_corename)();
    info.config = ISTHMUS_BLAS(openblas_get_config)();
    info.threads = ISTHMUS_BLAS(openblas_get_num_threads)();
    info.openmp_threads = omp_get_max_threads();
    return info;
}

} // namespace isthmus
