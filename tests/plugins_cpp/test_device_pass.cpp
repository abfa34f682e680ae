// NVRTC's device pass (Note [NVRTC device pass]): what of a CUDA plugin's text NVRTC sees.
#include "nvrtc_compile.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

namespace pl = isthmus::plugin_host;

namespace {
size_t lines(const std::string& s) {
    return std::count(s.begin(), s.end(), '\n');
}
} // namespace

TEST_CASE("the device pass blanks the ISTHMUS_PLUGIN definition and keeps every line") {
    const std::string src = "ISTHMUS_KERNEL(k, float* y, int64_t i) { y[i] = 1; }\n"
                            "ISTHMUS_PLUGIN(p, m) {\n"
                            "    m.def(\"f\", [](const std::string& s) { return s + \"}\"; });\n"
                            "    m.kernel(\"k\", k{}, {\"y\"}); // a } in a comment\n"
                            "    /* and { in a block comment */ char c = '}';\n"
                            "}\n"
                            "int after = 1'000;\n";
    const std::string out = pl::device_pass_source(src);
    CHECK(out.size() == src.size());
    CHECK(lines(out) == lines(src));
    CHECK(out.find("ISTHMUS_KERNEL(k, float* y, int64_t i) { y[i] = 1; }\n") == 0);
    CHECK(out.find("ISTHMUS_PLUGIN") == std::string::npos);
    CHECK(out.find("m.def") == std::string::npos);
    CHECK(out.find("m.kernel") == std::string::npos);
    CHECK(out.find("int after = 1'000;\n") != std::string::npos);
}

TEST_CASE("the device pass skips literals, raw strings and lookalike names") {
    const std::string src = "const char* s = \"ISTHMUS_PLUGIN(x, m) {}\";\n"
                            "// ISTHMUS_PLUGIN(y, m) { }\n"
                            "#define MY_ISTHMUS_PLUGIN_SUPPORT 1\n"
                            "ISTHMUS_PLUGIN(p, m) {\n"
                            "    const char* r = R\"d(} ) \" {)d\";\n"
                            "    auto l = [] { return '{'; };\n"
                            "}\n"
                            "int tail;\n";
    const std::string out = pl::device_pass_source(src);
    CHECK(lines(out) == lines(src));
    CHECK(out.find("\"ISTHMUS_PLUGIN(x, m) {}\"") != std::string::npos);
    CHECK(out.find("// ISTHMUS_PLUGIN(y, m) { }") != std::string::npos);
    CHECK(out.find("MY_ISTHMUS_PLUGIN_SUPPORT") != std::string::npos);
    CHECK(out.find("R\"d(") == std::string::npos);
    CHECK(out.find("auto l") == std::string::npos);
    CHECK(out.find("int tail;") != std::string::npos);
}

TEST_CASE("an unbalanced ISTHMUS_PLUGIN is left for the compiler to report") {
    const std::string src = "ISTHMUS_PLUGIN(p, m) {\n  m.def(\"f\", g);\n";
    CHECK(pl::device_pass_source(src) == src);
    CHECK(pl::device_pass_source("ISTHMUS_PLUGIN") == "ISTHMUS_PLUGIN");
}

TEST_CASE("which sources NVRTC can take") {
    CHECK(pl::declares_device_entries("ISTHMUS_KERNEL(k, float* y, int64_t i) {}"));
    CHECK(pl::declares_device_entries("ISTHMUS_KERNEL (k, int64_t i) {}"));
    CHECK_FALSE(pl::declares_device_entries("MY_ISTHMUS_KERNEL(k)"));
    CHECK_FALSE(pl::declares_device_entries("m.kernel(\"k\", [](int64_t i) {});"));
    CHECK(pl::has_extended_lambda("m.kernel(\"k\", [] ISTHMUS_HD(int64_t i) {});"));
    CHECK(pl::has_extended_lambda("m.kernel(\"k\", [=] __host__ __device__ (int64_t i) {});"));
    CHECK(pl::has_extended_lambda("auto f = [&]__device__(int i) { return i; };"));
    CHECK_FALSE(pl::has_extended_lambda("[[nodiscard]] ISTHMUS_HD inline float f();"));
    CHECK_FALSE(pl::has_extended_lambda("m.kernel(\"k\", [](int64_t i) {});"));
}
