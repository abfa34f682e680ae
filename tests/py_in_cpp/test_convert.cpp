// Conversions: scalars, strings, containers, runtime values, and tensors shared without copies.
#include "support.hpp"

#include <isthmus/config.hpp>
#include <isthmus/ops.hpp>

#include <cstdint>
#include <map>
#include <random>
#include <unordered_map>

using namespace isthmus;
using namespace isthmus::literals;

TEST_CASE("to_py/from_py: scalars and strings round-trip") {
    CHECK(from_py<int>(to_py(-5)) == -5);
    CHECK(from_py<uint8_t>(to_py(255)) == 255);
    CHECK(from_py<int64_t>(to_py(INT64_MIN)) == INT64_MIN);
    CHECK(from_py<uint64_t>(to_py(UINT64_MAX)) == UINT64_MAX);
    CHECK(from_py<double>(to_py(0.1)) == 0.1);
    CHECK(from_py<float>(to_py(1.5f)) == 1.5f);
    CHECK(from_py<double>(to_py(3)) == 3.0); // int -> double, as Python allows
    CHECK(from_py<bool>(to_py(true)));
    CHECK(from_py<std::complex<double>>(to_py(std::complex<double>(1, -2))) ==
          std::complex<double>(1, -2));
    CHECK(from_py<std::string>(to_py(std::string("ü-tf8"))) == "ü-tf8");
    CHECK(from_py<std::string>(to_py(std::string_view("view"))) == "view");
    CHECK(to_py(nullptr).is_none());
    CHECK(from_py<std::optional<int>>(none()) == std::nullopt);
    CHECK(from_py<std::optional<int>>(to_py(std::optional<int>(4))) == 4);
}

TEST_CASE("from_py: impossible conversions give typed errors with clear messages") {
    CHECK(error_of([] { from_py<int>(to_py("3")); }) ==
          "from_py: expected an int for int32, got a str");
    CHECK_THROWS_AS(from_py<int>(to_py(1.5)), type_error);
    CHECK(error_of([] { from_py<uint8_t>(to_py(256)); }) ==
          "from_py: 256 is out of range for uint8 [0, 255]");
    CHECK_THROWS_AS(from_py<uint32_t>(to_py(-1)), value_error);
    CHECK_THROWS_AS(from_py<int8_t>(to_py(-129)), value_error);
    CHECK_THROWS_AS(from_py<double>(to_py("1.0")), type_error);
    CHECK_THROWS_AS(from_py<bool>(to_py(1)), type_error);
    CHECK_THROWS_AS(from_py<std::string>(to_py(1)), type_error);
    CHECK_THROWS_AS(from_py<std::vector<int>>(to_py(5)), type_error);
    CHECK_THROWS_AS(from_py<std::vector<int>>(to_py("abc")), type_error);
    CHECK_THROWS_AS(from_py<std::vector<int>>(list(1, "x")), type_error);
    CHECK_THROWS_AS((from_py<std::map<std::string, int>>(list(1))), type_error);
    CHECK_THROWS_AS((from_py<std::tuple<int, int>>(tuple(1, 2, 3))), value_error);
    CHECK_THROWS_AS(from_py<tensor>(to_py("text")), type_error);
    CHECK_THROWS_AS(from_py<scalar>(to_py("text")), type_error);
}

TEST_CASE("containers: vectors, maps, tuples, pairs") {
    const std::vector<double> v{1.5, -2, 3};
    pyvalue pl = to_py(v);
    CHECK(pl.repr() == "[1.5, -2.0, 3.0]");
    CHECK(from_py<std::vector<double>>(pl) == v);
    CHECK(from_py<std::vector<int>>(pyeval("range(4)")) == std::vector<int>{0, 1, 2, 3});
    const std::vector<std::vector<int>> nested{{1, 2}, {3}};
    CHECK(from_py<std::vector<std::vector<int>>>(to_py(nested)) == nested);
    const std::map<std::string, int> m{{"a", 1}, {"b", 2}};
    pyvalue pd = to_py(m);
    CHECK(pd.repr() == "{'a': 1, 'b': 2}");
    CHECK((from_py<std::map<std::string, int>>(pd)) == m);
    std::unordered_map<int, std::string> um{{1, "x"}};
    CHECK((from_py<std::unordered_map<int, std::string>>(to_py(um))) == um);
    auto t = std::make_tuple(1, std::string("s"), 2.5);
    CHECK(to_py(t).repr() == "(1, 's', 2.5)");
    CHECK((from_py<std::tuple<int, std::string, double>>(to_py(t))) == t);
    CHECK((from_py<std::pair<int, int>>(tuple(4, 5))) == std::pair<int, int>(4, 5));
}

TEST_CASE("tensors to NumPy: shared memory, any layout, pinned while viewed") {
    if (!have_module("numpy")) return;
    pyvalue np = pyimport("numpy");
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> d(-1, 1);
    for (dtype dt : {dtype::float32, dtype::float64, dtype::int32, dtype::int64, dtype::uint8,
                     dtype::bool_, dtype::complex64}) {
        std::vector<double> vals(12);
        for (double& x : vals) x = std::round(d(rng) * 50);
        tensor t = tensor::from_vector(vals, {3, 4}).to(dt);
        pyvalue a = to_py(t);
        CHECK(a.type_name() == "ndarray");
        CHECK(a.attr("dtype").str() ==
              std::string(name(dt) == std::string("bool") ? "bool" : name(dt)));
        CHECK(from_py<std::vector<int64_t>>(a.attr("shape")) == std::vector<int64_t>{3, 4});
        // same values as the tensor, element by element (float64 reference)
        CHECK(from_py<std::vector<double>>(a.attr("real").attr("astype")("float64").attr(
                  "ravel")()) == t.to(dtype::float64).to_vector<double>());
    }
    tensor t = tensor::from_vector(std::vector<double>{0, 1, 2, 3, 4, 5}, {2, 3});
    pyvalue a = to_numpy(t);
    // writes in NumPy are seen by the tensor, and the other way round (no copy)
    a[tuple(1, 2)] = 50.0;
    CHECK(t.at<double>({1, 2}) == 50.0);
    t.fill(7.0);
    CHECK(a[tuple(0, 0)].cast<double>() == 7.0);
    CHECK(t.storage()->pinned_to() == MEMRESOURCE_CPU);
    // non-contiguous views: transposed, strided, negative steps, 0-d, empty
    tensor base =
        tensor::from_vector(std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4});
    tensor tt = base.t();
    pyvalue at = to_numpy(tt);
    CHECK(from_py<std::vector<int64_t>>(at.attr("shape")) == std::vector<int64_t>{4, 3});
    CHECK(at[tuple(3, 2)].cast<double>() == base.at<double>({2, 3}));
    CHECK_FALSE(bool(at.attr("flags")["C_CONTIGUOUS"]));
    tensor rev = base.slice(1, 3, -5, -2); // columns 3, 1 (Python's 3:-5:-2)
    pyvalue ar = to_numpy(rev);
    CHECK(from_py<std::vector<std::vector<double>>>(ar.attr("tolist")()) ==
          std::vector<std::vector<double>>{{3, 1}, {7, 5}, {11, 9}});
    CHECK(bool(np.attr("shares_memory")(ar, to_numpy(base))));
    pyvalue a0 = to_numpy(tensor::scalar_tensor(2.5));
    CHECK(a0.attr("ndim").cast<int>() == 0);
    CHECK(a0.attr("item")().cast<double>() == 2.5);
    pyvalue ae = to_numpy(tensor::empty({0, 3}, dtype::float32));
    CHECK(from_py<std::vector<int64_t>>(ae.attr("shape")) == std::vector<int64_t>{0, 3});
    // bfloat16 and undefined tensors: typed errors
    CHECK_THROWS_AS(to_numpy(tensor::empty({2}, dtype::bfloat16)), type_error);
    CHECK_THROWS_AS(to_numpy(tensor()), value_error);
}

TEST_CASE("the pin ends when the last NumPy view is gone") {
    if (!have_module("numpy")) return;
    tensor t = tensor::from_vector(std::vector<float>{1, 2, 3});
    {
        pyvalue a = to_numpy(t);
        pyvalue view = a[pyslice(1, none())];
        a = pyvalue();
        CHECK(t.storage()->pinned_to() == MEMRESOURCE_CPU); // the view keeps it
        CHECK(view[0].cast<float>() == 2.0f);
    }
    pyimport("gc").attr("collect")();
    CHECK(t.storage()->pinned_to() == -1);
}

TEST_CASE("tensors from NumPy and Python: zero-copy when possible") {
    if (!have_module("numpy")) return;
    pyvalue np = pyimport("numpy");
    pyvalue a = np.attr("arange")(12.0).attr("reshape")(3, 4);
    tensor t = from_py<tensor>(a);
    CHECK(t.dtype() == dtype::float64);
    CHECK(t.shape() == shape_t{3, 4});
    a[tuple(2, 3)] = -1.0;
    CHECK(t.at<double>({2, 3}) == -1.0); // shared
    // a strided NumPy view: still shared
    pyvalue v = a[tuple(pyslice(), pyslice(none(), none(), 2))];
    tensor tv = from_py<tensor>(v);
    CHECK(tv.shape() == shape_t{3, 2});
    v[tuple(0, 1)] = 99.0;
    CHECK(tv.at<double>({0, 1}) == 99.0);
    // lists copy; copy refused when asked for none
    tensor tl = from_py<tensor>(list(list(1, 2), list(3, 4)));
    CHECK(tl.shape() == shape_t{2, 2});
    CHECK(tl.at<int64_t>({1, 0}) == 3);
    CHECK_THROWS_AS(tensor_from_py(list(1, 2), false), value_error);
    pyvalue ro = np.attr("arange")(3.0);
    ro.attr("flags").attr("writeable") = false;
    CHECK_THROWS_AS(tensor_from_py(ro, false), value_error);
    CHECK(tensor_from_py(ro, true).to_vector<double>() == std::vector<double>{0, 1, 2});
    CHECK_THROWS_AS(from_py<tensor>(np.attr("array")(list("a", 1), "dtype"_kw = "object")),
                    type_error);
}

TEST_CASE("runtime values: by kind, and Python objects carried through") {
    CHECK(to_py(value()).is_none());
    CHECK(to_py(value(2.5)).cast<double>() == 2.5);
    CHECK(to_py(value(int64_t(7))).is_int());
    CHECK(to_py(value(true)).is_bool());
    CHECK(to_py(value("s")).cast<std::string>() == "s");
    value c = value::make_cell({2});
    c.as_cell().items[0] = value(1.0);
    c.as_cell().items[1] = value("x");
    CHECK(to_py(c).repr() == "[1.0, 'x']");
    value back = from_py<value>(list(1, "a", none()));
    REQUIRE(back.is_cell());
    CHECK(back.as_cell().items.size() == 3);
    CHECK(back.as_cell().items[0].as_scalar().to<int64_t>() == 1);
    CHECK(back.as_cell().items[1].as_string() == "a");
    CHECK(back.as_cell().items[2].is_none());
    CHECK(from_py<value>(to_py(1.5)).as_scalar().type() == scalar_dtype()); // as q.value(1.5)
    CHECK(from_py<scalar>(to_py(3)).type() == dtype::int64);
    // any other Python object rides in a value and comes back as itself
    pyvalue f = builtins().attr("len");
    value fv = from_py<value>(f);
    CHECK(fv.is_object());
    CHECK(fv.kind_name() == "pyvalue");
    CHECK(to_py(fv).is(f));
    if (have_module("numpy")) {
        value tv = from_py<value>(pyimport("numpy").attr("ones")(3));
        CHECK(tv.is_tensor());
        CHECK(tv.as_tensor().to_vector<double>() == std::vector<double>{1, 1, 1});
    }
}

TEST_CASE("the PyQuasar manual's NumPy example, checked") {
    if (!have_module("numpy")) return;
    pyvalue np = pyimport("numpy");
    pyvalue v = np.attr("array")(list(1, 2, 3));
    pyvalue w = np.attr("array")(list(4, 5));
    pyvalue outer = np.attr("reshape")(v, pyint({3, 1})) * w;
    CHECK(from_py<std::vector<std::vector<int>>>(outer.attr("tolist")()) ==
          std::vector<std::vector<int>>{{4, 5}, {8, 10}, {12, 15}});
    CHECK(bool(np.attr("array_equal")(outer, np.attr("outer")(v, w))));
    CHECK(from_py<int>(matmul(v, v)) == 14);
    CHECK_THROWS_AS(np.attr("reshape")(v, list(3.0, 1.0)), python_error); // floats rejected
}
