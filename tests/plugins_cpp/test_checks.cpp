// Memory safety at the plugin boundary from C++: access modifiers on empty dimensions, checked
// mode, the kernel shape rules of parallel_do, and integer ranges of plugin parameters.
#include "test_support.hpp"

#include <cstdint>
#include <limits>

namespace {

tensor doubles(std::vector<double> v, isthmus::shape_t shape = {}) {
    if (shape.empty()) shape = {static_cast<int64_t>(v.size())};
    return tensor::from_vector(v, shape);
}

// A 10 x 10 buffer of a canary value, and its 4 x 4 block at (3, 3): what a kernel writes
// outside the block is memory it must never touch.
struct fenced {
    static constexpr double canary = -777.0;
    tensor buffer = doubles(std::vector<double>(100, canary), {10, 10});
    tensor block = buffer.slice(0, 3, 7).slice(1, 3, 7);
    bool fence_intact() const {
        for (int64_t i = 0; i < 10; ++i)
            for (int64_t j = 0; j < 10; ++j) {
                const bool inside = i >= 3 && i < 7 && j >= 3 && j < 7;
                if (!inside && buffer.at<double>({i, j}) != canary) return false;
            }
        return true;
    }
};

} // namespace

TEST_CASE("clamped, circular and mirror accesses into an empty dimension raise index_error") {
    auto lib = pl::load(GOOD_PLUGIN);
    const tensor empty = tensor::empty({0}, dtype::float64, isthmus::MEMRESOURCE_CPU);
    for (const char* modifier : {"clamped", "circular", "mirror"}) {
        CAPTURE(modifier);
        tensor y = doubles({1, 2, 3});
        for (int64_t shift : {0, -2, 5}) {
            const value args[] = {empty, y, value(shift)};
            const std::string name = std::string("shift_") + modifier;
            const std::string e =
                error_of([&] { pl::parallel_do({3}, args, *lib->get_kernel(name)); });
            CHECK(contains(e, name + ": index " + std::to_string(shift) +
                                  " has no element to map to: dimension 0 has size 0 ('" +
                                  modifier + " access) in argument 1 (x): index (" +
                                  std::to_string(shift) + ") into shape (0)"));
            CHECK_THROWS_AS(pl::parallel_do({3}, args, *lib->get_kernel(name)),
                            isthmus::index_error);
            CHECK(y.to_vector<double>() == std::vector<double>{1, 2, 3}); // nothing written
        }
    }
    // 'checked on an empty dimension: every index is out of bounds.
    tensor y = doubles({1, 2});
    const value args[] = {empty, y, value(int64_t{0})};
    CHECK(contains(error_of([&] { pl::parallel_do({2}, args, *lib->get_kernel("shift_checked")); }),
                   "index 0 is out of bounds for dimension 0 with size 0 ('checked access) in "
                   "argument 1 (x)"));
    CHECK(y.to_vector<double>() == std::vector<double>{1, 2});
    // An empty space never touches the empty view: nothing to report.
    const value none[] = {empty, tensor::empty({0}, dtype::float64, isthmus::MEMRESOURCE_CPU),
                          value(int64_t{0})};
    pl::parallel_do({0}, none, *lib->get_kernel("shift_clamped"));
}

TEST_CASE("checked mode: the issue's 100 x 100 dims over 4 x 4 views is an index_error") {
    auto lib = pl::load(GOOD_PLUGIN);
    auto k = lib->get_kernel("axpb_free"); // declares no shape rule
    fenced x, y;
    const value args[] = {x.block, y.block, 2.0, 1.0};
    CHECK_FALSE(pl::checked());
    {
        pl::checked_scope on;
        CHECK(pl::checked());
        const std::string e = error_of([&] { pl::parallel_do({100, 100}, args, *k); });
        CHECK(contains(e, "axpb_free: index "));
        CHECK(contains(e, "(unchecked view, checked mode) in argument 1 (x): index ("));
        CHECK(contains(e, "into shape (4, 4)"));
        CHECK_THROWS_AS(pl::parallel_do({100, 100}, args, *k), isthmus::index_error);
        // one past the end in one dimension, in range in the other
        CHECK(contains(error_of([&] {
                           pl::parallel_do({4, 5}, args, *k);
                       }),
                       "axpb_free: index 4 is out of bounds for dimension 1 with size 4 (unchecked "
                       "view, checked mode) in argument 1 (x): index (0, 4) into shape (4, 4)"));
        // the right dims run as usual
        pl::parallel_do({4, 4}, args, *k);
        {
            pl::checked_scope off(false); // scopes nest; the innermost decides
            CHECK_FALSE(pl::checked());
        }
        CHECK(pl::checked());
    }
    CHECK_FALSE(pl::checked());
    CHECK(x.fence_intact());
    CHECK(y.fence_intact());
    for (int64_t i = 0; i < 4; ++i)
        for (int64_t j = 0; j < 4; ++j)
            CHECK(y.block.at<double>({i, j}) == 2.0 * fenced::canary + 1);
}

TEST_CASE("checked mode names a written argument, and covers load / store and functions") {
    auto lib = pl::load(GOOD_PLUGIN);
    pl::checked_scope on;
    // y is too small for dims: the kernel reads x fine and fails on y.
    const tensor x = doubles(std::vector<double>(12, 1.0), {3, 4});
    tensor y = doubles(std::vector<double>(6, 0.0), {3, 2});
    const value args[] = {x, y, 1.0, 0.0};
    const std::string e = error_of([&] {
        pl::parallel_do({3, 4}, args, *lib->get_kernel("axpb_free"));
    });
    CHECK(contains(e, "index 2 is out of bounds for dimension 1 with size 2 (unchecked view, "
                      "checked mode) in argument 2 (y): index ("));
    // load<3> along the last dimension: dims (2, 4) over a 2 x 4 image reads two past the end.
    const tensor img = tensor::from_vector(std::vector<float>(8, 1.f), {2, 4});
    tensor sums = tensor::from_vector(std::vector<float>(8, 0.f), {2, 4});
    const value ok[] = {img, sums};
    pl::parallel_do({2, 2}, ok, *lib->get_kernel("row_sum3"));
    CHECK(sums.at<float>({1, 1}) == 3.f);
    CHECK(contains(error_of([&] {
                       pl::parallel_do({2, 4}, ok, *lib->get_kernel("row_sum3"));
                   }),
                   "index 4 is out of bounds for dimension 1 with size 4 (unchecked view, checked "
                   "mode) in argument 1 (x): index (0, 4) into shape (2, 4)"));
    // A function's views are checked too.
    auto sum_prefix = lib->get_function("sum_prefix");
    CHECK((*sum_prefix)(doubles({1, 2, 3}), int64_t{3}).as_scalar().to<double>() == 6.0);
    const std::string f = error_of([&] { (*sum_prefix)(doubles({1, 2, 3}), int64_t{4}); });
    CHECK(contains(f, "sum_prefix: index 3 is out of bounds for dimension 0 with size 3 (unchecked "
                      "view, checked mode) in argument 1 (x): index (3) into shape (3)"));
    CHECK_THROWS_AS((*sum_prefix)(doubles({1, 2, 3}), int64_t{4}), isthmus::index_error);
}

TEST_CASE("checked mode reaches plugins through the call_flags slot; C plugins run unchecked") {
    auto good = pl::load(GOOD_PLUGIN);
    CHECK((good->features() & ISTHMUS_FEATURE_CHECKED_MODE) != 0);
    auto c = pl::load(C_PLUGIN); // its descriptor predates the features field
    CHECK(c->features() == 0);
    tensor flags = tensor::from_vector(std::vector<int64_t>{-5, -5});
    const value args[] = {flags};
    pl::parallel_do({2}, args, *c->get_kernel("c_flags"));
    CHECK(flags.to_vector<int64_t>() == std::vector<int64_t>{0, 0});
    {
        pl::checked_scope on;
        pl::parallel_do({2}, args, *c->get_kernel("c_flags")); // logs once, runs unchecked
        CHECK(flags.to_vector<int64_t>() == std::vector<int64_t>{1, 1});
    }
    // its declared shape rule is enforced by the host alone
    CHECK_THROWS_AS(pl::parallel_do({3}, args, *c->get_kernel("c_flags")), isthmus::value_error);
}

TEST_CASE("kernel shape rules: arguments declared at the position must cover dims") {
    auto lib = pl::load(GOOD_PLUGIN);
    auto k = lib->get_kernel("axpb"); // declares at_position({"x", "y"})
    fenced x, y;
    const value args[] = {x.block, y.block, 2.0, 1.0};
    const std::string e = error_of([&] { pl::parallel_do({100, 100}, args, *k); });
    CHECK(contains(e, "axpb(x: mat, y: mat, a: float64, b: float64, pos: ivec2): argument 1 (x) is "
                      "indexed at the position, so its leading dimensions must cover dims (100, "
                      "100), but its shape is (4, 4)"));
    CHECK_THROWS_AS(pl::parallel_do({100, 100}, args, *k), isthmus::value_error);
    CHECK_THROWS_AS(pl::parallel_do({4, 5}, args, *k), isthmus::value_error);
    CHECK(y.block.at<double>({0, 0}) == fenced::canary); // nothing ran
    CHECK(x.fence_intact());
    CHECK(y.fence_intact());
    // The written argument is checked the same way.
    const tensor big = doubles(std::vector<double>(25, 1.0), {5, 5});
    const value small_y[] = {big, y.block, 1.0, 0.0};
    CHECK(contains(error_of([&] { pl::parallel_do({5, 5}, small_y, *k); }), "argument 2 (y)"));
    // Larger arguments are fine (a sub-block), and so is an empty space.
    tensor y5 = doubles(std::vector<double>(25, 0.0), {5, 5});
    const value larger[] = {big, y5, 3.0, 0.0};
    pl::parallel_do({2, 3}, larger, *k);
    CHECK(y5.at<double>({1, 2}) == 3.0);
    CHECK(y5.at<double>({2, 2}) == 0.0);
    pl::parallel_do({0, 100}, args, *k);
    // An int32 argument of a kernel is range-checked before anything runs.
    tensor yi = tensor::from_vector(std::vector<int32_t>{7, 7});
    const value wide[] = {yi, value(int64_t{1} << 40)};
    const std::string o =
        error_of([&] { pl::parallel_do({2}, wide, *lib->get_kernel("fill_i32")); });
    CHECK(contains(o, "argument 2 (v): integer 1099511627776 is out of bounds for int32"));
    CHECK_THROWS_AS(pl::parallel_do({2}, wide, *lib->get_kernel("fill_i32")),
                    isthmus::overflow_error);
    CHECK(yi.to_vector<int32_t>() == std::vector<int32_t>{7, 7});
}

TEST_CASE("parallel_do refuses dims whose product does not fit int64") {
    auto lib = pl::load(GOOD_PLUGIN);
    fenced x, y;
    const value args[] = {x.block, y.block, 1.0, 0.0};
    const int64_t big = int64_t{1} << 40;
    CHECK(contains(error_of([&] {
                       pl::parallel_do({big, big}, args, *lib->get_kernel("axpb_free"));
                   }),
                   "has more than 2^63 - 1 positions"));
    CHECK_THROWS_AS(pl::parallel_do({big, big}, args, *lib->get_kernel("axpb_free")),
                    isthmus::value_error);
    CHECK(y.fence_intact());
}

TEST_CASE("integer arguments out of a parameter's range raise overflow_error naming it") {
    auto lib = pl::load(GOOD_PLUGIN);
    struct width {
        const char* fn;
        const char* type;
        int64_t lo, hi;
    };
    const width widths[] = {
        {"echo_i8", "int8", INT8_MIN, INT8_MAX},     {"echo_i16", "int16", INT16_MIN, INT16_MAX},
        {"echo_i32", "int32", INT32_MIN, INT32_MAX}, {"echo_u8", "uint8", 0, UINT8_MAX},
        {"echo_u16", "uint16", 0, UINT16_MAX},       {"echo_u32", "uint32", 0, UINT32_MAX}};
    for (const width& w : widths) {
        CAPTURE(w.fn);
        auto f = lib->get_function(w.fn);
        CHECK((*f)(w.lo).as_scalar().to<int64_t>() == w.lo);
        CHECK((*f)(w.hi).as_scalar().to<int64_t>() == w.hi);
        for (int64_t bad : {w.lo - 1, w.hi + 1, int64_t{1} << 40}) {
            const std::string e = error_of([&] { (*f)(bad); });
            CHECK(contains(e, std::string(w.fn) + ": argument 1 (v): integer " +
                                  std::to_string(bad) + " is out of bounds for " + w.type));
            CHECK_THROWS_AS((*f)(bad), isthmus::overflow_error);
        }
        CHECK((*f)(true).as_scalar().to<int64_t>() == 1); // bools fit every integer
    }
    // 64-bit: int64 <-> uint64 across the sign.
    const uint64_t u_max = std::numeric_limits<uint64_t>::max();
    CHECK((*lib->get_function("echo_u64"))(isthmus::scalar(u_max)).as_scalar().to<uint64_t>() ==
          u_max);
    CHECK_THROWS_AS((*lib->get_function("echo_u64"))(int64_t{-1}), isthmus::overflow_error);
    CHECK_THROWS_AS((*lib->get_function("echo_i64"))(isthmus::scalar(uint64_t{1} << 63)),
                    isthmus::overflow_error);
    CHECK((*lib->get_function("echo_i64"))(INT64_MIN).as_scalar().to<int64_t>() == INT64_MIN);
    // Reals and complex numbers never convert to integers; complex never to reals.
    CHECK_THROWS_AS((*lib->get_function("echo_i32"))(2.0), isthmus::type_error);
    CHECK_THROWS_AS((*lib->get_function("echo_i64"))(std::numeric_limits<double>::quiet_NaN()),
                    isthmus::type_error);
    CHECK_THROWS_AS((*lib->get_function("echo_i64"))(std::numeric_limits<double>::infinity()),
                    isthmus::type_error);
    CHECK_THROWS_AS((*lib->get_function("echo_f64"))(isthmus::scalar(isthmus::complex128_t(1, 2))),
                    isthmus::type_error);
    CHECK_THROWS_AS((*lib->get_function("echo_bool"))(int64_t{2}), isthmus::type_error);
    // Reals: ints convert (uint64 too), float64 rounds to a float32 parameter as a C cast does.
    CHECK((*lib->get_function("echo_f64"))(isthmus::scalar(u_max)).as_scalar().to<double>() ==
          18446744073709551616.0);
    CHECK((*lib->get_function("echo_f32"))(0.1).as_scalar().to<double>() == double(0.1f));
    CHECK((*lib->get_function("echo_c64"))(int64_t{3}).as_scalar().to<isthmus::complex128_t>() ==
          isthmus::complex128_t(3, 0));
}

TEST_CASE("the plugin checks integer ranges itself when the host does not") {
    auto lib = pl::load(GOOD_PLUGIN);
    auto f = lib->get_function("echo_i8");
    // call_abi hands ABI values straight to the plugin (the Python fast path's entry).
    isthmus_value v{};
    v.kind = ISTHMUS_VALUE_INT;
    v.dtype = ISTHMUS_DT_INT64;
    v.u.i = 300;
    const std::string e = error_of([&] { f->call_abi(f->overloads()[0], &v, 1); });
    CHECK(contains(e, "echo_i8: argument 1 (v): integer 300 is out of bounds for int8"));
    CHECK_THROWS_AS(f->call_abi(f->overloads()[0], &v, 1), isthmus::overflow_error);
    v.dtype = ISTHMUS_DT_UINT64;
    v.u.i = -1; // the bits of 2^64 - 1
    CHECK(contains(error_of([&] {
                       auto u32 = lib->get_function("echo_u32");
                       u32->call_abi(u32->overloads()[0], &v, 1);
                   }),
                   "integer 18446744073709551615 is out of bounds for uint32"));
    v.u.i = 100;
    CHECK(f->call_abi(f->overloads()[0], &v, 1).as_scalar().to<int64_t>() == 100);
}
