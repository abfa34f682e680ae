// Tests every derivative of the op table, reductions, matmul and views against finite differences.
#include <doctest/doctest.h>

#include "test_support.hpp"

#include "isthmus/autograd.hpp"
#include "isthmus/ops.hpp"
#include "isthmus/ops/op_table.hpp"

#include <cmath>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

using namespace isthmus;

namespace {

/// Uniform float64 values in [lo, hi).
tensor uniform64(const shape_t& shape, double lo, double hi, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> d(lo, hi);
    std::vector<double> v(static_cast<size_t>(numel_of(shape)));
    for (double& x : v) x = d(rng);
    return tensor::from_vector(v, shape);
}

/// d(sum(f(x) * w))/dx by central differences, one element at a time (w fixed random weights,
/// so every output element counts differently).
std::vector<double> numeric_grad(const std::function<tensor(const tensor&)>& f, const tensor& x,
                                 const tensor& w) {
    autograd::no_grad_guard off;
    const double h = 1e-6;
    std::vector<double> base = values(x), out(base.size());
    for (size_t i = 0; i < base.size(); ++i) {
        auto at = [&](double delta) {
            std::vector<double> v = base;
            v[i] += delta;
            tensor xi = tensor::from_vector(v, x.shape());
            return sum(mul(f(xi), w)).item<double>();
        };
        out[i] = (at(h) - at(-h)) / (2 * h);
    }
    return out;
}

/// The gradient autograd gives for the same function.
std::vector<double> autograd_grad(const std::function<tensor(const tensor&)>& f, const tensor& x0,
                                  const tensor& w) {
    tensor x = x0.clone();
    x.set_requires_grad();
    sum(mul(f(x), w)).backward();
    REQUIRE(x.grad().defined());
    CHECK(x.grad().shape() == x.shape());
    CHECK(x.grad().dtype() == x.dtype());
    return values(x.grad());
}

void check_close(const std::vector<double>& got, const std::vector<double>& want,
                 const std::string& what, double tol = 1e-5) {
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
        INFO(what << " element " << i << ": " << got[i] << " vs " << want[i]);
        CHECK(std::abs(got[i] - want[i]) <= tol * (1 + std::abs(want[i])));
    }
}

void check_function(const std::string& what, const std::function<tensor(const tensor&)>& f,
                    const tensor& x, unsigned seed = 7) {
    tensor probe;
    {
        autograd::no_grad_guard off;
        probe = f(x);
    }
    const tensor w = uniform64(probe.shape(), 0.5, 1.5, seed);
    check_close(autograd_grad(f, x, w), numeric_grad(f, x, w), what);
}

// The op table's derivative rows, as text (name, formula).
struct derivative_row {
    std::string_view name;
    std::string_view formula;
};
#define ISTHMUS_UNARY_ROW(name, saves, formula) {#name, #formula},
const derivative_row formula_unary_rows[] = {ISTHMUS_UNARY_DERIVATIVES(ISTHMUS_UNARY_ROW)};
#undef ISTHMUS_UNARY_ROW
#define ISTHMUS_BINARY_ROW(name, saves, fa, fb) {#name, #fa},
const derivative_row formula_binary_rows[] = {ISTHMUS_BINARY_DERIVATIVES(ISTHMUS_BINARY_ROW)};
#undef ISTHMUS_BINARY_ROW

/// Where each unary op is smooth: an interval inside its domain.
std::pair<double, double> domain_of(std::string_view op) {
    if (op == "acosh") return {1.2, 3.0};
    if (op == "asin" || op == "acos" || op == "atanh") return {-0.8, 0.8};
    if (op == "floor" || op == "ceil" || op == "round") return {0.1, 0.4}; // away from the steps
    if (op == "abs" || op == "sign") return {0.2, 2.0};
    return {0.2, 2.0};
}

} // namespace

TEST_CASE("autograd: every differentiable unary row of the op table matches finite differences") {
    int tested = 0;
    for (size_t i = 0; i < std::size(formula_unary_rows); ++i) {
        const auto row = formula_unary_rows[i];
        if (row.formula == "none") continue;
        const auto op = static_cast<unary_op>(i);
        const auto [lo, hi] = domain_of(row.name);
        const tensor x = uniform64({3, 4}, lo, hi, 11 + static_cast<unsigned>(i));
        check_function(
            std::string(row.name), [op](const tensor& t) { return unary(op, t); }, x);
        // a transposed (non-contiguous) input and a 0-d one
        check_function(
            std::string(row.name) + " (transposed)",
            [op](const tensor& t) { return unary(op, t.t()); }, x);
        check_function(
            std::string(row.name) + " (0-d)", [op](const tensor& t) { return unary(op, t); },
            uniform64({}, lo, hi, 3 + static_cast<unsigned>(i)));
        ++tested;
    }
    CHECK(tested >= 30);
}

TEST_CASE("autograd: every differentiable binary row matches finite differences, broadcasting") {
    int tested = 0;
    for (size_t i = 0; i < std::size(formula_binary_rows); ++i) {
        const auto row = formula_binary_rows[i];
        if (row.formula == "none") continue;
        const auto op = static_cast<binary_op>(i);
        INFO("op " << row.name);
        const tensor a = uniform64({3, 1}, 0.5, 2.0, 21 + static_cast<unsigned>(i));
        // b's values stay away from a's (maximum/minimum ties, mod steps)
        const tensor b = uniform64({4}, 2.5, 3.5, 31 + static_cast<unsigned>(i));
        check_function(
            std::string(row.name) + " d/da", [op, b](const tensor& t) { return binary(op, t, b); },
            a);
        check_function(
            std::string(row.name) + " d/db", [op, a](const tensor& t) { return binary(op, a, t); },
            b);
        check_function(
            std::string(row.name) + " with a scalar",
            [op](const tensor& t) { return binary(op, t, scalar(1.5)); }, a);
        ++tested;
    }
    CHECK(tested >= 9);
}

TEST_CASE("autograd: reductions, with axes and keepdims, match finite differences") {
    const tensor x = uniform64({3, 4, 2}, 0.5, 2.0, 5);
    check_function(
        "sum all", [](const tensor& t) { return sum(t); }, x);
    check_function(
        "sum axis 1", [](const tensor& t) { return sum(t, 1); }, x);
    check_function(
        "sum axes keepdims",
        [](const tensor& t) {
            return sum(t, {0, 2}, true);
        },
        x);
    check_function(
        "mean axis -1", [](const tensor& t) { return mean(t, -1); }, x);
    check_function(
        "mean keepdims", [](const tensor& t) { return mean(t, {1}, true); }, x);
    check_function(
        "prod axis 0", [](const tensor& t) { return prod(t, 0); }, x);
    check_function(
        "var ddof 1", [](const tensor& t) { return var(t, 1, false, 1); }, x);
    check_function(
        "std all", [](const tensor& t) { return std_(t); }, x);
    check_function(
        "max axis 1", [](const tensor& t) { return max(t, 1); }, x);
    check_function(
        "min all", [](const tensor& t) { return min(t); }, x);
    check_function(
        "sum of 0-d", [](const tensor& t) { return sum(t); }, uniform64({}, 1, 2, 9));
}

TEST_CASE("autograd: prod with zeros and max with ties follow torch") {
    tensor x = tensor::from_vector<double>({2.0, 0.0, 3.0, 0.0, 4.0, 5.0}, {2, 3});
    x.set_requires_grad();
    sum(prod(x, 1)).backward();
    // row 0 has one zero: its gradient is the product of the others (6); row 1 likewise (20)
    CHECK(values(x.grad()) == std::vector<double>{0, 6, 0, 20, 0, 0});
    tensor y = tensor::from_vector<double>({1.0, 3.0, 3.0}, {3});
    y.set_requires_grad();
    max(y).backward();
    CHECK(values(y.grad()) == std::vector<double>{0, 0.5, 0.5});
}

TEST_CASE("autograd: matmul in every rank combination matches finite differences") {
    const std::vector<std::pair<shape_t, shape_t>> cases = {
        {{3, 4}, {4, 2}}, {{4}, {4, 2}},       {{3, 4}, {4}},
        {{4}, {4}},       {{2, 3, 4}, {4, 5}}, {{2, 1, 3, 4}, {3, 4, 2}}};
    unsigned seed = 40;
    for (const auto& shapes : cases) {
        // named references, not a structured binding: INFO captures them, and clang refuses to
        // capture structured bindings under -fopenmp (the sanitizer build)
        const shape_t& sa = shapes.first;
        const shape_t& sb = shapes.second;
        const tensor a = uniform64(sa, -1, 1, seed++), b = uniform64(sb, -1, 1, seed++);
        INFO("shapes " << shape_str(sa) << " @ " << shape_str(sb));
        check_function(
            "matmul d/da", [b](const tensor& t) { return matmul(t, b); }, a);
        check_function(
            "matmul d/db", [a](const tensor& t) { return matmul(a, t); }, b);
    }
    const tensor a = uniform64({3, 4}, -1, 1, 1), b = uniform64({2, 3}, -1, 1, 2);
    check_function(
        "matmul of a transposed view", [b](const tensor& t) { return matmul(b, t); }, a);
}

TEST_CASE("autograd: views, concat and stack pass gradients back to each element") {
    const tensor x = uniform64({2, 3, 4}, -1, 1, 3);
    check_function(
        "reshape",
        [](const tensor& t) {
            return exp(t.reshape({4, 6}));
        },
        x);
    check_function(
        "transpose", [](const tensor& t) { return exp(t.transpose(0, 2)); }, x);
    check_function(
        "permute",
        [](const tensor& t) {
            return exp(t.permute({2, 0, 1}));
        },
        x);
    check_function(
        "slice step", [](const tensor& t) { return exp(t.slice(2, 3, 0, -2)); }, x);
    check_function(
        "select", [](const tensor& t) { return exp(t.select(1, -1)); }, x);
    check_function(
        "squeeze/unsqueeze", [](const tensor& t) { return exp(t.unsqueeze(1).squeeze(1)); }, x);
    check_function(
        "expand",
        [](const tensor& t) {
            return exp(t.unsqueeze(0).expand({3, 2, 3, 4}));
        },
        x);
    check_function(
        "flip", [](const tensor& t) { return exp(flip(t, {1})); }, x);
    check_function(
        "concat",
        [](const tensor& t) {
            return concat({t, mul(t, 2.0)}, 1);
        },
        x);
    check_function(
        "stack",
        [](const tensor& t) {
            return stack({t, square(t)}, -1);
        },
        x);
    check_function(
        "where", [](const tensor& t) { return where(gt(t, 0.0), t, square(t)); }, x);
    check_function(
        "clamp", [](const tensor& t) { return clamp(t, scalar(-0.5), scalar(0.5)); }, x);
    check_function(
        "contiguous of a transpose",
        [](const tensor& t) { return exp(t.transpose(0, 1).contiguous()); }, x);
}

TEST_CASE("autograd: a cast passes the gradient through in the input's dtype") {
    // (finite differences through float32 rounding are too coarse: the gradient is w exactly)
    tensor x = uniform64({2, 3}, -1, 1, 4);
    x.set_requires_grad();
    const tensor w = uniform64({2, 3}, 0.5, 1.5, 5).to(dtype::float32);
    sum(mul(cast(x, dtype::float32), w)).backward();
    CHECK(x.grad().dtype() == dtype::float64);
    CHECK(values(x.grad()) == values(w));
}

TEST_CASE("autograd: cumsum over an axis and flattened matches finite differences") {
    const tensor x = uniform64({3, 4}, -1, 1, 8);
    check_function(
        "cumsum axis 1", [](const tensor& t) { return cumsum(t, 1); }, x);
    check_function(
        "cumsum axis -2", [](const tensor& t) { return cumsum(t, -2); }, x);
    check_function(
        "cumsum flattened", [](const tensor& t) { return cumsum(t); }, x);
}

TEST_CASE("autograd: an empty tensor gets an empty gradient") {
    tensor x = tensor::from_vector<double>({}, {0, 3});
    x.set_requires_grad();
    sum(exp(x)).backward();
    REQUIRE(x.grad().defined());
    CHECK(x.grad().shape() == shape_t{0, 3});
}
