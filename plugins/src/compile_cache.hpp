// The plugin cache's mechanics, shared by the compiler driver and the precompiled header:
// content hashes, atomic writes, the per-entry file lock and running the compiler.
#pragma once

#include "compile_notice.hpp"
#include "isthmus/interrupt.hpp"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace isthmus::plugins {

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
/// The FNV-1a hash of a file's bytes; its size in `*size` when given.
uint64_t file_hash(const fs::path& p, uintmax_t* size);
/// Whitespace-separated words ($CXX may be "ccache g++").
std::vector<std::string> split_words(const std::string& s);
/// The full path of an executable found on PATH ("" when none).
std::string find_in_path(const std::string& exe);
/// A compiler's identity for cache keys: its resolved path, size and modification time.
std::string compiler_identity(const std::string& exe);
/// The machine and CPU the code is built for (-march=native): uname -m, model, feature flags.
std::string target_identity();
/// Whether `artefact` exists and `meta` records its size and hash.
bool cache_valid(const fs::path& artefact, const fs::path& meta);
/// The "word value" lines of a .meta after its magic line; empty when it is missing or foreign.
std::map<std::string, std::string> read_meta(const fs::path& meta);
/// Whether `file` exists and has the size the .meta's `field` records.
bool size_recorded(const fs::path& file, const std::map<std::string, std::string>& fields,
                   const std::string& field);
/// The .meta text recording an artefact's size and hash, plus `extra` lines.
std::string meta_text(const fs::path& artefact, const std::string& extra);
/// Writes `content` to a temporary name beside `target`, then renames it into place.
void write_atomically(const fs::path& target, const std::string& content);

/// An exclusive flock on a cache entry's .lock file, waited for in steps that ask `ic`
/// (Note [interruptible compiles]).
struct file_lock {
    int fd = -1;
    file_lock(const fs::path& p, interrupt_check& ic, slow_compile_reporter& rep);
    ~file_lock();
    file_lock(const file_lock&) = delete;
    file_lock& operator=(const file_lock&) = delete;
};

/// One compiler command of run_compilers, and what it said.
struct compiler_run {
    std::vector<std::string> argv; ///< the command
    fs::path log;                  ///< where its stdout+stderr go while it runs (removed after)
    std::string output;            ///< its stdout+stderr, once it ended
    int status = 0;                ///< its exit status (128 + signal when a signal ended it)
};

/// Runs the commands at once and waits for all of them, filling in output and status. Throws
/// isthmus::interrupted when `ic` stops, after stopping every one (Note [interruptible compiles]).
void run_compilers(std::vector<compiler_run>& runs, interrupt_check& ic,
                   slow_compile_reporter& rep);

/// Runs one compiler command; returns its exit status, with stdout+stderr in `output`.
int run_compiler(const std::vector<std::string>& argv, const fs::path& log, std::string& output,
                 interrupt_check& ic, slow_compile_reporter& rep);

} // namespace isthmus::plugins
