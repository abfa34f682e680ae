// The quick build's direct link (Note [direct links for quick builds] in
// plugins/src/direct_link.cpp): the driver's words, SONAMEs, stub libraries, and a library linked
// by gold against the stubs that loads and runs.
#include "test_support.hpp"

#include "compile_cache.hpp"
#include "direct_link.hpp"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;
namespace dl = isthmus::plugin_host::detail;

namespace {

struct scratch_dir {
    fs::path dir;
    explicit scratch_dir(const std::string& tag) {
        dir =
            fs::temp_directory_path() / ("isthmus_link_" + tag + "_" + std::to_string(::getpid()));
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
    ~scratch_dir() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
};

// The file this process loaded libstdc++ from.
fs::path loaded_libstdcxx() {
    fs::path found;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* out) {
            if (info->dlpi_name && std::strstr(info->dlpi_name, "libstdc++.so")) {
                *static_cast<fs::path*>(out) = info->dlpi_name;
                return 1;
            }
            return 0;
        },
        &found);
    return found;
}

// The stdout and stderr of a shell command, and its exit status.
int run_shell(const std::string& cmd, std::string& out) {
    FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
    REQUIRE(p != nullptr);
    std::array<char, 4096> buf{};
    out.clear();
    for (size_t n; (n = std::fread(buf.data(), 1, buf.size(), p)) > 0;) out.append(buf.data(), n);
    return ::pclose(p);
}

std::string quoted(const std::string& s) {
    return "'" + s + "'";
}

void link_and_run(const fs::path& dir, const std::string& object,
                  const std::vector<std::string>& driver);

} // namespace

TEST_CASE("a driver's -### line splits into its words") {
    CHECK(dl::driver_words(R"( /usr/bin/ld -o "a b" "c\"d" "e\\f" -lm)") ==
          std::vector<std::string>{"/usr/bin/ld", "-o", "a b", "c\"d", "e\\f", "-lm"});
    CHECK(dl::driver_words("").empty());
    CHECK(dl::driver_words("   ").empty());
    CHECK(dl::driver_words(R"("x"y "")") == std::vector<std::string>{"xy", ""});
}

TEST_CASE("SONAMEs are read from shared libraries, and nothing else has one") {
    const fs::path libstdcxx = loaded_libstdcxx();
    REQUIRE(!libstdcxx.empty());
    CHECK(dl::elf_soname(libstdcxx) == std::optional<std::string>("libstdc++.so.6"));
    scratch_dir s("soname");
    CHECK_FALSE(dl::elf_soname(s.dir / "missing.so"));
    std::ofstream(s.dir / "script.so") << "GROUP ( libc.so.6 )\n";
    CHECK_FALSE(dl::elf_soname(s.dir / "script.so"));
    { // the first 40 bytes of a real library: a header cut short
        std::ifstream in(libstdcxx, std::ios::binary);
        std::string head(40, '\0');
        in.read(head.data(), 40);
        std::ofstream(s.dir / "cut.so", std::ios::binary) << head;
    }
    CHECK_FALSE(dl::elf_soname(s.dir / "cut.so"));
    CHECK_FALSE(dl::elf_soname("/proc/self/exe")); // an executable names no SONAME
}

TEST_CASE("a stub library has the SONAME it is given and the machine of the library it stands "
          "for") {
    scratch_dir s("stub");
    const fs::path libstdcxx = loaded_libstdcxx();
    REQUIRE(dl::write_stub_library(s.dir / "stub.so", "libexample.so.3", libstdcxx));
    CHECK(dl::elf_soname(s.dir / "stub.so") == std::optional<std::string>("libexample.so.3"));
    CHECK(fs::file_size(s.dir / "stub.so") < 1024);
    std::ofstream(s.dir / "text") << "not a library";
    CHECK_FALSE(dl::write_stub_library(s.dir / "bad.so", "libx.so.1", s.dir / "text"));
    CHECK_FALSE(fs::exists(s.dir / "bad.so"));
    CHECK_FALSE(dl::write_stub_library(s.dir / "bad.so", "", libstdcxx));
}

TEST_CASE("a probe that failed or printed no gold line gives no direct link, remembered") {
    const std::vector<std::string> a{"isthmus-test-driver-a"};
    CHECK_FALSE(pl::known_direct_link(a));
    CHECK_FALSE(pl::direct_link_from_probe(a, "x.o", "", 1));
    REQUIRE(pl::known_direct_link(a));
    CHECK_FALSE(*pl::known_direct_link(a));
    const std::vector<std::string> b{"isthmus-test-driver-b"};
    CHECK_FALSE(pl::direct_link_from_probe(
        b, "x.o", " /usr/bin/ld.bfd -shared -o /isthmus-direct-link-probe/probe.so x.o\n", 0));
    pl::forget_direct_link(a);
    CHECK_FALSE(pl::known_direct_link(a));
}

TEST_CASE("a library linked by gold against the stubs loads and runs") {
    if (pl::find_in_path("ld.gold").empty() || pl::find_in_path("g++").empty()) {
        MESSAGE("no g++ or ld.gold: nothing to link directly");
        return;
    }
    scratch_dir s("run");
    std::ofstream(s.dir / "lib.cpp") << R"(
        #include <stdexcept>
        #include <string>
        #include <cmath>
        extern "C" int isthmus_link_probe(int n, char* out) {
            std::string s = std::to_string(n) + ":" + std::to_string(std::lround(std::sqrt(n)));
            try {
                if (n < 0) throw std::runtime_error("negative");
            } catch (const std::exception& e) {
                s = e.what();
            }
            for (char c : s) *out++ = c;
            *out = 0;
            return static_cast<int>(s.size());
        })";
    std::string out;
    REQUIRE(run_shell("g++ -std=c++20 -O1 -fPIC -c " + quoted((s.dir / "lib.cpp").string()) +
                          " -o " + quoted((s.dir / "lib.o").string()),
                      out) == 0);
    const std::string object = (s.dir / "lib.o").string();
    // GCC's driver prints collect2's line, Clang's the linker's (and drops a missing input).
    for (const char* cxx : {"g++", "clang++-16", "clang++"}) {
        if (pl::find_in_path(cxx).empty()) continue;
        CAPTURE(cxx);
        link_and_run(s.dir, object,
                     {cxx, "-shared", "-fPIC", "-fuse-ld=gold", "-Wl,--exclude-libs=libstdc++.a"});
    }
}

namespace {

void link_and_run(const fs::path& dir, const std::string& object,
                  const std::vector<std::string>& driver) {
    std::string cmd, probe, out;
    for (const auto& w : pl::direct_link_probe(driver, object)) cmd += quoted(w) + " ";
    REQUIRE(run_shell(cmd, probe) == 0);
    const auto link = pl::direct_link_from_probe(driver, object, probe, 0);
    REQUIRE(link);
    REQUIRE(pl::known_direct_link(driver));
    CHECK(fs::path(link->words.front()).filename() == "ld.gold");
    bool stubbed = false, lto = false;
    for (const auto& w : link->words) {
        lto = lto || w.rfind("-plugin", 0) == 0;
        stubbed = stubbed || w.find("isthmus-link-") != std::string::npos;
        CHECK(w != "-lstdc++"); // replaced by its stub
    }
    CHECK(stubbed);
    CHECK_FALSE(lto);

    cmd.clear();
    for (const auto& w : pl::direct_link_command(*link, {object}, dir / "lib.so"))
        cmd += quoted(w) + " ";
    INFO(cmd);
    REQUIRE(run_shell(cmd, out) == 0);
    void* h = ::dlopen((dir / "lib.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    INFO((h ? "" : ::dlerror()));
    REQUIRE(h != nullptr);
    auto* f = reinterpret_cast<int (*)(int, char*)>(::dlsym(h, "isthmus_link_probe"));
    REQUIRE(reinterpret_cast<void*>(f) != nullptr);
    char buf[64];
    CHECK(f(49, buf) == 4);
    CHECK(std::string(buf) == "49:7");
    f(-1, buf);
    CHECK(std::string(buf) == "negative"); // the C++ runtime's exceptions work
    ::dlclose(h);
}

} // namespace
