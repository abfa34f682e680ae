// Derivatives from C++: <name>_vjp and <name>_jvp of a generic function and a generic kernel, and
// plugin calls recorded by autograd (Note [derived backward], Note [derived forward mode], Note
// [plugin calls in autograd]).
#include "test_support.hpp"

#include <isthmus/autograd.hpp>
#include <isthmus/ops.hpp>

#include <cmath>

namespace ag = isthmus::autograd;

namespace {
// d/dx (exp(-s x) x) and d/ds.
double damped_dx(double x, double s) {
    return std::exp(-s * x) * (1 - s * x);
}
double damped_ds(double x, double s) {
    return -x * x * std::exp(-s * x);
}
} // namespace

TEST_CASE("a generic function's derived vector-Jacobian product") {
    auto lib = pl::load(GOOD_PLUGIN);
    REQUIRE(lib->has_function("damped_vjp"));
    CHECK_FALSE(lib->has_function("scaled_vjp")); // registered with concrete types
    const tensor x = random_doubles({6}, 11);
    const tensor dy = random_doubles({6}, 12);
    const double s = 0.7;
    const value g = lib->get_function("damped_vjp")->call(std::vector<value>{x, s, dy});
    REQUIRE(g.is_cell());
    const auto& items = g.as_cell().items;
    REQUIRE(items.size() == 2);
    const auto xv = x.to_vector<double>(), dyv = dy.to_vector<double>();
    const auto gx = items[0].as_tensor().to_vector<double>();
    double gs = 0;
    for (size_t i = 0; i < xv.size(); ++i) {
        CHECK(gx[i] == doctest::Approx(dyv[i] * damped_dx(xv[i], s)).epsilon(1e-12));
        gs += dyv[i] * damped_ds(xv[i], s);
    }
    CHECK(items[1].as_scalar().to<double>() == doctest::Approx(gs).epsilon(1e-12));
}

TEST_CASE("a generic kernel's derived kernel adds the input's gradient") {
    auto lib = pl::load(GOOD_PLUGIN);
    auto vjp = lib->get_kernel("ripple_vjp");
    const tensor x = random_doubles({5}, 13);
    const tensor dy = random_doubles({5}, 14);
    tensor y = tensor::empty({5}, dtype::float64, isthmus::MEMRESOURCE_CPU);
    tensor gx = isthmus::zeros({5}, dtype::float64);
    const value args[] = {x, y, dy, gx};
    pl::parallel_do({5}, args, *vjp);
    const auto xv = x.to_vector<double>(), dyv = dy.to_vector<double>();
    std::vector<double> ref(5, 0.0);
    for (size_t i = 0; i < 5; ++i) {
        const size_t j = std::min<size_t>(i + 1, 4);
        ref[i] += dyv[i] * xv[j];
        ref[j] += dyv[i] * xv[i];
    }
    const auto got = gx.to_vector<double>();
    for (size_t i = 0; i < 5; ++i) CHECK(got[i] == doctest::Approx(ref[i]).epsilon(1e-12));
}

TEST_CASE("a generic function's derived forward mode gives its results and their tangents") {
    auto lib = pl::load(GOOD_PLUGIN);
    const tensor x = random_doubles({7}, 21);
    const tensor dx = random_doubles({7}, 22);
    const double s = 0.4, ds = -1.5;
    const value r = lib->get_function("damped_jvp")->call(std::vector<value>{x, s, dx, ds});
    REQUIRE(r.is_cell());
    const auto& items = r.as_cell().items;
    REQUIRE(items.size() == 2);
    const auto xv = x.to_vector<double>(), dxv = dx.to_vector<double>();
    const auto y = items[0].as_tensor().to_vector<double>();
    const auto dy = items[1].as_tensor().to_vector<double>();
    for (size_t i = 0; i < xv.size(); ++i) {
        CHECK(y[i] == doctest::Approx(std::exp(-s * xv[i]) * xv[i]).epsilon(1e-14));
        const double want = damped_dx(xv[i], s) * dxv[i] + damped_ds(xv[i], s) * ds;
        CHECK(dy[i] == doctest::Approx(want).epsilon(1e-12));
    }
    // a tangent of the wrong shape is a typed error naming the sizes
    const tensor short_dx = random_doubles({3}, 23);
    const std::string e = error_of([&] {
        lib->get_function("damped_jvp")->call(std::vector<value>{x, s, short_dx, ds});
    });
    CHECK(contains(e, "a tangent has size 3 along dimension 0 where its input has 7"));
}

TEST_CASE("a generic kernel's derived forward mode writes its outputs and adds their tangents") {
    auto lib = pl::load(GOOD_PLUGIN);
    auto jvp = lib->get_kernel("ripple_jvp");
    const tensor x = random_doubles({6}, 24);
    const tensor dx = random_doubles({6}, 25);
    tensor y = isthmus::zeros({6}, dtype::float64);
    tensor ty = isthmus::full({6}, 1.0, dtype::float64); // added to
    const value args[] = {x, y, dx, ty};
    pl::parallel_do({6}, args, *jvp);
    const auto xv = x.to_vector<double>(), dxv = dx.to_vector<double>();
    const auto yv = y.to_vector<double>(), tv = ty.to_vector<double>();
    for (size_t i = 0; i < 6; ++i) {
        const size_t j = std::min<size_t>(i + 1, 5);
        CHECK(yv[i] == doctest::Approx(xv[i] * xv[j]).epsilon(1e-15));
        CHECK(tv[i] == doctest::Approx(1.0 + dxv[i] * xv[j] + xv[i] * dxv[j]).epsilon(1e-12));
    }
}

TEST_CASE("plugin calls and launches on tensors that require grad are recorded") {
    auto lib = pl::load(GOOD_PLUGIN);
    const tensor x = random_doubles({4}, 15);
    x.set_requires_grad();
    const value r = lib->get_function("damped")->call(std::vector<value>{x, 0.5});
    const tensor y = r.as_tensor();
    REQUIRE(y.requires_grad());
    ag::backward({isthmus::sum(y)});
    const auto xv = x.to_vector<double>(), gx = x.grad().to_vector<double>();
    for (size_t i = 0; i < 4; ++i) CHECK(gx[i] == doctest::Approx(damped_dx(xv[i], 0.5)));

    const tensor x2 = random_doubles({4}, 16);
    x2.set_requires_grad();
    tensor out = isthmus::zeros({4}, dtype::float64);
    const value args[] = {x2, out};
    pl::parallel_do({4}, args, *lib->get_kernel("ripple"));
    const tensor recorded = args[1].as_tensor(); // the value's handle carries the node
    REQUIRE(recorded.requires_grad());
    ag::backward({isthmus::sum(recorded)});
    const auto v = x2.to_vector<double>(), g2 = x2.grad().to_vector<double>();
    CHECK(g2[0] == doctest::Approx(v[1]));
    CHECK(g2[3] == doctest::Approx(v[2] + 2 * v[3])); // x[3] x[4->3] at the clamped end

    // writing into a tensor that requires grad is refused before the launch
    const value bad[] = {x2, x2};
    CHECK_THROWS_AS(pl::parallel_do({4}, bad, *lib->get_kernel("ripple")), isthmus::runtime_error);
}
