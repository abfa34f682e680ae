// compile_string from C++: cold compile, cached load, compile errors with diagnostics.
#include "test_support.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

namespace {
std::string temp_cache() {
    auto d = std::filesystem::temp_directory_path() /
             ("isthmus_test_cache_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d.string();
}
} // namespace

TEST_CASE("compile_string builds, caches and loads a plugin") {
    pl::compile_options o;
    o.cache_dir = temp_cache();
    // Every cold compile reports (threshold 0); the cached load does not (Note [compile notices]).
    std::vector<pl::compile_notice> notices;
    ::setenv("ISTHMUS_COMPILE_NOTICE_SECONDS", "0", 1);
    auto previous =
        pl::set_compile_notice_handler([&](const pl::compile_notice& n) { notices.push_back(n); });
    const std::string src = R"(
ISTHMUS_PLUGIN(cpp_compiled, m) {
    m.def("cube", [](double x) { return x * x * x; }, {"x"});
})";
    auto lib = pl::compile_string("cpp_compiled", src, o);
    CHECK((*lib->get_function("cube"))(3.0).as_scalar().to<double>() == 27.0);
    int so_files = 0;
    for (auto& e : std::filesystem::directory_iterator(o.cache_dir))
        so_files += e.path().extension() == ".so";
    CHECK(so_files == 1);
    CHECK(pl::compile_string("cpp_compiled", src, o) == lib); // from the cache
    pl::set_compile_notice_handler(previous);
    ::unsetenv("ISTHMUS_COMPILE_NOTICE_SECONDS");
    REQUIRE(notices.size() == 1);
    const pl::compile_notice& n = notices[0];
    CHECK(n.plugin == "cpp_compiled");
    CHECK(n.language == "C++");
    CHECK_FALSE(n.waiting);
    CHECK(std::filesystem::path(n.library).parent_path() == std::filesystem::path(o.cache_dir));
    CHECK(std::filesystem::is_regular_file(n.library));
    CHECK(contains(n.message, "compiling plugin 'cpp_compiled' (C++, "));
    CHECK(contains(n.message, n.library));
    // The .meta names the compiler (python -m isthmus.cache list shows it).
    std::ifstream meta(std::filesystem::path(n.library).replace_extension(".meta"));
    std::string text((std::istreambuf_iterator<char>(meta)), std::istreambuf_iterator<char>());
    CHECK(contains(text, "\ncompiler " + n.compiler + "\n"));
    std::filesystem::remove_all(o.cache_dir);
}

TEST_CASE("compile errors carry the compiler's diagnostics with the user's line numbers") {
    pl::compile_options o;
    o.cache_dir = temp_cache();
    const std::string src = "ISTHMUS_PLUGIN(broken, m) {\n    m.def(\"f\", [](double x) {\n"
                            "        return x + undefined_name;\n    });\n}\n";
    try {
        pl::compile_string("broken", src, o);
        FAIL("no compile_error");
    } catch (const pl::compile_error& e) {
        CHECK(contains(e.diagnostics(), "broken.cpp:3:"));
        CHECK(contains(e.diagnostics(), "undefined_name"));
        CHECK(contains(e.what(), "compile_string(\"broken\")"));
    }
    // A failed compile leaves no entry: no source, library or metadata (only the lock file),
    // and the precompiled header's mark that a compile with these flags ran
    // (Note [precompiled plugin header]).
    for (auto& e : std::filesystem::directory_iterator(o.cache_dir)) {
        const bool pch_mark = e.path().filename().string().rfind("isthmus-pch-", 0) == 0 &&
                              e.path().extension() == ".seen";
        CHECK_MESSAGE((e.path().extension() == ".lock" || pch_mark), e.path().string());
    }
    std::filesystem::remove_all(o.cache_dir);
}

TEST_CASE("CUDA source: a missing nvcc and an unknown language are typed errors") {
    pl::compile_options o;
    o.cache_dir = temp_cache();
    o.language = "cuda";
    const char* before = std::getenv("ISTHMUS_NVCC");
    const std::string saved = before ? before : "";
    ::setenv("ISTHMUS_NVCC", "/nonexistent/bin/nvcc", 1);
    try {
        pl::compile_string("cu_none", "ISTHMUS_PLUGIN(cu_none, m) {}", o);
        FAIL("no compile_error");
    } catch (const pl::compile_error& e) {
        CHECK(contains(e.what(), "compile_string(\"cu_none\")"));
        CHECK(contains(e.what(), "$ISTHMUS_NVCC (/nonexistent/bin/nvcc) was not found"));
        CHECK(contains(e.diagnostics(), "looked at:"));
    }
    if (before)
        ::setenv("ISTHMUS_NVCC", saved.c_str(), 1);
    else
        ::unsetenv("ISTHMUS_NVCC");
    o.language = "fortran";
    CHECK(contains(error_of([&] { pl::compile_string("x", "", o); }),
                   "compile_string: unknown language \"fortran\" (expected \"c++\" or \"cuda\")"));
    CHECK_THROWS_AS(pl::compile_string("x", "", o), isthmus::value_error);
    const std::string file = o.cache_dir + "/lang.cu";
    std::ofstream(file) << "ISTHMUS_PLUGIN(lang, m) {}\n";
    CHECK_THROWS_AS(pl::compile_file(file, o), isthmus::value_error);
    std::filesystem::remove_all(o.cache_dir);
}

TEST_CASE("a tiered compile returns a quick build whose kernels move to the optimised one") {
    pl::compile_options o;
    o.cache_dir = temp_cache() + "_tiers";
    o.tiered = true; // See Note [compile tiers]
    const std::string src = R"(
namespace ip = isthmus::plugin;
ISTHMUS_PLUGIN(cpp_tiered, m) {
    m.kernel("cpp_tiered_axpb", [](ip::view<const double, 1> x, ip::view<double, 1> y, double a,
                                   int64_t i) { y(i) = a * x(i) + 1.0; }, {"x", "y", "a"});
})";
    auto lib = pl::compile_string("cpp_tiered", src, o);
    auto k = lib->get_kernel("cpp_tiered_axpb");
    const bool quick = lib->tier() == "quick"; // no precompiled layer for $CXX: one build
    const isthmus_kernel* first = k->abi();
    const tensor x = random_doubles({1000}, 9);
    const auto xv = x.to_vector<double>();
    auto run = [&] {
        tensor y = tensor::empty({1000}, dtype::float64, isthmus::MEMRESOURCE_CPU);
        const value args[] = {x, y, 0.75};
        pl::parallel_do({1000}, args, *k);
        const auto yv = y.to_vector<double>();
        for (size_t i = 0; i < xv.size(); ++i) REQUIRE(yv[i] == 0.75 * xv[i] + 1.0);
    };
    run();
    CHECK(lib->wait_optimised() == "optimised");
    CHECK(lib->tier() == "optimised");
    if (quick) {
        REQUIRE(lib->successor() != nullptr);
        CHECK(k->owner().get() == lib->successor());
        CHECK(k->owner()->path() != lib->path());
        CHECK(k->abi() != first);
        CHECK(k->signature() == first->signature);
        // a later compile of the same source loads the optimised entry
        CHECK(pl::compile_string("cpp_tiered", src, o).get() == lib->successor());
    }
    run();
    pl::wait_for_compiles();
    std::filesystem::remove_all(o.cache_dir);
}
