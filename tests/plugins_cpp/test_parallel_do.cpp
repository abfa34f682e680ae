// parallel_do from C++: results against references, access modifiers, and kernel errors.
#include "test_support.hpp"

TEST_CASE("axpb over a 2-d space, contiguous and strided, small and large") {
    auto lib = pl::load(GOOD_PLUGIN);
    auto k = lib->get_kernel("axpb");
    for (const isthmus::shape_t& shape : {isthmus::shape_t{3, 4}, isthmus::shape_t{300, 257}}) {
        const tensor x = random_doubles({shape[1], shape[0]}, 3).t(); // non-contiguous
        tensor y = tensor::empty(shape, dtype::float64, isthmus::MEMRESOURCE_CPU);
        const value args[] = {x, y, 2.0, -0.5};
        pl::parallel_do(shape, args, *k);
        const auto xv = x.to_vector<double>(), yv = y.to_vector<double>();
        for (size_t i = 0; i < xv.size(); ++i) REQUIRE(yv[i] == 2.0 * xv[i] - 0.5);
    }
}

TEST_CASE("positions run in C order over every dimension") {
    auto lib = pl::load(GOOD_PLUGIN);
    tensor out = tensor::empty({7, 9, 70}, dtype::int64, isthmus::MEMRESOURCE_CPU);
    const value args[] = {out};
    pl::parallel_do({7, 9, 70}, args, *lib->get_kernel("index3"));
    bool ok = true;
    for (int64_t i = 0; i < 7; ++i)
        for (int64_t j = 0; j < 9; ++j)
            for (int64_t kk = 0; kk < 70; ++kk)
                ok = ok && out.at<int64_t>({i, j, kk}) == i * 10000 + j * 100 + kk;
    CHECK(ok);
}

namespace {
// Reference index maps of the access modifiers.
int64_t clamp_ref(int64_t i, int64_t n) {
    return std::min(std::max<int64_t>(i, 0), n - 1);
}
int64_t circ_ref(int64_t i, int64_t n) {
    return ((i % n) + n) % n;
}
int64_t mirror_ref(int64_t i, int64_t n) {
    while (i < 0 || i >= n) i = i < 0 ? -i - 1 : 2 * n - 1 - i;
    return i;
}
} // namespace

TEST_CASE("access modifiers: clamped, circular, mirror, checked") {
    auto lib = pl::load(GOOD_PLUGIN);
    const int64_t n = 6;
    const tensor x = random_doubles({n}, 4);
    const auto xv = x.to_vector<double>();
    for (int64_t shift : {-13, -3, 0, 2, 11}) {
        for (auto [name, ref] :
             {std::pair{"shift_clamped", &clamp_ref}, std::pair{"shift_circular", &circ_ref},
              std::pair{"shift_mirror", &mirror_ref}}) {
            tensor y = tensor::empty({n}, dtype::float64, isthmus::MEMRESOURCE_CPU);
            const value args[] = {x, y, value(shift)};
            pl::parallel_do({n}, args, *lib->get_kernel(name));
            const auto yv = y.to_vector<double>();
            for (int64_t i = 0; i < n; ++i) CHECK(yv[i] == xv[ref(i + shift, n)]);
        }
    }
}

TEST_CASE("a stencil's interior skips the map and gives the mapped values") {
    auto lib = pl::load(GOOD_PLUGIN);
    auto k = lib->get_kernel("shift_mirror_stencil");
    CHECK(k->abi()->params[0].flags ==
          (ISTHMUS_PARAM_READ | ISTHMUS_PARAM_AT_POSITION | (13u << ISTHMUS_PARAM_STENCIL_SHIFT)));
    for (int64_t n : {1, 6, 27, 28, 300}) {
        const tensor x = random_doubles({n}, 5);
        const auto xv = x.to_vector<double>();
        for (int64_t shift : {-13, -5, 0, 1, 13}) {
            tensor y = tensor::empty({n}, dtype::float64, isthmus::MEMRESOURCE_CPU);
            const value args[] = {x, y, value(shift)};
            pl::parallel_do({n}, args, *k);
            const auto yv = y.to_vector<double>();
            for (int64_t i = 0; i < n; ++i) CHECK(yv[i] == xv[mirror_ref(i + shift, n)]);
        }
    }
    // a shift beyond the radius lands outside in the interior: checked mode names the cause
    const tensor x = random_doubles({64}, 6);
    tensor y = tensor::empty({64}, dtype::float64, isthmus::MEMRESOURCE_CPU);
    const value args[] = {x, y, value(int64_t{60})};
    pl::checked_scope on;
    CHECK_THROWS_AS(pl::parallel_do({64}, args, *k), isthmus::index_error);
    CHECK(contains(error_of([&] { pl::parallel_do({64}, args, *k); }),
                   "the kernel reads further from the position than its .stencil radius says"));
}

TEST_CASE("a 'checked access out of bounds comes back as index_error with the kernel's message") {
    auto lib = pl::load(GOOD_PLUGIN);
    for (int64_t n : {int64_t{5}, int64_t{100000}}) { // serial and multi-threaded paths
        const tensor x = random_doubles({n}, 5);
        tensor y = tensor::from_vector(std::vector<double>(static_cast<size_t>(n), 0.0));
        const value ok[] = {x, y, value(int64_t{0})};
        pl::parallel_do({n}, ok, *lib->get_kernel("shift_checked"));
        CHECK(y.to_vector<double>() == x.to_vector<double>());
        const value bad[] = {x, y, value(int64_t{1})};
        const std::string e =
            error_of([&] { pl::parallel_do({n}, bad, *lib->get_kernel("shift_checked")); });
        CHECK(contains(e, "shift_checked: index " + std::to_string(n) +
                              " is out of bounds for dimension 0 with size " + std::to_string(n)));
        CHECK_THROWS_AS(pl::parallel_do({n}, bad, *lib->get_kernel("shift_checked")),
                        isthmus::index_error);
    }
}

TEST_CASE("parallel_do checks dims and arguments before running") {
    auto lib = pl::load(GOOD_PLUGIN);
    auto k = lib->get_kernel("axpb");
    tensor x = random_doubles({2, 2}, 6);
    tensor y = tensor::from_vector(std::vector<double>(4, 0.0), {2, 2});
    const value three[] = {x, y, 1.0};
    CHECK(contains(error_of([&] {
                       pl::parallel_do({2, 2}, three, *k);
                   }),
                   "expected 4 argument(s) before the kernel, got 3"));
    CHECK_THROWS_AS(pl::parallel_do({2, 2}, three, *k), isthmus::type_error);
    const value args[] = {x, y, 1.0, 0.0};
    CHECK_THROWS_AS(pl::parallel_do({4}, args, *k), isthmus::value_error);
    CHECK_THROWS_AS(pl::parallel_do({2, -1}, args, *k), isthmus::value_error);
    const value wrong[] = {x, x.to(dtype::float32), 1.0, 0.0};
    CHECK(contains(error_of([&] { pl::parallel_do({2, 2}, wrong, *k); }), "argument 2 (y)"));
    CHECK(y.to_vector<double>() == std::vector<double>(4, 0.0)); // nothing ran
    pl::parallel_do({0, 2}, args, *k);                           // an empty space runs nothing
    CHECK(y.to_vector<double>() == std::vector<double>(4, 0.0));
}
