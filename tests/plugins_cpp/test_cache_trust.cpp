// The compile cache's file primitives in a hostile directory (Note [cache trust model] in
// plugins/src/compile_cache.cpp): no write through a planted name, fresh temporary names, the
// reasons an entry or a directory is refused. No compiler runs here (tests/python/
// test_cache_trust.py compiles).
#include "test_support.hpp"

#include "compile_cache.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace fs = std::filesystem;

namespace {

// A fresh directory (mode 0755) under the temporary directory, and a victims directory beside it.
struct scratch {
    fs::path dir, victims;
    explicit scratch(const std::string& tag) {
        const fs::path base =
            fs::temp_directory_path() / ("isthmus_trust_" + tag + "_" + std::to_string(::getpid()));
        fs::remove_all(base);
        dir = base / "cache";
        victims = base / "victims";
        fs::create_directories(dir);
        fs::create_directories(victims);
        ::chmod(dir.c_str(), 0755);
    }
    ~scratch() {
        std::error_code ec;
        fs::remove_all(dir.parent_path(), ec);
    }
};

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void put(const fs::path& p, const std::string& s) {
    std::ofstream(p, std::ios::binary) << s;
}

size_t count(const fs::path& d) {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(d)) ++n;
    return n;
}

// A valid entry: `so` with these bytes and a .meta recording their size and hash.
void make_entry(const fs::path& so, const fs::path& meta, const std::string& bytes) {
    put(so, bytes);
    pl::fnv h;
    h.add(bytes.data(), bytes.size());
    put(meta, pl::meta_text(bytes.size(), h.hex(), ""));
}

} // namespace

TEST_CASE("write_atomically replaces a planted symlink and never writes through it") {
    scratch s("write");
    put(s.victims / "v.txt", "victim");
    fs::create_symlink(s.victims / "v.txt", s.dir / "e.meta");
    fs::create_symlink(s.victims / "created", s.dir / "e.cpp"); // dangling: O_CREAT would create
    pl::write_atomically(s.dir / "e.meta", "new meta");
    pl::write_atomically(s.dir / "e.cpp", "new source");
    CHECK(slurp(s.victims / "v.txt") == "victim");
    CHECK(!fs::exists(s.victims / "created"));
    CHECK(count(s.victims) == 1);
    CHECK(!fs::is_symlink(s.dir / "e.meta"));
    CHECK(slurp(s.dir / "e.meta") == "new meta");
    CHECK(slurp(s.dir / "e.cpp") == "new source");
    CHECK(count(s.dir) == 2); // no temporary file left
}

TEST_CASE("temporary names are fresh, not the pid, and created exclusively") {
    scratch s("temp");
    const pl::temp_file a = pl::make_temp(s.dir / "e.so"), b = pl::make_temp(s.dir / "e.so");
    const std::string na = a.path.filename().string(), nb = b.path.filename().string();
    CHECK(na != nb);
    CHECK(na.rfind("e.so.tmp.", 0) == 0);
    CHECK(na.size() == std::string("e.so.tmp.").size() + 12);
    CHECK(na.find(std::to_string(::getpid())) == std::string::npos);
    struct stat st {};
    REQUIRE(::fstat(a.fd.fd, &st) == 0);
    CHECK(S_ISREG(st.st_mode));
    CHECK((st.st_mode & 022) == 0);
    CHECK(pl::lstat_problem(a.path).empty());
}

TEST_CASE("entry_problem names why it refuses an entry") {
    scratch s("entry");
    const fs::path so = s.dir / "e.so", meta = s.dir / "e.meta";
    make_entry(so, meta, "plugin bytes");
    CHECK(pl::entry_problem(so, meta).empty());
    put(so, "plugin bytez"); // same size, other bytes
    CHECK(pl::entry_problem(so, meta) == ".so does not have the hash the .meta records");

    make_entry(so, meta, "plugin bytes");
    ::chmod(so.c_str(), 0646);
    CHECK(pl::entry_problem(so, meta) == ".so is writable by group or others");
    ::chmod(so.c_str(), 0644);

    fs::create_hard_link(so, s.victims / "link");
    CHECK(pl::entry_problem(so, meta) == ".so has 2 hard links");
    fs::remove(s.victims / "link");

    fs::remove(so);
    put(s.victims / "foreign.so", "plugin bytes"); // the bytes the .meta records, elsewhere
    fs::create_symlink(s.victims / "foreign.so", so);
    CHECK(pl::entry_problem(so, meta) == ".so is a symlink");

    fs::remove(so);
    REQUIRE(::mkfifo(so.c_str(), 0644) == 0); // refused without blocking on the open
    CHECK(pl::entry_problem(so, meta) == ".so is not a regular file");

    fs::remove(so);
    CHECK(pl::entry_problem(so, meta) == ".so is missing");
    make_entry(so, meta, "plugin bytes");
    fs::rename(meta, s.victims / "meta");
    fs::create_symlink(s.victims / "meta", meta);
    CHECK(pl::entry_problem(so, meta) == ".meta is a symlink");
    CHECK(pl::read_meta(meta).empty());
}

TEST_CASE("the cache directory may be writable by others only with the sticky bit") {
    scratch s("dir");
    CHECK(pl::cache_dir_ready(s.dir, false));
    ::chmod(s.dir.c_str(), 0777);
    CHECK(contains(error_of([&] { pl::cache_dir_ready(s.dir, false); }),
                   "is writable by group or others without the sticky bit"));
    ::chmod(s.dir.c_str(), 0775);
    CHECK(contains(error_of([&] { pl::cache_dir_ready(s.dir, true); }), "refusing the cache"));
    ::chmod(s.dir.c_str(), 01777);
    CHECK(pl::cache_dir_ready(s.dir, false));
    const fs::path made = s.dir / "made";
    CHECK(!pl::cache_dir_ready(made, false));
    CHECK(pl::cache_dir_ready(made, true));
    struct stat st {};
    REQUIRE(::stat(made.c_str(), &st) == 0);
    CHECK((st.st_mode & 022) == 0);
}

TEST_CASE("the entry lock is never opened through a planted symlink") {
    scratch s("lock");
    fs::create_symlink(s.victims / "created", s.dir / "e.lock");
    isthmus::interrupt_check ic;
    pl::slow_compile_reporter rep(pl::compile_notice{"e", "C++", "g++", "e.so", false, {}});
    {
        pl::file_lock lock(s.dir / "e.lock", ic, rep);
        CHECK(lock.fd >= 0);
    }
    CHECK(!fs::exists(s.victims / "created"));
    struct stat st {};
    REQUIRE(::lstat((s.dir / "e.lock").c_str(), &st) == 0);
    CHECK(S_ISREG(st.st_mode));
    CHECK((st.st_mode & 0777) == 0600);
}
