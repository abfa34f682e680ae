// Tests the autograd engine: leaves and grads, graph order, retain/create graph, grad mode, errors.
#include <doctest/doctest.h>

#include "fake_backend.hpp"
#include "test_support.hpp"

#include "isthmus/autograd.hpp"
#include "isthmus/error.hpp"
#include "isthmus/ops.hpp"

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace isthmus;

namespace {

tensor leaf(std::vector<double> v, shape_t shape = {}) {
    tensor t = tensor::from_vector(v, shape);
    t.set_requires_grad();
    return t;
}

} // namespace

TEST_CASE("autograd: a plain tensor carries no state; set_requires_grad makes a leaf") {
    tensor a = tensor::from_vector<double>({1, 2});
    CHECK_FALSE(a.has_autograd());
    CHECK_FALSE(a.requires_grad());
    CHECK(a.is_leaf());
    const tensor b = add(a, 1.0);
    CHECK_FALSE(b.has_autograd()); // nothing recorded for tensors that need no grad
    a.set_requires_grad();
    CHECK(a.requires_grad());
    CHECK(a.is_leaf());
    CHECK(a.grad_fn() == nullptr);
    const tensor c = mul(a, 3.0);
    CHECK(c.requires_grad());
    CHECK_FALSE(c.is_leaf());
    REQUIRE(c.grad_fn() != nullptr);
    CHECK(c.grad_fn()->name() == "mul");
    const tensor copy = a; // copies of a handle share the state
    CHECK(copy.requires_grad());
}

TEST_CASE("autograd: ops on a device's backend record and differentiate there as on the CPU") {
    // The fake device's backend runs float32 add and sum (fake_backend.hpp); every other op of
    // the forward and the backward falls back to the CPU backend. Recording and the formulas
    // sit above the backends (Note [recording at the op layer]), so the gradients are the CPU's.
    auto run = [](resource_id where) {
        tensor x = tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
        tensor w = tensor::from_vector(std::vector<float>{0.5f, -1, 2}, {3});
        x = to_resource(x, where), w = to_resource(w, where);
        x.set_requires_grad();
        w.set_requires_grad();
        const int adds = isthmus_test::fake_kernels::binaries;
        tensor loss = sum(mul(add(x, w), add(x, w))); // sum((x + w)^2), w broadcast
        CHECK((isthmus_test::fake_kernels::binaries > adds) == (where != MEMRESOURCE_CPU));
        loss.backward();
        return std::pair{values(x.grad()), values(w.grad())};
    };
    const auto on_cpu = run(MEMRESOURCE_CPU);
    CHECK(on_cpu.first == std::vector<double>{3, 2, 10, 9, 8, 16}); // 2 (x + w)
    CHECK(on_cpu.second == std::vector<double>{12, 10, 26});        // summed over the rows
    isthmus_test::fake_default_device dev;
    set_transfer_threshold(0);
    const auto on_device = run(isthmus_test::BACKEND_DEV);
    CHECK(on_device.first == on_cpu.first);
    CHECK(on_device.second == on_cpu.second);
}

TEST_CASE("autograd: backward accumulates into leaves, summing every path") {
    tensor x = leaf({1.0, 2.0, 3.0}, {3});
    tensor y = add(mul(x, x), mul(x, 2.0)); // dy/dx = 2x + 2
    sum(y).backward();
    CHECK(values(x.grad()) == std::vector<double>{4, 6, 8});
    sum(mul(x, 3.0)).backward(); // accumulates
    CHECK(values(x.grad()) == std::vector<double>{7, 9, 11});
    x.set_grad(tensor());
    CHECK_FALSE(x.grad().defined());
}

TEST_CASE("autograd: broadcasting sums the gradient back to each input's shape and dtype") {
    tensor a = tensor::from_vector<float>({1, 2, 3}, {3, 1});
    a.set_requires_grad();
    tensor b = leaf({1.0, 10.0}, {2});
    sum(mul(a, b)).backward();
    CHECK(a.grad().shape() == shape_t{3, 1});
    CHECK(a.grad().dtype() == dtype::float32);
    CHECK(values(a.grad()) == std::vector<double>{11, 11, 11});
    CHECK(values(b.grad()) == std::vector<double>{6, 6});
}

TEST_CASE("autograd: a non-scalar output needs a gradient; a given gradient is used") {
    tensor x = leaf({1.0, 2.0}, {2});
    tensor y = mul(x, 2.0);
    const std::string msg = error_of([&] { y.backward(); });
    CHECK(msg.find("only for scalar outputs") != std::string::npos);
    CHECK_THROWS_AS(y.backward(), runtime_error);
    CHECK_FALSE(x.grad().defined()); // nothing accumulated
    y.backward(tensor::from_vector<double>({1.0, -1.0}));
    CHECK(values(x.grad()) == std::vector<double>{2, -2});
    CHECK_THROWS_AS(y.backward(tensor::from_vector<double>({1.0, 2.0, 3.0})), value_error);
}

TEST_CASE("autograd: backward twice needs retain_graph when values were saved") {
    tensor x = leaf({0.5}, {});
    tensor y = exp(x);
    y.backward(tensor(), true);
    y.backward(tensor(), false);
    CHECK(x.grad().item<double>() == doctest::Approx(2 * std::exp(0.5)));
    const std::string msg = error_of([&] { y.backward(); });
    CHECK(msg.find("second time") != std::string::npos);
    CHECK(msg.find("retain_graph") != std::string::npos);
    CHECK(x.grad().item<double>() == doctest::Approx(2 * std::exp(0.5))); // unchanged
}

TEST_CASE("autograd: an in-place change of a saved tensor is an error at backward time") {
    tensor x = leaf({1.0, 2.0}, {2});
    tensor y = exp(x); // saves its output
    tensor z = sum(y);
    {
        autograd::no_grad_guard off;
        binary_inplace(binary_op::add, y, scalar(1.0));
    }
    const std::string msg = error_of([&] { z.backward(); });
    CHECK(msg.find("modified by an in-place operation") != std::string::npos);
    CHECK(msg.find("exp") != std::string::npos);
    CHECK_FALSE(x.grad().defined());
    // a write through another view of the same storage counts too
    tensor w = leaf({1.0, 2.0, 3.0}, {3});
    tensor base = mul(w, 1.0);
    tensor v = sin(base); // saves base
    {
        autograd::no_grad_guard off;
        base.slice(0, 0, 1).fill(5.0);
    }
    CHECK_THROWS_AS(sum(v).backward(), runtime_error);
}

TEST_CASE("autograd: in-place ops on tensors that require grad are refused while recording") {
    tensor x = leaf({1.0, 2.0}, {2});
    const std::string msg = error_of([&] { binary_inplace(binary_op::add, x, scalar(1.0)); });
    CHECK(msg.find("leaf tensor that requires grad") != std::string::npos);
    CHECK(values(x) == std::vector<double>{1, 2}); // unchanged
    tensor y = mul(x, 2.0);
    CHECK_THROWS_AS(unary_inplace(unary_op::exp, y), runtime_error);
    CHECK(values(y) == std::vector<double>{2, 4});
    {
        autograd::no_grad_guard off; // what optimizers do
        binary_inplace(binary_op::sub, x, scalar(0.5));
    }
    CHECK(values(x) == std::vector<double>{0.5, 1.5});
}

TEST_CASE("autograd: no_grad records nothing and nests; the mode is per thread") {
    tensor x = leaf({1.0}, {});
    {
        autograd::no_grad_guard off;
        CHECK_FALSE(autograd::is_grad_enabled());
        tensor y = mul(x, 2.0);
        CHECK_FALSE(y.requires_grad());
        {
            autograd::grad_mode_guard on(true);
            CHECK(mul(x, 2.0).requires_grad());
        }
        CHECK_FALSE(autograd::is_grad_enabled());
        bool other_thread = false;
        std::thread([&] { other_thread = autograd::is_grad_enabled(); }).join();
        CHECK(other_thread);
    }
    CHECK(autograd::is_grad_enabled());
}

TEST_CASE("autograd: detach shares memory but not the graph") {
    tensor x = leaf({1.0, 2.0}, {2});
    tensor y = mul(x, 2.0);
    tensor d = y.detach();
    CHECK_FALSE(d.requires_grad());
    CHECK(d.storage() == y.storage());
    CHECK(y.requires_grad());
    CHECK_FALSE(mul(d, 3.0).requires_grad());
}

TEST_CASE("autograd: integer and bool tensors cannot require grad") {
    tensor i = tensor::from_vector<int64_t>({1, 2});
    const std::string msg = error_of([&] { i.set_requires_grad(); });
    CHECK(msg.find("floating point") != std::string::npos);
    CHECK_FALSE(i.requires_grad());
    CHECK_THROWS_AS(tensor::from_vector<bool>({true}).set_requires_grad(), runtime_error);
    tensor x = leaf({1.0}, {});
    CHECK_THROWS_AS(mul(x, 2.0).set_requires_grad(false), runtime_error);
    // comparisons and argmax give no gradient
    CHECK_FALSE(gt(x, 0.0).requires_grad());
}

TEST_CASE("autograd: grad() returns gradients without touching .grad; unused inputs") {
    tensor x = leaf({1.0, 2.0}, {2});
    tensor u = leaf({3.0}, {});
    tensor y = sum(mul(x, x));
    auto g = autograd::grad({y}, {x}, {}, true);
    CHECK(values(g[0]) == std::vector<double>{2, 4});
    CHECK_FALSE(x.grad().defined());
    CHECK_THROWS_AS(autograd::grad({y}, {u}, {}, true), runtime_error);
    auto g2 = autograd::grad({y}, {u, x}, {}, true, false, true);
    CHECK_FALSE(g2[0].defined());
    CHECK(values(g2[1]) == std::vector<double>{2, 4});
    // gradient with respect to an intermediate tensor
    tensor x2 = mul(x, 3.0);
    tensor z = sum(square(x2));
    auto gz = autograd::grad({z}, {x2});
    CHECK(values(gz[0]) == std::vector<double>{6, 12}); // 2 * x2
}

TEST_CASE("autograd: create_graph gives differentiable gradients (double backward)") {
    tensor x = leaf({0.3, 0.7}, {2});
    tensor y = sum(mul(pow(x, 3.0), 2.0)); // dy/dx = 6x^2, d2y/dx2 = 12x
    auto g = autograd::grad({y}, {x}, {}, false, true);
    REQUIRE(g[0].requires_grad());
    sum(g[0]).backward();
    const auto h = values(x.grad());
    CHECK(h[0] == doctest::Approx(12 * 0.3));
    CHECK(h[1] == doctest::Approx(12 * 0.7));
    // through exp (a saved output), tanh and matmul
    tensor a = leaf({0.1, 0.2, 0.3, 0.4}, {2, 2});
    tensor s = sum(exp(a));
    auto ga = autograd::grad({s}, {a}, {}, false, true);
    auto gga = autograd::grad({sum(ga[0])}, {a});
    const auto want = values(exp(a.detach()));
    const auto got = values(gga[0]);
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]));
}

TEST_CASE("autograd: retain_grad keeps a non-leaf's gradient") {
    tensor x = leaf({1.0, 2.0}, {2});
    tensor y = mul(x, 2.0);
    y.retain_grad();
    sum(square(y)).backward();
    CHECK(values(y.grad()) == std::vector<double>{4, 8});
    CHECK(values(x.grad()) == std::vector<double>{8, 16});
}

TEST_CASE("autograd: an op without a derivative raises naming the op at backward") {
    tensor x = leaf({1.0, 2.0}, {2});
    // view_as reinterprets the bits: recorded as having no derivative, so backward says so
    CHECK_FALSE(x.view_as(dtype::uint64).requires_grad()); // an integer result never does
    tensor z = x.view_as(dtype::float64);
    REQUIRE(z.requires_grad());
    const std::string msg = error_of([&] { sum(z).backward(); });
    CHECK(msg.find("derivative of 'view_as' is not implemented") != std::string::npos);
    CHECK_FALSE(x.grad().defined());
}

TEST_CASE("autograd: array indexing's gradient adds repeated reads") {
    // See Note [array indexing's derivative]
    tensor x = leaf({1.0, 2.0, 3.0}, {3});
    tensor y = index(x, {index_item(tensor::from_vector<int64_t>({2, 0, 2, -1}))});
    CHECK(values(y) == std::vector<double>{3, 1, 3, 3});
    sum(mul(y, tensor::from_vector<double>({1, 10, 100, 1000}))).backward();
    CHECK(values(x.grad()) == std::vector<double>{10, 0, 1101});
}

TEST_CASE("autograd: sort's gradient goes back through its permutation") {
    // See Note [sort's derivative]
    tensor x = leaf({3.0, 1.0, 2.0, 5.0, 4.0, 0.0}, {2, 3});
    tensor y = sort(x, 1, true); // rows descending: {3, 2, 1}, {5, 4, 0}
    CHECK(values(y) == std::vector<double>{3, 2, 1, 5, 4, 0});
    sum(mul(y, tensor::from_vector<double>({1, 10, 100, 1, 10, 100}, {2, 3}))).backward();
    CHECK(values(x.grad()) == std::vector<double>{1, 100, 10, 1, 10, 100});
}

TEST_CASE("autograd: cumprod's gradient, zeros included") {
    // See Note [cumprod's derivative]: x = {2, 0, 3, 0}: y = {2, 0, 0, 0}; with g = 1 everywhere,
    // dx0 = 1 + 0 + 0 + 0, dx1 = 2 + 2*3 + 0 = 8 (the first zero), dx2 = dx3 = 0 (after it)
    tensor x = leaf({2.0, 0.0, 3.0, 0.0}, {4});
    sum(cumprod(x)).backward();
    CHECK(values(x.grad()) == std::vector<double>{1, 8, 0, 0});
    tensor z = leaf({2.0, 3.0, 4.0}, {3}); // no zero: {1 + 3 + 12, 2 + 8, 6}
    sum(cumprod(z, 0)).backward();
    CHECK(values(z.grad()) == std::vector<double>{16, 10, 6});
}

TEST_CASE("autograd: the graph is freed with its last tensor (no reference cycles)") {
    std::weak_ptr<autograd::node> weak;
    tensor x = leaf({1.0, 2.0}, {2});
    {
        tensor y = exp(mul(x, 2.0)); // exp saves its output
        weak = y.grad_fn();
        CHECK_FALSE(weak.expired());
    }
    CHECK(weak.expired());
    {
        tensor y = exp(x);
        weak = y.grad_fn();
        sum(y).backward();
    }
    CHECK(weak.expired());
}

TEST_CASE("autograd: a training loop of a small network reduces its loss") {
    manual_seed(1);
    tensor w1 = mul(randn({1, 8}, dtype::float64), 0.5);
    tensor b1 = zeros({8}, dtype::float64);
    tensor w2 = mul(randn({8, 1}, dtype::float64), 0.5);
    w1.set_requires_grad();
    b1.set_requires_grad();
    w2.set_requires_grad();
    const tensor xs = linspace(-1, 1, 16).reshape({16, 1}).to(dtype::float64);
    const tensor ys = square(xs);
    double first = 0, last = 0;
    for (int step = 0; step < 200; ++step) {
        tensor h = tanh(add(matmul(xs, w1), b1));
        tensor loss = mean(square(sub(matmul(h, w2), ys)));
        loss.backward();
        if (step == 0) first = loss.item<double>();
        last = loss.item<double>();
        autograd::no_grad_guard off;
        for (tensor* p : {&w1, &b1, &w2}) {
            binary_inplace(binary_op::sub, *p, mul(p->grad(), 0.2));
            p->set_grad(tensor());
        }
    }
    CHECK(last < first / 4);
}
