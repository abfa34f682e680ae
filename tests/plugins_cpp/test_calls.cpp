// Calling plugin functions from C++: scalars, strings, tensors, overloads, typed functions, errors.
#include "test_support.hpp"

#include <cmath>

TEST_CASE("functions take and return scalars and strings") {
    auto lib = pl::load(GOOD_PLUGIN);
    CHECK((*lib->get_function("plus"))(1.5, 2.25).as_scalar().to<double>() == 3.75);
    CHECK((*lib->get_function("plus"))(1, 2).as_scalar().to<double>() == 3.0); // ints convert
    const value r = (*lib->get_function("iadd"))(int64_t{40}, int64_t{2});
    CHECK(r.as_scalar().type() == dtype::int64);
    CHECK(r.as_scalar().to<int64_t>() == 42);
    CHECK((*lib->get_function("greet"))("plugin").as_string() == "hello plugin");
    CHECK((*lib->get_function("nothing"))().is_none());
}

TEST_CASE("typed functions") {
    auto lib = pl::load(GOOD_PLUGIN);
    auto add = pl::typed<double(double, double)>(*lib, "plus");
    CHECK(add(0.5, 0.25) == 0.75);
    auto greet = pl::typed<std::string(std::string)>(*lib, "greet");
    CHECK(greet("you") == "hello you");
}

TEST_CASE("tensor arguments: views, strides, read-only conversion, written in place") {
    auto lib = pl::load(GOOD_PLUGIN);
    const tensor x = random_doubles({5, 7}, 1);
    double ref = 0;
    for (double v : x.to_vector<double>()) ref += v;
    CHECK((*lib->get_function("total"))(x).as_scalar().to<double>() == doctest::Approx(ref));
    // A transposed (non-contiguous) view gives the same sum; an int tensor is converted.
    CHECK((*lib->get_function("total"))(x.t()).as_scalar().to<double>() == doctest::Approx(ref));
    const tensor xi = tensor::from_vector(std::vector<int32_t>{1, 2, 3, 4}, {2, 2});
    CHECK((*lib->get_function("total"))(xi).as_scalar().to<double>() == 10.0);
    // Written tensors are modified in place, also through a strided view.
    tensor y = tensor::from_vector(std::vector<double>(10, 0.0));
    (*lib->get_function("fill_inplace"))(y.slice(0, 0, 10, 2), 3.0);
    CHECK(y.to_vector<double>() == std::vector<double>{3, 0, 3, 0, 3, 0, 3, 0, 3, 0});
    // ... and must have the exact dtype.
    tensor yf = tensor::from_vector(std::vector<float>(3, 0.f));
    const std::string e = error_of([&] { (*lib->get_function("fill_inplace"))(yf, 1.0); });
    CHECK(contains(e, "exact dtype"));
    CHECK(yf.to_vector<float>() == std::vector<float>(3, 0.f));
}

TEST_CASE("overloads: the float32 and float64 versions of one name") {
    auto lib = pl::load(GOOD_PLUGIN);
    auto f = lib->get_function("scaled");
    const tensor x64 = random_doubles({6}, 2);
    const tensor x32 = x64.to(dtype::float32);
    const value r64 = (*f)(x64, 2.0), r32 = (*f)(x32, 2.0);
    CHECK(r64.as_tensor().dtype() == dtype::float64);
    CHECK(r32.as_tensor().dtype() == dtype::float32);
    const auto a = x64.to_vector<double>(), b = r64.as_tensor().to_vector<double>();
    for (size_t i = 0; i < a.size(); ++i) CHECK(b[i] == 2.0 * a[i]);
    // An int tensor fits no overload exactly; it converts to the first.
    CHECK((*f)(tensor::from_vector(std::vector<int64_t>{1, 2}), 3.0).as_tensor().dtype() ==
          dtype::float32);
    const std::string e = error_of([&] { (*f)(std::string("x"), 1.0); });
    CHECK(contains(e, "no overload accepts (a string, a float64 scalar)"));
    CHECK(contains(e, "scaled(x: vec, s: scalar) -> tensor"));
}

TEST_CASE("fixed vectors from small tensors") {
    auto lib = pl::load(GOOD_PLUGIN);
    auto n = lib->get_function("norm3");
    CHECK((*n)(tensor::from_vector(std::vector<double>{3, 4, 12})).as_scalar().to<double>() ==
          13.0);
    CHECK_THROWS_AS((*n)(tensor::from_vector(std::vector<double>{3, 4})), isthmus::type_error);
}

TEST_CASE(
    "wrong arguments raise type_error before anything runs; plugin errors keep type and text") {
    auto lib = pl::load(GOOD_PLUGIN);
    auto add = lib->get_function("plus");
    const std::string n = error_of([&] { (*add)(1.0); });
    CHECK(contains(n, "plus(a: float64, b: float64) -> scalar: expected 2 argument(s), got 1"));
    CHECK_THROWS_AS((*add)(1.0), isthmus::type_error);
    const std::string t = error_of([&] { (*add)(1.0, "two"); });
    CHECK(contains(t, "argument 2 (b): expected a real number, got a string"));
    CHECK_THROWS_AS((*lib->get_function("fail_value"))("bad thing"), isthmus::value_error);
    CHECK(contains(error_of([&] { (*lib->get_function("fail_value"))("bad thing"); }),
                   "fail_value: bad thing"));
    CHECK_THROWS_AS((*lib->get_function("fail_std"))(), isthmus::runtime_error);
    CHECK(contains(error_of([&] { (*lib->get_function("fail_std"))(); }), "std failure"));
}

TEST_CASE("host callables passed as arguments are called back") {
    auto lib = pl::load(GOOD_PLUGIN);
    int calls = 0;
    auto cb = std::make_shared<pl::callable_object>([&](std::span<const value> args) {
        ++calls;
        CHECK(args.size() == 1);
        return value(args[0].as_scalar().to<double>() * 1.5);
    });
    const value r =
        (*lib->get_function("call_twice"))(std::static_pointer_cast<isthmus::object>(cb));
    CHECK(calls == 2);
    CHECK(r.as_scalar().to<double>() == 10.5);
    auto bad = std::make_shared<pl::callable_object>(
        [](std::span<const value>) -> value { throw isthmus::index_error("callback says no"); });
    CHECK_THROWS_AS(
        (*lib->get_function("call_twice"))(std::static_pointer_cast<isthmus::object>(bad)),
        isthmus::index_error);
}

TEST_CASE("object types: constructor, fields, methods, events") {
    auto lib = pl::load(GOOD_PLUGIN);
    const value c = (*lib->get_function("counter"))("ticker");
    auto* o = dynamic_cast<pl::plugin_object*>(c.as_object().get());
    REQUIRE(o != nullptr);
    CHECK(o->kind() == "counter");
    CHECK(o->get("label").as_string() == "ticker");
    o->set("step", value(0.5));
    CHECK(o->get("step").as_scalar().to<double>() == 0.5);
    CHECK_THROWS_AS(o->get("nope"), isthmus::value_error);
    CHECK_THROWS_AS(o->set("count", value("text")), isthmus::type_error);
    std::vector<int64_t> seen;
    o->add_listener("ontick", [&](std::span<const value> args) {
        seen.push_back(args[0].as_scalar().to<int64_t>());
        CHECK(args[1].as_string() == "ticker");
        return value();
    });
    CHECK(o->listener_count("ontick") == 1);
    CHECK(o->call("tick", {}).as_scalar().to<int64_t>() == 1);
    CHECK(o->call("tick", {}).as_scalar().to<int64_t>() == 2);
    CHECK(seen == std::vector<int64_t>{1, 2});
    CHECK(o->call("describe", {}).as_string() == "ticker:2");
    CHECK((*lib->get_function("count_of"))(c).as_scalar().to<int64_t>() == 2);
    CHECK_THROWS_AS((*lib->get_function("count_of"))(1.0), isthmus::type_error);
    o->clear_listeners("ontick");
    CHECK(o->listener_count("ontick") == 0);
    CHECK_THROWS_AS(o->add_listener("nope", [](std::span<const value>) { return value(); }),
                    isthmus::value_error);
    CHECK_THROWS_AS(o->call("nope", {}), isthmus::value_error);
}

TEST_CASE("callback::call and call_python from plugin code, in a host without Python") {
    auto lib = pl::load(GOOD_PLUGIN);
    // A C++ host callable passed as an argument: typed arguments in, typed result out.
    auto pow_k = std::make_shared<pl::callable_object>(
        [](std::span<const value> a) {
            return value(isthmus::scalar(
                std::pow(a[0].as_scalar().to<double>(), a[1].as_scalar().to<double>())));
        },
        "pow_k");
    const value f(std::static_pointer_cast<isthmus::object>(pow_k));
    CHECK((*lib->get_function("py_apply"))(f, 3.0).as_scalar().to<double>() == 9.0);
    // No Python module in this process: the call_python slot reports it, typed and clear.
    CHECK_THROWS_WITH_AS((*lib->get_function("py_hypot"))(3.0, 4.0),
                         doctest::Contains("Python is not available in this host"),
                         isthmus::runtime_error);
    CHECK((*lib->get_function("plus"))(1.0, 2.0).as_scalar().to<double>() == 3.0); // still fine
}
