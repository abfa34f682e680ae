// The BLAS library as a whole: what was loaded (cpu_blas_info), its threads and their pool.
#include "cpu/matmul_blas.hpp"

#include "isthmus/openmp_region.hpp"
#include "isthmus/ops/linalg.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <omp.h>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#if ISTHMUS_BLAS_THREADS_CALLBACK
#include <dlfcn.h>
#include <link.h>
#endif

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
// Note [BLAS jobs on the OpenMP pool]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// OpenBLAS's pthread build (scipy-openblas32 is one) runs a threaded product on its own pool, whose
// idle workers busy-wait (a loop of nops on x86) for 2^28 TSC ticks, about 0.1 s, after every
// threaded call before they sleep. On a machine with few cores that tail takes a core away from
// whatever runs next: isthmus's own OpenMP loops, NumPy's or torch's products. Since 0.3.27
// OpenBLAS can hand the jobs of a threaded call to the caller instead
// (openblas_set_threads_callback_function), and isthmus runs them on its OpenMP pool, the one its
// elementwise loops use (and torch's, when torch shares the process's libgomp): one pool for
// everything isthmus does, idle under OpenMP's own wait policy (a short spin, then sleep).
// OpenBLAS's own workers, started when the library loads, then sleep for good. Requirements of the
// callback, from OpenBLAS's server code:
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

bool own_pools_wanted() {
    static const bool own = [] {
        const char* mode = std::getenv("ISTHMUS_BLAS_THREADS");
        return mode != nullptr && std::strcmp(mode, "openblas") == 0;
    }();
    return own;
}

void install_jobs_callback() {
    if (own_pools_wanted()) return;
    ISTHMUS_BLAS(openblas_set_threads_callback_function)(&run_blas_jobs);
}

// Note [one BLAS pool for the process]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// NumPy links its own OpenBLAS (scipy-openblas64), and SciPy another; each is a pthread build whose
// idle workers busy-wait ~0.1 s after every threaded call (Note [BLAS jobs on the OpenMP pool]). On
// a machine with few cores the next isthmus product then shares the cores with spinning threads: a
// 2048 float32 matmul right after NumPy's ran at 0.48-0.52x of NumPy's speed on the 2-core Xeon. So
// isthmus hands every other OpenBLAS in the process the same callback it gives its own: their
// threaded calls run their jobs on the OpenMP pool too, and their own workers fall asleep for good.
// The kernels, their results and the number of jobs stay the library's own; only the threads that
// run the jobs change. A copy is adopted when it is OpenBLAS 0.3.28 or newer (the version whose
// workers tell job slot 1 from a job), a pthread build (an OpenMP build has no idle tail of its
// own), and not isthmus's own. The loaded objects are scanned when `import isthmus` runs and again
// before a threaded product whenever the dynamic loader's count of loaded objects has changed;
// ISTHMUS_BLAS_THREADS=openblas leaves every pool alone. One mutex serialises the threaded calls of
// all the copies (each copy's job buffers are its own, so this is more than needed, never less).
std::atomic<int64_t> g_shared_calls{0};

void run_shared_jobs(int sync, openblas_dojob_callback dojob, int numjobs, size_t jobdata_elsize,
                     void* jobdata, int dojob_data) {
    g_shared_calls.fetch_add(1, std::memory_order_relaxed);
    run_blas_jobs(sync, dojob, numjobs, jobdata_elsize, jobdata, dojob_data);
}

struct shared_pools {
    std::mutex m;
    unsigned long long seen_adds = ~0ull; // the loader's load count at the last scan (under m)
    std::vector<std::string> adopted;     // paths of the copies that share the pool
    std::vector<std::string> looked_at;   // every OpenBLAS path seen (adopted or not)
};

shared_pools& pools() {
    static shared_pools* p = new shared_pools; // never destroyed: used until the process ends
    return *p;
}

// OpenBLAS 0.3.28 or newer, from openblas_get_config()'s "OpenBLAS 0.3.31.188.0 ...".
bool new_enough(const char* config) {
    int major = 0, minor = 0, patch = 0;
    if (!config || std::sscanf(config, "OpenBLAS %d.%d.%d", &major, &minor, &patch) != 3)
        return false;
    if (major != 0) return major > 0;
    return minor > 3 || (minor == 3 && patch >= 28);
}

// Installs run_shared_jobs in the OpenBLAS at `path` if it qualifies (see the note).
bool adopt(const char* path) {
    using set_fn = void (*)(openblas_threads_callback);
    using config_fn = char* (*)();
    void* h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (!h) return false; // kept open otherwise: the callback must outlive every call
    // (setter, config) as the copies spell them: plain, SciPy's prefix, NumPy's ILP64 suffix
    static constexpr const char* names[][2] = {
        {"openblas_set_threads_callback_function", "openblas_get_config"},
        {"scipy_openblas_set_threads_callback_function", "scipy_openblas_get_config"},
        {"scipy_openblas_set_threads_callback_function64_", "scipy_openblas_get_config64_"},
        {"openblas_set_threads_callback_function64_", "openblas_get_config64_"},
    };
    for (const auto& n : names) {
        auto set = reinterpret_cast<set_fn>(dlsym(h, n[0]));
        auto config = reinterpret_cast<config_fn>(dlsym(h, n[1]));
        if (!set || !config) continue;
        if (set == &ISTHMUS_BLAS(openblas_set_threads_callback_function)) break; // ours
        const char* c = config();
        if (!new_enough(c) || std::strstr(c, "USE_OPENMP")) break;
        set(&run_shared_jobs);
        return true;
    }
    dlclose(h);
    return false;
}

// The dynamic loader's count of objects loaded so far (read from the first object listed).
unsigned long long loader_adds() {
    unsigned long long adds = 0;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) {
            *static_cast<unsigned long long*>(data) = info->dlpi_adds;
            return 1; // stop at the first
        },
        &adds);
    return adds;
}

// Adopts the OpenBLAS copies not looked at yet (the caller holds p.m).
void scan_blas_pools(shared_pools& p, unsigned long long adds) {
    std::vector<std::string> paths;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) {
            if (info->dlpi_name && std::strstr(info->dlpi_name, "openblas"))
                static_cast<std::vector<std::string>*>(data)->emplace_back(info->dlpi_name);
            return 0;
        },
        &paths);
    for (const std::string& path : paths) {
        bool seen = false;
        for (const std::string& s : p.looked_at) seen |= s == path;
        if (seen) continue;
        p.looked_at.push_back(path);
        if (adopt(path.c_str())) p.adopted.push_back(path);
    }
    p.seen_adds = adds;
}
#endif

} // namespace

// Note [BLAS pool size]
// ~~~~~~~~~~~~~~~~~~~~~
// scipy-openblas32 and Debian's OpenBLAS are pthread builds: their pool is sized once, when the
// library loads, from OPENBLAS_NUM_THREADS, else GOTO_NUM_THREADS, else OMP_NUM_THREADS, else the
// core count, and knows nothing of OpenMP. isthmus's own loops use the OpenMP pool
// (omp_get_max_threads(): OMP_NUM_THREADS, omp_set_num_threads). Before a product that OpenBLAS may
// thread, its thread count is set to the OpenMP pool's size, so one setting bounds both;
// OPENBLAS_NUM_THREADS, when set, wins for OpenBLAS. The two never run at once (See
// Note [BLAS threads] in matmul.cpp), and with scipy-openblas32 OpenBLAS's jobs run on the OpenMP
// pool itself (See Note [BLAS jobs on the OpenMP pool]). docs/threads.md has the whole picture,
// NumPy's and torch's pools included.
void blas_sync_threads() noexcept {
#if ISTHMUS_BLAS_THREADS_CALLBACK
    static std::once_flag installed;
    std::call_once(installed, install_jobs_callback);
    share_blas_pools();
#endif
    if (blas_threads_from_env() || omp_in_parallel()) return;
    static std::atomic<int> last{0};
    const int want = omp_get_max_threads();
    if (last.exchange(want, std::memory_order_relaxed) != want)
        ISTHMUS_BLAS(openblas_set_num_threads)(want);
}

} // namespace isthmus::cpu

namespace isthmus {

int share_blas_pools() noexcept {
#if ISTHMUS_BLAS_THREADS_CALLBACK
    if (cpu::own_pools_wanted()) return 0;
    auto& p = cpu::pools();
    const unsigned long long adds = cpu::loader_adds();
    std::lock_guard lock(p.m);
    if (adds != p.seen_adds) {
        try {
            cpu::scan_blas_pools(p, adds);
        } catch (...) { // out of memory while listing: try again next time
        }
    }
    return static_cast<int>(p.adopted.size());
#else
    return 0;
#endif
}

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
#if ISTHMUS_BLAS_THREADS_CALLBACK
    info.shared_pools = share_blas_pools();
    info.shared_calls = cpu::g_shared_calls.load(std::memory_order_relaxed);
#endif
    return info;
}

} // namespace isthmus
