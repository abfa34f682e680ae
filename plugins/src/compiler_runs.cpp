// Running compilers: each in a process group of its own, waited for in interruptible steps
// (Note [interruptible compiles] in compile_cache.cpp), background builds paused while a
// foreground compile runs.
#include "compiler_runs.hpp"

#include "isthmus/error.hpp"

#include <poll.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

extern char** environ;

namespace isthmus::plugin_host {

namespace {

// Starts argv in a process group of its own (led by the compiler), stdout and stderr into the
// descriptor `log`.
pid_t spawn_compiler(const std::vector<std::string>& argv, int log) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, log, 1);
    posix_spawn_file_actions_adddup2(&fa, log, 2);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = 0;
    const int rc = ::posix_spawnp(&pid, args[0], &fa, &attr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    ISTHMUS_CHECK(rc == 0, runtime_error, "compile_string: cannot run the compiler \"", argv[0],
                  "\": ", std::strerror(rc));
    return pid;
}

// Waits up to one k_compile_wait_step for a compiler of `pidfds` that is not `done` to end: woken
// by the first one that ends (a small kernel's compile is about 0.2 s, so the 10 ms steps cost 2-5%
// of it), or sleeps the step where the kernel has no pidfd_open (Linux before 5.3).
void wait_for_any(const std::vector<unique_fd>& pidfds, const std::vector<bool>& done) {
    std::vector<pollfd> fds;
    for (size_t k = 0; k < pidfds.size(); ++k) {
        if (done[k]) continue;
        if (pidfds[k].fd < 0) {
            std::this_thread::sleep_for(k_compile_wait_step);
            return;
        }
        fds.push_back({pidfds[k].fd, POLLIN, 0});
    }
    if (!fds.empty()) ::poll(fds.data(), fds.size(), static_cast<int>(k_compile_wait_step.count()));
}

void wait_for(pid_t pid, int& status) {
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
}

// Note [background compiles yield]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// An optimised build in the background (Note [compile tiers] in compile_tiers.cpp) made the quick
// build a user waits for a quarter slower on the 2-core development machine (the saxpy kernel's
// -O1 compile 134-160 ms alone, 182-189 ms beside an -O3 compile), and in the edit loop the next
// kernel's compile often starts while the last one's optimised build runs. So while any foreground
// compile runs (one that a caller waits for: every run_compilers call but the background
// builds'), the background compilers' process groups are stopped (SIGSTOP), and continued
// (SIGCONT) when the last foreground compile ends; a background compiler that starts meanwhile is
// stopped at once. A build that runs a compiler and then a linker (the quick build's direct link)
// keeps them paused from the one to the other (foreground_compile). Only compiler processes are
// paused, never a lock holder a foreground compile could wait for: the background build holds its
// entry's lock while its compiler is stopped, but a foreground compile waits for locks before it
// runs its compiler, not while.
std::mutex g_pause_mu;
int g_foreground = 0;            // foreground run_compilers calls running
std::vector<pid_t> g_background; // the process groups of the background compilers running

void signal_background(int sig) {
    for (pid_t p : g_background) ::kill(-p, sig);
}

void background_started(pid_t p) {
    std::lock_guard lk(g_pause_mu);
    g_background.push_back(p);
    if (g_foreground > 0) ::kill(-p, SIGSTOP);
}

void background_ended(pid_t p) {
    std::lock_guard lk(g_pause_mu);
    g_background.erase(std::remove(g_background.begin(), g_background.end(), p),
                       g_background.end());
}

// Ends a compiler that has not finished (a stopped one too: SIGTERM waits for SIGCONT).
void end_compiler(pid_t pid, int& status) {
    ::kill(-pid, SIGTERM);
    ::kill(-pid, SIGCONT);
    wait_for(pid, status);
}

} // namespace

foreground_compile::foreground_compile() {
    std::lock_guard lk(g_pause_mu);
    if (g_foreground++ == 0) signal_background(SIGSTOP);
}

foreground_compile::~foreground_compile() {
    std::lock_guard lk(g_pause_mu);
    if (--g_foreground == 0) signal_background(SIGCONT);
}

void run_compilers(std::vector<compiler_run>& runs, interrupt_check& ic, slow_compile_reporter& rep,
                   bool background) {
    std::optional<foreground_compile> waited_for; // See Note [background compiles yield]
    if (!background) waited_for.emplace();
    std::vector<pid_t> pids;
    std::vector<bool> done;
    std::vector<unique_fd> logs; // See Note [cache trust model]: no log is opened by a name
    std::vector<unique_fd> pidfds;
    try {
        for (auto& r : runs) {
            temp_file log = make_temp(r.log, ".");
            ::unlink(log.path.c_str());
            logs.push_back(std::move(log.fd));
            pids.push_back(spawn_compiler(r.argv, logs.back().fd));
            if (background) background_started(pids.back());
            pidfds.emplace_back(static_cast<int>(::syscall(SYS_pidfd_open, pids.back(), 0)));
            done.push_back(false);
        }
    } catch (...) { // a later one could not start: stop and reap the ones that did
        for (size_t k = 0; k < pids.size(); ++k) {
            if (background) background_ended(pids[k]);
            end_compiler(pids[k], runs[k].status);
        }
        throw;
    }
    bool stopped = false;
    for (size_t left = runs.size(); left > 0;) {
        for (size_t k = 0; k < runs.size(); ++k) {
            if (done[k]) continue;
            const pid_t r = ::waitpid(pids[k], &runs[k].status, WNOHANG);
            // r < 0 cannot happen for our own child but for EINTR; do not spin on it
            if (r == pids[k] || (r < 0 && errno != EINTR)) {
                if (r < 0) runs[k].status = 0x7f00;
                if (background) background_ended(pids[k]);
                done[k] = true;
                --left;
            }
        }
        if (left == 0) break;
        if (ic.stop()) {
            stopped = true;
            for (size_t k = 0; k < runs.size(); ++k)
                if (!done[k]) {
                    if (background) background_ended(pids[k]);
                    end_compiler(pids[k], runs[k].status);
                }
            break;
        }
        rep.poll(false); // Note [compile notices]
        wait_for_any(pidfds, done);
    }
    for (size_t k = 0; k < runs.size(); ++k) {
        auto& r = runs[k];
        if (!stopped) read_fd(logs[k].fd, r.output);
        r.status = WIFEXITED(r.status) ? WEXITSTATUS(r.status) : 128 + WTERMSIG(r.status);
    }
    if (stopped) ic.raise_if_stopped("compile_string");
}

int run_compiler(const std::vector<std::string>& argv, const fs::path& log, std::string& output,
                 interrupt_check& ic, slow_compile_reporter& rep, bool background) {
    std::vector<compiler_run> runs{{argv, log, {}, 0}};
    run_compilers(runs, ic, rep, background);
    output = std::move(runs[0].output);
    return runs[0].status;
}

} // namespace isthmus::plugin_host
