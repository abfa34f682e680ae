// The BLAS library as a whole: what was loaded (cpu_blas_info) and its thread count.
#include "cpu/matmul_blas.hpp"

#include "isthmus/ops/linalg.hpp"

#include <atomic>
#include <cstdlib>
#include <omp.h>
#include <sstream>
#include <string>

namespace isthmus::cpu {

namespace {

// OPENBLAS_NUM_THREADS (or GOTO_NUM_THREADS, its older name) fixes OpenBLAS's own pool; isthmus
// then leaves its size alone.
bool blas_threads_from_env() {
    static const bool fixed = std::getenv("OPENBLAS_NUM_THREADS") != nullptr ||
                              std::getenv("GOTO_NUM_THREADS") != nullptr;
    return fixed;
}

} // namespace

// Note [BLAS pool size]: scipy-openblas32 and Debian's OpenBLAS are pthread builds: their pool
// is sized once, when the library loads, from OPENBLAS_NUM_THREADS, else GOTO_NUM_THREADS,
// else OMP_NUM_THREADS, else the core count, and knows nothing of OpenMP. isthmus's own loops
// use the OpenMP pool (omp_get_max_threads(): OMP_NUM_THREADS, omp_set_num_threads). Before a
// product that OpenBLAS threads, its pool is set to the OpenMP pool's size, so one setting
// bounds both pools; OPENBLAS_NUM_THREADS, when set, wins for OpenBLAS. The two pools never
// run at once (See Note [BLAS threads] in matmul.cpp). docs/threads.md has the whole picture,
// NumPy's and torch's pools included.
void blas_sync_threads() noexcept {
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
