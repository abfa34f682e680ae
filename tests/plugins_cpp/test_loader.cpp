// Plugin loader: by path and by name, listings, and refusals (missing, not a plugin, wrong ABI).
#include "test_support.hpp"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <thread>

TEST_CASE("load by path lists functions, kernels and types with signatures") {
    auto lib = pl::load(GOOD_PLUGIN);
    CHECK(lib->name() == "good_plugin");
    CHECK(lib->has_function("plus"));
    CHECK(lib->has_kernel("axpb"));
    CHECK_FALSE(lib->has_kernel("plus"));
    const auto fns = lib->function_names();
    CHECK(std::count(fns.begin(), fns.end(), "scaled") == 1); // two overloads, one name
    CHECK(lib->type_names() == std::vector<std::string>{"counter"});
    const std::string d = lib->describe();
    CHECK(contains(d, "function plus(a: float64, b: float64) -> scalar"));
    CHECK(contains(d, "kernel axpb(x: mat, y: mat, a: float64, b: float64, pos: ivec2)"));
    CHECK(contains(d, "event ontick(int, string)"));
    CHECK(pl::load(GOOD_PLUGIN) == lib); // loading again returns the same library
}

TEST_CASE("load by name searches ISTHMUS_PLUGIN_PATH") {
    const std::string dir = std::filesystem::path(GOOD_PLUGIN).parent_path().string();
    ::setenv("ISTHMUS_PLUGIN_PATH", ("/nonexistent:" + dir).c_str(), 1);
    auto lib = pl::load("good_plugin");
    CHECK(lib->name() == "good_plugin");
    ::unsetenv("ISTHMUS_PLUGIN_PATH");
    const std::string e = error_of([] { pl::load("no_such_plugin_xyz"); });
    CHECK(contains(e, "no plugin named \"no_such_plugin_xyz\""));
    CHECK_THROWS_AS(pl::load("no_such_plugin_xyz"), isthmus::runtime_error);
}

TEST_CASE("missing files, non-plugins and ABI mismatches are refused with clear errors") {
    CHECK_THROWS_AS(pl::load("/nonexistent/dir/libx.so"), isthmus::runtime_error);
    CHECK(contains(error_of([] { pl::load("/nonexistent/dir/libx.so"); }), "no such file"));
    const std::string np = error_of([] { pl::load(NOT_A_PLUGIN); });
    CHECK(contains(np, "is not an isthmus plugin"));
    CHECK(contains(np, "isthmus_plugin_entry"));
    const std::string abi = error_of([] { pl::load(WRONG_ABI_PLUGIN); });
    CHECK(contains(abi, "plugin ABI version " + std::to_string(ISTHMUS_PLUGIN_ABI_VERSION + 998)));
    CHECK(contains(abi, "speaks plugin ABI version " + std::to_string(ISTHMUS_PLUGIN_ABI_VERSION)));
    CHECK_THROWS_AS(pl::load(WRONG_ABI_PLUGIN), isthmus::runtime_error);
    CHECK_THROWS_AS(pl::load(""), isthmus::value_error);
}

TEST_CASE("malformed descriptors are refused with a runtime_error naming the fault") {
    // See Note [descriptor validation]: NULL strings the host reads, negative counts, NULL arrays.
    const std::vector<std::pair<int, std::string>> cases = {
        {1, "function 0 f signature is NULL"},
        {2, "function count is -2"},
        {3, "function array is NULL for 1 entries"},
        {4, "function 0 f parameter 0 type name is NULL"},
        {5, "function 0 f parameter count is -3"},
        {6, "type T field v type name is NULL"},
        {7, "type T method array is NULL for 2 entries"},
        {8, "type 0 name is NULL"},
    };
    for (const auto& [k, words] : cases) {
        CAPTURE(k);
        ::setenv("ISTHMUS_TEST_MALFORMED", std::to_string(k).c_str(), 1);
        const std::string e = error_of([] { pl::load(MALFORMED_PLUGIN); });
        CHECK(contains(e, words));
        CHECK_THROWS_AS(pl::load(MALFORMED_PLUGIN), isthmus::runtime_error);
    }
    ::setenv("ISTHMUS_TEST_MALFORMED", "0", 1); // the same file, well formed, loads
    CHECK(pl::load(MALFORMED_PLUGIN)->function_names().size() == 1);
    ::unsetenv("ISTHMUS_TEST_MALFORMED");
}

TEST_CASE("a plugin written in C loads and runs") {
    auto lib = pl::load(C_PLUGIN);
    CHECK(lib->name() == "c_plugin");
    CHECK((*lib->get_function("twice"))(2.5).as_scalar().to<double>() == 5.0);
    CHECK_THROWS_AS((*lib->get_function("twice"))("x"), isthmus::type_error);
}

TEST_CASE("unknown function and kernel names list what the plugin has") {
    auto lib = pl::load(GOOD_PLUGIN);
    const std::string e = error_of([&] { lib->get_function("nope"); });
    CHECK(contains(e, "has no function \"nope\""));
    CHECK(contains(e, "plus"));
    CHECK_THROWS_AS(lib->get_kernel("plus"), isthmus::value_error);
}

TEST_CASE("each plugin defines its own module once, whichever thread calls its entry first") {
    // See Note [the plugin entry's statics]. Plugin b, not loaded yet in this process, has its
    // entry called by eight threads at once (ABI version 0: the host table is left alone).
    void* h = ::dlopen(VISIBLE_PLUGIN_B, RTLD_NOW | RTLD_LOCAL);
    REQUIRE(h != nullptr);
    const void* sym = ::dlsym(h, ISTHMUS_PLUGIN_ENTRY_NAME);
    REQUIRE(sym != nullptr);
    auto entry = reinterpret_cast<isthmus_plugin_entry_fn>(
        const_cast<void*>(*static_cast<const void* const*>(sym)));
    std::vector<const isthmus_plugin*> got(8, nullptr);
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (size_t i = 0; i < got.size(); ++i)
        threads.emplace_back([&, i] {
            while (!go.load()) std::this_thread::yield();
            got[i] = entry(0, nullptr);
        });
    go = true;
    for (auto& t : threads) t.join();
    REQUIRE(got[0] != nullptr);
    for (const isthmus_plugin* d : got) CHECK(d == got[0]);
    CHECK(std::string(got[0]->name) == "visible_plugin_b");
    REQUIRE(got[0]->nfunctions == 1);
    CHECK(std::string(got[0]->functions[0].name) == "visible_b");
    // a and b were compiled header-only with their symbols visible to each other (the layer's
    // inline support functions are one per process then): each still has its own module
    auto a = pl::load(VISIBLE_PLUGIN_A);
    auto b = pl::load(VISIBLE_PLUGIN_B);
    CHECK(&b->descriptor() == got[0]);
    CHECK(&a->descriptor() != got[0]);
    CHECK(a->name() == "visible_plugin_a");
    CHECK(a->function_names() == std::vector<std::string>{"visible_a"});
    CHECK(b->function_names() == std::vector<std::string>{"visible_b"});
    CHECK((*a->get_function("visible_a"))().as_string() == "a");
    CHECK((*b->get_function("visible_b"))().as_string() == "b");
}
