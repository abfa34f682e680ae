// The plugin cache's mechanics: hashes, trust checks, atomic writes, the entry lock.
#include "compile_cache.hpp"

#include "isthmus/error.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

namespace isthmus::plugin_host {

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
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

// Note [cache trust model]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// The cache directory may be shared (docs/scaling-out.md points a job's workers at one), so the
// cache treats it as hostile ground: a file in it is used only when no one but this user (or
// root) can have put it there, and nothing is ever written through a name found there.
//   - The directory must be owned by this user or root, and not writable by group or others
//     unless it has the sticky bit (as /tmp has): the sticky bit is how a directory is shared
//     explicitly, since others can then add names to it but not rename or remove this user's
//     files. A directory that fails is refused with a runtime_error: compile_string neither
//     loads from it nor writes to it. The cache creates its directory with mode 0755.
//   - Every file the cache reads or loads (the .so, the .meta, an NVRTC entry's device code, the
//     precompiled layer's .gch, .o, .hpp and .meta) must be a regular file (not a symlink, a
//     FIFO, a directory), owned by this user or root, not writable by group or others, with one
//     link (a hard link to someone else's file is not an entry). The .so and .meta are opened
//     with O_NOFOLLOW (and O_NONBLOCK, so a planted FIFO cannot block the open) and checked on
//     the opened descriptor (fstat); the .so is hashed from that descriptor and must match the
//     size and FNV-1a hash its .meta records. An entry that fails any check is rebuilt, never
//     loaded, and the rebuild replaces the planted name rather than writing through it.
//   - Whatever the cache writes is created under a fresh name beside its target (make_temp:
//     `<name>.tmp.<12 random letters and digits>`, O_CREAT | O_EXCL | O_NOFOLLOW, mode 0644)
//     and renamed over the target, which replaces a planted symlink or file. The compiler's
//     output (-o) is such a file, created empty before the compiler runs: GNU ld and as keep an
//     empty output file rather than unlinking and recreating it (GCC's own temporary files rely
//     on this), so even someone who reads the command line cannot plant that name. What the
//     compiler left is checked (a regular file of this user, seal) and loses group and other
//     write before it is renamed into place. Compiler logs are temp_files unlinked as soon as
//     they are open and read back from the descriptor; the lock is opened with O_NOFOLLOW,
//     mode 0600, and a planted one (a symlink, another user's file) is removed first.
// The library is then loaded by its path (dlopen of <dir>/<stem>.so, the name just checked),
// not through /proc/self/fd/N of the checked descriptor: glibc names a library by the string
// dlopen was given, and that name is what dladdr reports (an NVRTC plugin finds its device code
// beside its own file through it, Note [NVRTC plugins] in nvrtc_compile.cpp), what a debugger
// opens, and what dlopen compares first when asked for a library again (a later plugin opened
// through a reused descriptor number would get the old library). Between the check and the
// dlopen only someone who can rename files in the directory could swap the name, and the
// directory check leaves that power to this user and root alone (with the sticky bit, others
// cannot rename or remove a file they do not own).
// What this does not protect against: this user (any of their processes can write the cache,
// and as well their ~/.bashrc or LD_PRELOAD: a replaced .so with a recomputed .meta written by
// the same user loads, and a keyed hash would need a secret those processes can read) and
// root; the directories above the cache directory (a cache under a directory in which another
// user can rename entries is theirs to swap; the default ~/.cache/isthmus is in the home
// directory); denial of service in a shared directory (another user can fill it, or hold an
// entry's name with a file of their own, which compile_string can neither use nor replace: it
// then fails with an error saying so). The .meta's hash detects truncation and corruption, it
// is not a signature: the trust comes from who can write the files.

unique_fd& unique_fd::operator=(unique_fd&& o) noexcept {
    if (this != &o) {
        if (fd >= 0) ::close(fd);
        fd = o.fd;
        o.fd = -1;
    }
    return *this;
}

unique_fd::~unique_fd() {
    if (fd >= 0) ::close(fd);
}

namespace {

bool trusted_owner(uid_t uid) {
    return uid == ::geteuid() || uid == 0;
}

// Calls chunk(data, n) on a descriptor's bytes from offset 0, in order (pread: the offset of a
// log the compiler shares stays). False on a read error.
template <typename F>
bool read_chunks(int fd, F&& chunk) {
    char buf[1 << 16];
    for (off_t at = 0;;) {
        const ssize_t n = ::pread(fd, buf, sizeof buf, at);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return false;
        if (n == 0) return true;
        chunk(buf, static_cast<size_t>(n));
        at += n;
    }
}

} // namespace

bool read_fd(int fd, std::string& out) {
    out.clear();
    return read_chunks(fd, [&](const char* p, size_t n) { out.append(p, n); });
}

namespace {

// The FNV-1a hash of a descriptor's bytes and their count.
bool hash_fd(int fd, fnv& f, uintmax_t& size) {
    size = 0;
    return read_chunks(fd, [&](const char* p, size_t n) {
        f.add(p, n);
        size += n;
    });
}

bool write_fd(int fd, const std::string& s) {
    for (size_t at = 0; at < s.size();) {
        const ssize_t n = ::write(fd, s.data() + at, s.size() - at);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        at += static_cast<size_t>(n);
    }
    return true;
}

// 12 letters and digits from the kernel's random source (std::random_device where it fails).
std::string random_suffix() {
    static const char k_chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    unsigned char bytes[12];
    if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) {
        std::random_device rd;
        for (auto& b : bytes) b = static_cast<unsigned char>(rd());
    }
    std::string s;
    for (unsigned char b : bytes) s += k_chars[b % 36];
    return s;
}

std::map<std::string, std::string> parse_meta(const std::string& text) {
    std::map<std::string, std::string> fields;
    std::istringstream is(text);
    std::string line;
    if (!std::getline(is, line) || line != "isthmus-plugin-cache-1") return fields;
    while (std::getline(is, line))
        if (const auto sp = line.find(' '); sp != std::string::npos)
            fields[line.substr(0, sp)] = line.substr(sp + 1);
    return fields;
}

} // namespace

std::string distrust(const struct stat& st) {
    if (S_ISLNK(st.st_mode)) return "is a symlink";
    if (!S_ISREG(st.st_mode)) return "is not a regular file";
    if (!trusted_owner(st.st_uid))
        return "has a foreign owner (uid " + std::to_string(st.st_uid) + ")";
    if (st.st_mode & (S_IWGRP | S_IWOTH)) return "is writable by group or others";
    if (st.st_nlink != 1) return "has " + std::to_string(st.st_nlink) + " hard links";
    return {};
}

std::string dir_distrust(const struct stat& st) {
    if (!S_ISDIR(st.st_mode)) return "is not a directory";
    if (!trusted_owner(st.st_uid))
        return "has a foreign owner (uid " + std::to_string(st.st_uid) + ")";
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
        return "is writable by group or others without the sticky bit";
    return {};
}

bool cache_dir_ready(const fs::path& dir, bool create) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) {
        ISTHMUS_CHECK(errno == ENOENT, runtime_error,
                      "compile_string: cannot read the cache directory ", dir.string(), ": ",
                      std::strerror(errno));
        if (!create) return false;
        std::error_code ec;
        if (dir.has_parent_path()) fs::create_directories(dir.parent_path(), ec);
        ISTHMUS_CHECK(::mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST, runtime_error,
                      "compile_string: cannot create the cache directory ", dir.string(), ": ",
                      std::strerror(errno));
        ISTHMUS_CHECK(::stat(dir.c_str(), &st) == 0, runtime_error,
                      "compile_string: cannot read the cache directory ", dir.string(), ": ",
                      std::strerror(errno));
    }
    if (const std::string why = dir_distrust(st); !why.empty())
        ISTHMUS_THROW(runtime_error, "compile_string: refusing the cache directory ", dir.string(),
                      ": it ", why,
                      ", so another user could replace the plugins it holds (a private cache "
                      "directory is owned by you and not writable by others: chmod go-w; a "
                      "shared one also has the sticky bit: chmod +t; docs/plugins.md, \"Compile "
                      "cache\")");
    return true;
}

checked_file open_checked(const fs::path& p) {
    checked_file f;
    f.fd.fd = ::open(p.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (f.fd.fd < 0) {
        f.problem = errno == ENOENT  ? "is missing"
                    : errno == ELOOP ? "is a symlink"
                                     : std::string("cannot be opened: ") + std::strerror(errno);
        return f;
    }
    if (::fstat(f.fd.fd, &f.st) != 0)
        f.problem = std::string("fstat: ") + std::strerror(errno);
    else
        f.problem = distrust(f.st);
    if (!f.problem.empty()) f.fd = unique_fd();
    return f;
}

std::string lstat_problem(const fs::path& p, uintmax_t* size) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0)
        return errno == ENOENT ? "is missing" : std::string("lstat: ") + std::strerror(errno);
    if (size) *size = static_cast<uintmax_t>(st.st_size);
    return distrust(st);
}

std::map<std::string, std::string> read_meta(const fs::path& meta) {
    const checked_file f = open_checked(meta);
    std::string text;
    if (!f.problem.empty() || !read_fd(f.fd.fd, text)) return {};
    return parse_meta(text);
}

bool size_recorded(const fs::path& file, const std::map<std::string, std::string>& fields,
                   const std::string& field) {
    const auto it = fields.find(field);
    uintmax_t size = 0;
    return it != fields.end() && lstat_problem(file, &size).empty() &&
           std::to_string(size) == it->second;
}

std::string entry_problem(const fs::path& artefact, const fs::path& meta) {
    const checked_file m = open_checked(meta);
    if (!m.problem.empty()) return ".meta " + m.problem;
    std::string text;
    if (!read_fd(m.fd.fd, text)) return ".meta cannot be read";
    const auto fields = parse_meta(text);
    const auto size = fields.find("size"), hash = fields.find("hash");
    if (size == fields.end() || hash == fields.end()) return ".meta records no size and hash";
    const checked_file a = open_checked(artefact);
    const std::string ext = artefact.extension().string();
    if (!a.problem.empty()) return ext + " " + a.problem;
    if (std::to_string(a.st.st_size) != size->second)
        return ext + " does not have the size the .meta records";
    fnv f;
    uintmax_t got = 0;
    if (!hash_fd(a.fd.fd, f, got)) return ext + " cannot be read";
    if (std::to_string(got) != size->second || f.hex() != hash->second)
        return ext + " does not have the hash the .meta records";
    return {};
}

temp_file make_temp(const fs::path& target, const std::string& tag) {
    for (int attempt = 0;; ++attempt) {
        temp_file t;
        t.path = target.string() + tag + random_suffix();
        t.fd.fd = ::open(t.path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (t.fd.fd >= 0) return t;
        ISTHMUS_CHECK(errno == EEXIST && attempt < 100, runtime_error,
                      "compile_string: cannot create ", t.path.string(), ": ",
                      std::strerror(errno));
    }
}

void install(const fs::path& tmp, const fs::path& target) {
    if (::rename(tmp.c_str(), target.c_str()) == 0) return;
    const int err = errno;
    ::unlink(tmp.c_str());
    std::string why = std::strerror(err);
    struct stat st {};
    if (::lstat(target.c_str(), &st) == 0 && !distrust(st).empty())
        why += " (the name holds a file that " + distrust(st) +
               ": in a shared cache directory another user can hold an entry's name; use a "
               "cache directory of your own, ISTHMUS_CACHE_DIR)";
    ISTHMUS_THROW(runtime_error, "compile_string: cannot replace ", target.string(), ": ", why);
}

void write_atomically(const fs::path& target, const std::string& content) {
    temp_file t = make_temp(target);
    const bool ok = write_fd(t.fd.fd, content);
    const int err = errno;
    t.fd = unique_fd();
    if (!ok) {
        ::unlink(t.path.c_str());
        ISTHMUS_THROW(runtime_error, "compile_string: cannot write ", t.path.string(), ": ",
                      std::strerror(err));
    }
    install(t.path, target);
}

std::pair<uintmax_t, std::string> seal(const fs::path& tmp) {
    checked_file f;
    f.fd.fd = ::open(tmp.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    ISTHMUS_CHECK(f.fd.fd >= 0 && ::fstat(f.fd.fd, &f.st) == 0, runtime_error,
                  "compile_string: cannot open the compiler's output ", tmp.string(), ": ",
                  std::strerror(errno));
    // write bits for group and others (a umask of 002) go; then the checks of any entry apply
    ISTHMUS_CHECK(::fchmod(f.fd.fd, f.st.st_mode & 0755) == 0, runtime_error,
                  "compile_string: cannot chmod ", tmp.string(), ": ", std::strerror(errno));
    f.st.st_mode &= ~static_cast<mode_t>(07022);
    const std::string why = distrust(f.st);
    ISTHMUS_CHECK(why.empty(), runtime_error, "compile_string: the compiler's output ",
                  tmp.string(), " ", why);
    fnv h;
    uintmax_t size = 0;
    ISTHMUS_CHECK(hash_fd(f.fd.fd, h, size), runtime_error, "compile_string: cannot read ",
                  tmp.string(), ": ", std::strerror(errno));
    return {size, h.hex()};
}

std::string meta_text(uintmax_t size, const std::string& hash, const std::string& extra) {
    return "isthmus-plugin-cache-1\nsize " + std::to_string(size) + "\nhash " + hash + "\n" + extra;
}

// Note [interruptible compiles]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A cold compile takes seconds (tens with nvcc), so compile_string waits for the compiler, and for
// another process's cache lock, in 10 ms steps, asking an interrupt_check between them (the host's
// poll: Ctrl-C in Python, Note [interrupting long operations]). When the host stops the operation
// the compiler's process group is sent SIGTERM and reaped, its partial output and log removed, the
// cache lock released, and isthmus::interrupted thrown: the cache holds what it held before (no
// entry, or the old one). The compiler runs in a process group of its own so that the signal
// reaches the driver's children (cc1plus, as, ld, nvcc's stages) too; a terminal's Ctrl-C therefore
// reaches only the host, which decides.

file_lock::file_lock(const fs::path& p, interrupt_check& ic, slow_compile_reporter& rep) {
    // See Note [cache trust model]: never opened through a symlink; a planted lock (a symlink,
    // a FIFO, another user's file, which its owner could hold forever) is removed first.
    for (int attempt = 0;; ++attempt) {
        fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
        std::string why;
        struct stat st {};
        if (fd < 0 && errno == ELOOP)
            why = "is a symlink";
        else if (fd < 0 && errno == EISDIR)
            why = "is not a regular file";
        else if (fd < 0)
            ISTHMUS_THROW(runtime_error, "compile_string: cannot open lock file ", p.string(), ": ",
                          std::strerror(errno));
        else if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
            why = "is not a regular file";
        else if (!trusted_owner(st.st_uid))
            why = "has a foreign owner (uid " + std::to_string(st.st_uid) + ")";
        if (why.empty()) break;
        if (fd >= 0) ::close(fd);
        fd = -1;
        ISTHMUS_CHECK(attempt == 0, runtime_error, "compile_string: the lock file ", p.string(),
                      " ", why, " again after it was removed");
        ISTHMUS_CHECK(::unlink(p.c_str()) == 0, runtime_error, "compile_string: the lock file ",
                      p.string(), " ", why, " and cannot be removed: ", std::strerror(errno));
    }
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
        std::this_thread::sleep_for(k_compile_wait_step);
    }
}

file_lock::~file_lock() {
    if (fd >= 0) {
        ::flock(fd, LOCK_UN);
        ::close(fd);
    }
}

} // namespace isthmus::plugin_host
