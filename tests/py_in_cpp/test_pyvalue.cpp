// pyvalue: attributes, calls, operators against Python's own results, subscripts, iteration.
#include "support.hpp"

#include <cstdint>
#include <random>

using namespace isthmus;
using namespace isthmus::literals;

TEST_CASE("pyimport: modules, dotted names, and a missing module") {
    pyvalue math = pyimport("math");
    CHECK(math.attr("sqrt")(16.0).cast<double>() == 4.0);
    pyvalue path = pyimport("os.path");
    CHECK(path.attr("basename")("/a/b.txt").cast<std::string>() == "b.txt");
    auto e = python_error_of([] { pyimport("no_such_module_isthmus"); });
    CHECK(e.type_name() == "ModuleNotFoundError");
    CHECK(e.matches("ImportError"));
    CHECK(contains(e.message(), "no_such_module_isthmus"));
    CHECK(contains(e.what(), "ModuleNotFoundError: "));
}

TEST_CASE("attributes: get, set, hasattr, missing attribute") {
    pyvalue ns = pyimport("types").attr("SimpleNamespace")("x"_kw = 1);
    CHECK(ns.attr("x").cast<int>() == 1);
    ns.attr("y") = 2.5;
    ns.attr("x") = "text";
    CHECK(ns.attr("y").cast<double>() == 2.5);
    CHECK(ns.attr("x").cast<std::string>() == "text");
    CHECK(ns.hasattr("y"));
    CHECK_FALSE(ns.hasattr("zz"));
    auto e = python_error_of([&] { (void)ns.attr("zz").str(); });
    CHECK(e.type_name() == "AttributeError");
    CHECK(contains(e.message(), "zz"));
    // setting an attribute that cannot be set
    auto e2 = python_error_of([] { pyimport("math").attr("nothing").attr("x") = 1; });
    CHECK(e2.type_name() == "AttributeError");
}

TEST_CASE("calls: positional, keyword (both spellings), bad arguments") {
    pyvalue g = pyexec("def f(a, b=10, *, c=100):\n    return a + 2 * b + 3 * c\n");
    pyvalue f = g["f"];
    CHECK(f(1).cast<int>() == 1 + 20 + 300);
    CHECK(f(1, 2).cast<int>() == 1 + 4 + 300);
    CHECK(f(1, kw("c") = 5).cast<int>() == 1 + 20 + 15);
    CHECK(f("c"_kw = 5, 1, "b"_kw = 3).cast<int>() == 1 + 6 + 15); // positional order kept
    auto e = python_error_of([&] { f(1, 2, 3); });
    CHECK(e.type_name() == "TypeError");
    auto e2 = python_error_of([&] { f(1, "d"_kw = 4); });
    CHECK(e2.type_name() == "TypeError");
    CHECK(contains(e2.message(), "'d'"));
    // many arguments (more than the small stack buffer)
    pyvalue sum = pyeval("lambda *a, **k: sum(a) + sum(k.values())");
    CHECK(sum(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, "x"_kw = 100).cast<int>() == 155);
    // a non-callable
    auto e3 = python_error_of([] { pyint(3)(); });
    CHECK(e3.type_name() == "TypeError");
    // a Python exception raised inside the call carries a traceback
    pyvalue boom = pyexec("def boom():\n    raise KeyError('missing key')\n")["boom"];
    auto e4 = python_error_of([&] { boom(); });
    CHECK(e4.type_name() == "KeyError");
    CHECK(contains(e4.message(), "missing key"));
    CHECK(contains(e4.traceback(), "boom"));
    CHECK(contains(e4.traceback(), "KeyError"));
    CHECK(exception_of(e4).type_name() == "KeyError");
}

TEST_CASE("calls: C++ numbers become Python numbers inside the call, references balanced") {
    // See Note [call arguments]: numbers are converted by the call itself, other types before it
    pyvalue show = pyeval("lambda *a, **k: (tuple((type(x).__name__, x) for x in a), k)");
    pyvalue r = show(int8_t(-5), uint64_t(18446744073709551615ull), int64_t(INT64_MIN), true, 1.5f,
                     2.25, static_cast<long double>(0.5), 'c', static_cast<unsigned char>(7),
                     std::string("s"), "k"_kw = 3);
    CHECK(r.repr() == "((('int', -5), ('int', 18446744073709551615), "
                      "('int', -9223372036854775808), ('bool', True), ('float', 1.5), "
                      "('float', 2.25), ('float', 0.5), ('str', 'c'), ('int', 7), "
                      "('str', 's')), {'k': 3})");
    // more numbers than the small stack buffer, keywords among them
    pyvalue total = pyeval("lambda *a, **k: sum(a) + sum(k.values())");
    CHECK(total(1, 2u, 3.0, 4, 5, 6, 7, 8, 9, 10, "x"_kw = 100).cast<double>() == 155.0);
    // objects passed as pyvalues (named or temporary) are borrowed: the count comes back
    pyvalue obj = pyeval("object()");
    pyvalue count = pyimport("sys").attr("getrefcount");
    const auto before = count(obj).cast<int64_t>();
    pyvalue ident = pyeval("lambda *a, **k: a[0]");
    for (int i = 0; i < 100; ++i) {
        ident(obj, 1, 2.0);
        ident(pyvalue(obj), true);
        ident(std::move(pyvalue(obj)), "k"_kw = 1);
    }
    CHECK(count(obj).cast<int64_t>() == before);
    // a call that raises drops the numbers it made
    pyvalue fail = pyeval("lambda *a: 1 / 0");
    for (int i = 0; i < 100; ++i) {
        auto e = python_error_of([&] { fail(obj, 12345678901234ll, 3.5); });
        CHECK(e.type_name() == "ZeroDivisionError");
    }
    CHECK(count(obj).cast<int64_t>() == before);
}

TEST_CASE("operators match Python's on random ints and floats") {
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> di(-50, 50);
    std::uniform_real_distribution<double> dr(-10.0, 10.0);
    for (int trial = 0; trial < 50; ++trial) {
        int ia = di(rng), ib = di(rng);
        if (ib == 0) ib = 3;
        const double fa = dr(rng), fb = dr(rng);
        pyvalue a = to_py(ia), b = to_py(ib), x = to_py(fa), y = to_py(fb);
        pyvalue vars = dict("a"_kw = a, "b"_kw = b, "x"_kw = x, "y"_kw = y);
        auto same = [&](const pyvalue& got, const char* expr) {
            INFO(expr, " with a=", ia, " b=", ib, " x=", fa, " y=", fb);
            CHECK(bool(got == py_ref(expr, vars)));
        };
        same(a + b, "a + b");
        same(a - b, "a - b");
        same(a * b, "a * b");
        same(a / b, "a / b");
        same(floordiv(a, b), "a // b");
        same(a % b, "a % b");
        same(pow(a, 2), "a ** 2");
        same(x + y, "x + y");
        same(x * 2, "x * 2");
        same(3 - x, "3 - x");
        same(x / y, "x / y");
        same(floordiv(x, y), "x // y");
        same(x % y, "x % y");
        same(-a, "-a");
        same(+x, "+x");
        same(~a, "~a");
        same(abs(x), "abs(x)");
        same(!a, "not a");
        same(a & b, "a & b");
        same(a | b, "a | b");
        same(a ^ b, "a ^ b");
        same(lshift(a, 2), "a << 2");
        same(rshift(a, 1), "a >> 1");
        same(a < b, "a < b");
        same(a <= b, "a <= b");
        same(a == b, "a == b");
        same(a != b, "a != b");
        same(x > y, "x > y");
        same(x >= y, "x >= y");
        pyvalue c = a;
        c += b;
        same(c, "a + b");
        c *= 3;
        same(c, "(a + b) * 3");
        c -= 1;
        c /= 2;
        same(c, "((a + b) * 3 - 1) / 2");
    }
    // matmul on nested lists is a TypeError; on NumPy arrays it is the product
    auto e = python_error_of([] { matmul(list(1), list(2)); });
    CHECK(e.type_name() == "TypeError");
    auto e2 = python_error_of([] { to_py(1) / 0; });
    CHECK(e2.type_name() == "ZeroDivisionError");
}

TEST_CASE("in-place operators keep Python's aliasing (lists extend in place)") {
    pyvalue l = list(1, 2);
    pyvalue alias = l;
    l += list(3);
    CHECK(l.is(alias));
    CHECK(alias.len() == 3);
    pyvalue t = tuple(1, 2);
    pyvalue talias = t;
    t += tuple(3);
    CHECK_FALSE(t.is(talias)); // tuples are immutable: a new object
    CHECK(talias.len() == 2);
}

TEST_CASE("subscripts: get/set/del with ints, strings, slices and tuples") {
    pyvalue l = list(10, 20, 30, 40, 50);
    CHECK(l[0].cast<int>() == 10);
    CHECK(l[-1].cast<int>() == 50);
    l[1] = 21;
    CHECK(l[1].cast<int>() == 21);
    CHECK(l[pyslice(1, 4)].cast<std::vector<int>>() == std::vector<int>{21, 30, 40});
    CHECK(l[pyslice(none(), none(), -2)].cast<std::vector<int>>() == std::vector<int>{50, 30, 10});
    CHECK(l[index_slice{1, std::nullopt, 2}].cast<std::vector<int>>() == std::vector<int>{21, 40});
    l[pyslice(0, 2)] = list(1, 2, 3);
    CHECK(l.cast<std::vector<int>>() == std::vector<int>{1, 2, 3, 30, 40, 50});
    l.del_item(0);
    CHECK(l.len() == 5);
    auto e = python_error_of([&] { (void)l[100].str(); });
    CHECK(e.type_name() == "IndexError");

    pyvalue d = dict("a"_kw = 1);
    d["b"] = 2;
    d[tuple(1, 2)] = "pair";
    CHECK(d["a"].cast<int>() == 1);
    CHECK(d["b"].cast<int>() == 2);
    CHECK(d[tuple(1, 2)].cast<std::string>() == "pair");
    auto e2 = python_error_of([&] { (void)d["zz"].str(); });
    CHECK(e2.type_name() == "KeyError");
    auto e3 = python_error_of([&] { d[list(1)] = 3; }); // unhashable key
    CHECK(e3.type_name() == "TypeError");
}

TEST_CASE("iteration, len, str/repr, truthiness, None, type checks, hash") {
    pyvalue r = builtins().attr("range")(5);
    int sum = 0, count = 0;
    for (pyvalue x : r) {
        sum += x.cast<int>();
        ++count;
    }
    CHECK(sum == 10);
    CHECK(count == 5);
    std::vector<std::string> keys;
    for (const pyvalue& k : dict("x"_kw = 1, "y"_kw = 2)) keys.push_back(k.cast<std::string>());
    CHECK(keys == std::vector<std::string>{"x", "y"});
    CHECK(r.len() == 5);
    CHECK(to_py("héllo").str() == "héllo");
    CHECK(to_py("a'b").repr() == "\"a'b\"");
    CHECK(bool(list(1)));
    CHECK_FALSE(bool(list()));
    CHECK_FALSE(bool(to_py(0.0)));
    CHECK(none().is_none());
    CHECK_FALSE(to_py(0).is_none());
    CHECK(to_py(1).is_int());
    CHECK_FALSE(to_py(true).is_int());
    CHECK(to_py(true).is_bool());
    CHECK(to_py(1.5).is_float());
    CHECK(to_py("s").is_str());
    CHECK(list().is_list());
    CHECK(tuple().is_tuple());
    CHECK(dict().is_dict());
    CHECK(builtins().attr("len").is_callable());
    CHECK_FALSE(to_py(1).is_callable());
    CHECK(to_py(3).type_name() == "int");
    CHECK(to_py(3).isinstance(builtins().attr("int")));
    CHECK(to_py(3).hash() == 3);
    auto e = python_error_of([] { (void)to_py(5).len(); });
    CHECK(e.type_name() == "TypeError");
    auto e2 = python_error_of([] { (void)list().hash(); });
    CHECK(e2.type_name() == "TypeError");
    auto e3 = python_error_of([] {
        for (pyvalue x : to_py(5)) (void)x;
    });
    CHECK(e3.type_name() == "TypeError");
    // a NumPy array's truthiness is ambiguous: Python's ValueError
    if (have_module("numpy")) {
        pyvalue a = pyimport("numpy").attr("arange")(3);
        auto e4 = python_error_of([&] { (void)bool(a == a); });
        CHECK(e4.type_name() == "ValueError");
    }
}

TEST_CASE("empty pyvalues are rejected with value_error") {
    pyvalue empty;
    CHECK(empty.empty());
    CHECK_THROWS_AS((void)empty.str(), value_error);
    CHECK_THROWS_AS((void)empty.attr("x").str(), value_error);
    pyvalue moved = to_py(1);
    pyvalue other = std::move(moved);
    CHECK(moved.empty()); // NOLINT: testing the moved-from state
    CHECK(other.cast<int>() == 1);
    std::ostringstream os;
    os << empty << " " << other;
    CHECK(os.str() == "<empty pyvalue> 1");
}

TEST_CASE("pyeval and pyexec share globals; bad code raises SyntaxError") {
    pyvalue g = pyexec("x = 6\ny = x * 7\n");
    CHECK(g["y"].cast<int>() == 42);
    CHECK(pyeval("x + y", g).cast<int>() == 48);
    auto e = python_error_of([] { pyeval("1 +"); });
    CHECK(e.type_name() == "SyntaxError");
    CHECK_THROWS_AS(pyeval("1", list()), type_error);
}
