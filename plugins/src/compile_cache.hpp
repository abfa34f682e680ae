// The plugin cache's mechanics, shared by the compiler driver and the precompiled header:
// content hashes, the trust checks (Note [cache trust model] in compile_cache.cpp), atomic
// writes, the per-entry file lock and running the compiler.
#pragma once

#include "compile_notice.hpp"
#include "isthmus/interrupt.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <sys/stat.h>
#include <utility>
#include <vector>

namespace isthmus::plugin_host {

namespace fs = std::filesystem;

/// 64-bit FNV-1a, the cache's key and file hash (Note [plugin cache] in compiler.cpp).
struct fnv {
    uint64_t h = 1469598103934665603ull;
    void add(const void* p, size_t n) {
        auto* b = static_cast<const unsigned char*>(p);
        for (size_t i = 0; i < n; ++i) {
            h ^= b[i];
            h *= 1099511628211ull;
        }
    }
    void add(const std::string& s) {
        add(s.data(), s.size());
        const char sep = '\x1f';
        add(&sep, 1);
    }
    std::string hex() const {
        char buf[17];
        std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
        return buf;
    }
};

/// A file's bytes ("" when it cannot be read).
std::string read_file(const fs::path& p);
/// Whitespace-separated words ($CXX may be "ccache g++").
std::vector<std::string> split_words(const std::string& s);
/// Whether the environment variable `var` turns something off: it is "0".
inline bool switched_off(const char* var) {
    const char* v = std::getenv(var);
    return v && v[0] == '0' && v[1] == '\0';
}
/// The full path of an executable found on PATH ("" when none).
std::string find_in_path(const std::string& exe);
/// A compiler's identity for cache keys: its resolved path, size and modification time.
std::string compiler_identity(const std::string& exe);
/// The machine and CPU the code is built for (-march=native): uname -m, model, feature flags.
std::string target_identity();

/// A file descriptor, closed when this goes.
struct unique_fd {
    int fd = -1;
    unique_fd() = default;
    explicit unique_fd(int f) : fd(f) {}
    unique_fd(unique_fd&& o) noexcept : fd(o.fd) { o.fd = -1; }
    unique_fd& operator=(unique_fd&& o) noexcept;
    ~unique_fd();
    unique_fd(const unique_fd&) = delete;
    unique_fd& operator=(const unique_fd&) = delete;
};

/// Why the cache refuses a file with this lstat/fstat status, as "is a symlink", "is not a
/// regular file", "has a foreign owner (uid N)", "is writable by group or others", "has N hard
/// links"; "" when it trusts it (Note [cache trust model] in compile_cache.cpp).
std::string distrust(const struct stat& st);
/// Why the cache refuses its directory with this status ("" when it trusts it).
std::string dir_distrust(const struct stat& st);
/// Whether the cache directory exists and is trusted; creates it first (mode 0755) when
/// `create`. Throws runtime_error when it exists but is refused (Note [cache trust model]).
bool cache_dir_ready(const fs::path& dir, bool create);

/// A cache file opened for reading without following a symlink (O_NOFOLLOW; O_NONBLOCK, so a
/// planted FIFO cannot block the open) and checked on the opened descriptor.
struct checked_file {
    unique_fd fd;        ///< open when `problem` is empty
    struct stat st {};   ///< its fstat
    std::string problem; ///< "" when usable, "is missing", or why it is refused (distrust)
};
checked_file open_checked(const fs::path& p);
/// Why the cache file `p` cannot be used, by lstat ("" when it can; "is missing"); its size in
/// `*size` when given.
std::string lstat_problem(const fs::path& p, uintmax_t* size = nullptr);

/// The "word value" lines of a .meta after its magic line; empty when it is missing, refused
/// or foreign.
std::map<std::string, std::string> read_meta(const fs::path& meta);
/// Whether `file` is a trusted regular file of the size the .meta's `field` records.
bool size_recorded(const fs::path& file, const std::map<std::string, std::string>& fields,
                   const std::string& field);
/// Why `artefact` with `meta` is not a usable cache entry ("" when it is): either file is
/// missing or refused (named by its extension, as ".so is a symlink"), or the .meta does not
/// record the artefact's size and hash. The artefact is hashed from the descriptor checked.
std::string entry_problem(const fs::path& artefact, const fs::path& meta);

/// A file created for this process beside `target`: `<target's name><tag><12 random letters and
/// digits>`, opened with O_CREAT | O_EXCL | O_NOFOLLOW (mode 0644 less the umask), so no name
/// planted before is ever opened (Note [cache trust model]).
struct temp_file {
    unique_fd fd;
    fs::path path;
};
temp_file make_temp(const fs::path& target, const std::string& tag = ".tmp.");
/// The files a build writes before it installs its entry, removed when this goes unless kept: a
/// build that fails, or is stopped, leaves none of them behind.
class removed_unless_kept {
public:
    explicit removed_unless_kept(std::vector<fs::path> files) : files_(std::move(files)) {}
    removed_unless_kept(const removed_unless_kept&) = delete;
    removed_unless_kept& operator=(const removed_unless_kept&) = delete;
    ~removed_unless_kept() {
        std::error_code ec;
        for (const auto& f : files_) fs::remove(f, ec);
    }
    /// `f` stays.
    void keep(const fs::path& f) { std::erase(files_, f); }
    /// Every file stays.
    void keep_all() { files_.clear(); }

private:
    std::vector<fs::path> files_;
};
/// Writes `content` to a new temp_file beside `target`, then renames it over `target`
/// (replacing whatever the name held, never writing through it). Throws runtime_error, leaving
/// no temporary file, when it cannot.
void write_atomically(const fs::path& target, const std::string& content);
/// Checks the file a compiler wrote at `tmp` (a temp_file's name): a regular file of this user,
/// not a symlink. Clears its group and other write bits and returns its size and FNV-1a hash
/// (hex). Throws runtime_error when it is not such a file.
std::pair<uintmax_t, std::string> seal(const fs::path& tmp);
/// Renames `tmp` over `target`; throws runtime_error (removing `tmp`) when it cannot, as when
/// another user's file holds the name in a shared directory.
void install(const fs::path& tmp, const fs::path& target);
/// The .meta text recording an artefact's size and hash, plus `extra` lines.
std::string meta_text(uintmax_t size, const std::string& hash, const std::string& extra);

/// All of a descriptor's bytes from offset 0; false on a read error.
bool read_fd(int fd, std::string& out);

/// The step in which compiles wait for a compiler or a lock, asking their interrupt_check between
/// steps (Note [interruptible compiles]).
inline constexpr auto k_compile_wait_step = std::chrono::milliseconds(10);

/// An exclusive flock on a cache entry's .lock file, waited for in steps that ask `ic`
/// (Note [interruptible compiles]).
struct file_lock {
    int fd = -1;
    file_lock(const fs::path& p, interrupt_check& ic, slow_compile_reporter& rep);
    ~file_lock();
    file_lock(const file_lock&) = delete;
    file_lock& operator=(const file_lock&) = delete;
};

} // namespace isthmus::plugin_host
