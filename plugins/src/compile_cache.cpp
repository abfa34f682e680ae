// The plugin cache's mechanics: hashes, atomic writes, the entry lock, running the compiler.
#include "compile_cache.hpp"

#include "isthmus/error.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

extern char** environ;

namespace isthmus::plugins {

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
}

uint64_t file_hash(const fs::path& p, uintmax_t* size) {
    std::ifstream in(p, std::ios::binary);
    fnv f;
    char buf[1 << 16];
    uintmax_t n = 0;
    while (in) {
        in.read(buf, sizeof buf);
        const auto got = static_cast<size_t>(in.gcount());
        f.add(buf, got);
        n += got;
    }
    if (size) *size = n;
    return f.h;
}

std::vector<std::string> split_words(const std::string& s) {
    std::vector<std::string> r;
    std::istringstream is(s);
    for (std::string w; is >> w;) r.push_back(w);
    return r;
}

std::string find_in_path(const std::string& exe) {
    if (exe.find('/') != std::string::npos) return exe;
    const char* path = std::getenv("PATH");
    std::istringstream is(path ? path : "/usr/bin:/bin");
    for (std::string dir; std::getline(is, dir, ':');) {
        const fs::path p = fs::path(dir.empty() ? "." : dir) / exe;
        if (::access(p.c_str(), X_OK) == 0) return p.string();
    }
    return "";
}

// The compiler's identity for the key: resolved path, size and mtime (per process cache).
std::string compiler_identity(const std::string& exe) {
    static std::mutex mu;
    static std::map<std::string, std::string> cache;
    std::lock_guard lk(mu);
    if (auto it = cache.find(exe); it != cache.end()) return it->second;
    const std::string found = find_in_path(exe);
    ISTHMUS_CHECK(!found.empty(), runtime_error, "compile_string: the C++ compiler \"", exe,
                  "\" was not found on PATH (set CXX to a C++20 compiler)");
    std::error_code ec;
    const fs::path real = fs::canonical(found, ec);
    struct stat st {};
    ::stat((ec ? fs::path(found) : real).c_str(), &st);
    std::string id = (ec ? found : real.string()) + "|" + std::to_string(st.st_size) + "|" +
                     std::to_string(static_cast<long long>(st.st_mtime));
    cache.emplace(exe, id);
    return id;
}

std::string target_identity() {
    static const std::string id = [] {
        struct utsname u {};
        ::uname(&u);
        std::string model, flags;
        std::ifstream in("/proc/cpuinfo");
        for (std::string line; std::getline(in, line);) {
            if (model.empty() && line.rfind("model name", 0) == 0) model = line;
            if (flags.empty() && (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0))
                flags = line;
            if (!model.empty() && !flags.empty()) break;
        }
        return std::string(u.machine) + "|" + model + "|" + flags;
    }();
    return id;
}

std::map<std::string, std::string> read_meta(const fs::path& meta) {
    std::error_code ec;
    std::map<std::string, std::string> fields;
    if (!fs::is_regular_file(meta, ec)) return fields;
    std::istringstream is(read_file(meta));
    std::string line;
    if (!std::getline(is, line) || line != "isthmus-plugin-cache-1") return fields;
    while (std::getline(is, line))
        if (const auto sp = line.find(' '); sp != std::string::npos)
            fields[line.substr(0, sp)] = line.substr(sp + 1);
    return fields;
}

bool size_recorded(const fs::path& file, const std::map<std::string, std::string>& fields,
                   const std::string& field) {
    const auto it = fields.find(field);
    if (it == fields.end()) return false;
    std::error_code ec;
    const uintmax_t size = fs::file_size(file, ec);
    return !ec && std::to_string(size) == it->second;
}

bool cache_valid(const fs::path& so, const fs::path& meta) {
    const auto fields = read_meta(meta);
    const auto hash = fields.find("hash");
    if (hash == fields.end() || !size_recorded(so, fields, "size")) return false;
    uintmax_t got = 0;
    fnv f;
    f.h = file_hash(so, &got);
    return std::to_string(got) == fields.at("size") && f.hex() == hash->second;
}

void write_atomically(const fs::path& target, const std::string& content) {
    const fs::path tmp = target.string() + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << content;
        out.flush();
        ISTHMUS_CHECK(out.good(), runtime_error, "compile_string: cannot write ", tmp.string());
    }
    fs::rename(tmp, target);
}

// Note [interruptible compiles]: a cold compile takes seconds (tens with nvcc), so compile_string
// waits for the compiler, and for another process's cache lock, in 10 ms steps, asking an
// interrupt_check between them (the host's poll: Ctrl-C in Python, Note [interrupting long
// operations]). When the host stops the operation the compiler's process group is sent SIGTERM
// and reaped, its partial output and log removed, the cache lock released, and
// isthmus::interrupted thrown: the cache holds what it held before (no entry, or the old one).
// The compiler runs in a process group of its own so that the signal reaches the driver's
// children (cc1plus, as, ld, nvcc's stages) too; a terminal's Ctrl-C therefore reaches only the
// host, which decides.
constexpr auto k_wait_step = std::chrono::milliseconds(10);

file_lock::file_lock(const fs::path& p, interrupt_check& ic, slow_compile_reporter& rep) {
    fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    ISTHMUS_CHECK(fd >= 0, runtime_error, "compile_string: cannot open lock file ", p.string(),
                  ": ", std::strerror(errno));
    while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK && errno != EINTR) {
            const int err = errno;
            ::close(fd);
            ISTHMUS_THROW(runtime_error, "compile_string: cannot lock ", p.string(), ": ",
                          std::strerror(err));
        }
        if (ic.stop()) { // another process compiles this entry; the host asked to stop
            ::close(fd);
            ic.raise_if_stopped("compile_string (waiting for the cache lock)");
        }
        rep.poll(true); // Note [compile notices]
        std::this_thread::sleep_for(k_wait_step);
    }
}

file_lock::~file_lock() {
    if (fd >= 0) {
        ::flock(fd, LOCK_UN);
        ::close(fd);
    }
}

// Runs the compiler; returns its exit status, with stdout+stderr in `output`. Throws
// isthmus::interrupted when `ic` stops (Note [interruptible compiles]).
namespace {

// Starts argv in a process group of its own (led by the compiler), stdout and stderr into log.
pid_t spawn_compiler(const std::vector<std::string>& argv, const fs::path& log) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
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

void wait_for(pid_t pid, int& status) {
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
}

} // namespace

void run_compilers(std::vector<compiler_run>& runs, interrupt_check& ic,
                   slow_compile_reporter& rep) {
    std::vector<pid_t> pids;
    std::vector<bool> done;
    try {
        for (auto& r : runs) {
            pids.push_back(spawn_compiler(r.argv, r.log));
            done.push_back(false);
        }
    } catch (...) { // a later one could not start: stop and reap the ones that did
        for (size_t k = 0; k < pids.size(); ++k) {
            ::kill(-pids[k], SIGTERM);
            wait_for(pids[k], runs[k].status);
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
                done[k] = true;
                --left;
            }
        }
        if (left == 0) break;
        if (ic.stop()) {
            stopped = true;
            for (size_t k = 0; k < runs.size(); ++k)
                if (!done[k]) {
                    ::kill(-pids[k], SIGTERM);
                    wait_for(pids[k], runs[k].status);
                }
            break;
        }
        rep.poll(false); // Note [compile notices]
        std::this_thread::sleep_for(k_wait_step);
    }
    std::error_code ec;
    for (auto& r : runs) {
        if (!stopped) r.output = read_file(r.log);
        fs::remove(r.log, ec);
        r.status = WIFEXITED(r.status) ? WEXITSTATUS(r.status) : 128 + WTERMSIG(r.status);
    }
    if (stopped) ic.raise_if_stopped("compile_string");
}

int run_compiler(const std::vector<std::string>& argv, const fs::path& log, std::string& output,
                 interrupt_check& ic, slow_compile_reporter& rep) {
    std::vector<compiler_run> runs{{argv, log, {}, 0}};
    run_compilers(runs, ic, rep);
    output = std::move(runs[0].output);
    return runs[0].status;
}

std::string meta_text(const fs::path& artefact, const std::string& extra) {
    uintmax_t size = 0;
    fnv h;
    h.h = file_hash(artefact, &size);
    return "isthmus-plugin-cache-1\nsize " + std::to_string(size) + "\nhash " + h.hex() + "\n" +
           extra;
}

} // namespace isthmus::plugins
