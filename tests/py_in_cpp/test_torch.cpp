// PyTorch through pyvalue: tensors handed over without copies both ways, no_grad, autograd.
#include "support.hpp"

using namespace isthmus;
using namespace isthmus::literals;

TEST_CASE("a runtime tensor becomes a torch tensor on the same memory") {
    if (!have_module("torch")) return;
    pyvalue torch = pyimport("torch");
    tensor t = tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
    pyvalue pt = to_torch(t);
    CHECK(pt.type_name() == "Tensor");
    CHECK(pt.attr("dtype").is(torch.attr("float32")));
    CHECK(from_py<std::vector<int64_t>>(builtins().attr("list")(pt.attr("shape"))) ==
          std::vector<int64_t>{2, 3});
    pt.attr("mul_")(10);                 // torch writes...
    CHECK(t.at<float>({1, 2}) == 60.0f); // ...the runtime tensor sees it
    t.fill(-1.0);
    CHECK(pt.attr("sum")().attr("item")().cast<double>() == -6.0);
    // a transposed view keeps its strides
    pyvalue ptt = to_torch(t.t());
    CHECK(from_py<std::vector<int64_t>>(ptt.attr("stride")()) == std::vector<int64_t>{1, 3});
}

TEST_CASE("a torch tensor becomes a runtime tensor on the same memory") {
    if (!have_module("torch")) return;
    pyvalue torch = pyimport("torch");
    pyvalue pt = torch.attr("arange")(6, "dtype"_kw = torch.attr("float64")).attr("reshape")(2, 3);
    tensor t = from_py<tensor>(pt);
    CHECK(t.shape() == shape_t{2, 3});
    CHECK(t.dtype() == dtype::float64);
    t.fill(2.0);
    CHECK(pt.attr("sum")().attr("item")().cast<double>() == 12.0);
    // See Note [inbound rule]: a tensor that requires grad is refused (BufferError, as every Python
    // entry point refuses it); its detach() shares the same memory
    pyvalue w = torch.attr("ones")(3, "requires_grad"_kw = pybool(true));
    auto refused = python_error_of([&] { (void)from_py<tensor>(w); });
    CHECK(refused.type_name() == "BufferError");
    CHECK(std::string(refused.what()).find("detach()") != std::string::npos);
    tensor tw = from_py<tensor>(w.attr("detach")());
    CHECK(tw.to_vector<float>() == std::vector<float>{1, 1, 1});
    tw.fill(3.0);
    CHECK(w.attr("sum")().attr("item")().cast<double>() == 9.0);
    // a non-contiguous torch view
    pyvalue tr = pt.attr("t")();
    tensor ttr = from_py<tensor>(tr);
    CHECK(ttr.shape() == shape_t{3, 2});
    CHECK(ttr.stride(0) == 1);
}

TEST_CASE("torch.no_grad through enter/exit, with and with_guard") {
    if (!have_module("torch")) return;
    pyvalue torch = pyimport("torch");
    CHECK(bool(torch.attr("is_grad_enabled")()));
    pyvalue ng = torch.attr("no_grad")();
    ng.enter();
    CHECK_FALSE(bool(torch.attr("is_grad_enabled")()));
    ng.exit();
    CHECK(bool(torch.attr("is_grad_enabled")()));
    {
        with_guard g(torch.attr("no_grad")());
        CHECK_FALSE(bool(torch.attr("is_grad_enabled")()));
    }
    CHECK(bool(torch.attr("is_grad_enabled")()));
    // autograd: d/dx sum(x^2) = 2x
    pyvalue x = torch.attr("tensor")(list(1.0, -2.0, 3.0), "requires_grad"_kw = pybool(true));
    pyvalue y = pow(x, 2).attr("sum")();
    y.attr("backward")();
    CHECK(from_py<std::vector<double>>(x.attr("grad").attr("tolist")()) ==
          std::vector<double>{2.0, -4.0, 6.0});
    // in-place update of a leaf under no_grad (the PyQuasar manual's training step)
    with(torch.attr("no_grad")(), [&](pyvalue&) { x -= x.attr("grad") * 0.5; });
    CHECK(from_py<std::vector<double>>(x.attr("tolist")()) == std::vector<double>{0.0, 0.0, 0.0});
    auto e = python_error_of([&] { x -= 1.0; }); // outside no_grad: torch refuses
    CHECK(e.type_name() == "RuntimeError");
}

TEST_CASE("to_torch: memory outlives the tensor handle; reversed, empty and bad tensors") {
    if (!have_module("torch")) return;
    pyvalue torch = pyimport("torch");
    pyvalue pt;
    {
        tensor t = tensor::from_vector(std::vector<double>{1, 2, 3, 4}, {4});
        pt = to_torch(t);
    } // the torch tensor keeps the memory alive (DLPack deleter)
    CHECK(pt.attr("dtype").is(torch.attr("float64")));
    CHECK(from_py<std::vector<double>>(pt.attr("tolist")()) == std::vector<double>{1, 2, 3, 4});
    // every dtype that torch knows crosses with its values
    tensor ti = tensor::from_vector(std::vector<int32_t>{-3, 0, 7}, {3});
    pyvalue pti = to_torch(ti);
    CHECK(pti.attr("dtype").is(torch.attr("int32")));
    CHECK(from_py<std::vector<int64_t>>(pti.attr("tolist")()) == std::vector<int64_t>{-3, 0, 7});
    // empty tensors keep their shape
    pyvalue pe = to_torch(tensor::empty({0, 3}, dtype::float32, MEMRESOURCE_CPU));
    CHECK(from_py<std::vector<int64_t>>(builtins().attr("list")(pe.attr("shape"))) ==
          std::vector<int64_t>{0, 3});
    // bfloat16 and undefined tensors: typed errors, nothing handed over
    CHECK_THROWS_AS(to_torch(tensor::empty({2}, dtype::bfloat16)), type_error);
    CHECK_THROWS_AS(to_torch(tensor()), value_error);
}
