// The PyQuasar manual's helpers: pyint, pybool, builders, pyfunc, enter/exit and with, C++
// callbacks.
#include "support.hpp"

using namespace isthmus;
using namespace isthmus::literals;

TEST_CASE("pyint: integers, integral floats, decimal strings of any length, lists") {
    CHECK(pyint(42).is_int());
    CHECK(pyint(-7LL).cast<long long>() == -7);
    CHECK(pyint(18446744073709551615ULL).str() == "18446744073709551615");
    CHECK(pyint(3.0).cast<int>() == 3);
    CHECK(pyint(3.0).is_int());
    const std::string big = "-123456789012345678901234567890123456789";
    pyvalue b = pyint(big);
    CHECK(b.str() == big);
    CHECK(bool(b * 2 == pyeval(big + " * 2")));
    CHECK_THROWS_AS(pyint(2.5), value_error);
    CHECK_THROWS_AS(pyint(std::nan("")), value_error);
    CHECK(contains(error_of([] { pyint("12x"); }), "\"12x\" is not a decimal integer"));
    CHECK_THROWS_AS(pyint(""), value_error);
    pyvalue l = pyint({3, 1});
    CHECK(l.is_list());
    CHECK(l[0].is_int());
    CHECK(l.cast<std::vector<int>>() == std::vector<int>{3, 1});
    // a big int does not fit a C++ int64: value_error, not a wrapped number
    CHECK_THROWS_AS(b.cast<int64_t>(), value_error);
}

TEST_CASE("pybool") {
    CHECK(pybool(true).is_bool());
    CHECK(pybool(true).is(pyeval("True")));
    CHECK(pybool(0.0).is(pyeval("False")));
    CHECK(pybool(2).is(pyeval("True")));
}

TEST_CASE("tuple, list, dict builders and slices") {
    pyvalue t = tuple(1, "two", 3.5, none());
    CHECK(t.repr() == "(1, 'two', 3.5, None)");
    CHECK(list().repr() == "[]");
    CHECK(list(list(1), tuple()).repr() == "[[1], ()]");
    pyvalue d = dict("a"_kw = 1, kw("b") = list(2));
    CHECK(d.repr() == "{'a': 1, 'b': [2]}");
    CHECK(pyslice(1, none(), -1).repr() == "slice(1, None, -1)");
    CHECK(pyslice().repr() == "slice(None, None, None)");
    CHECK(to_py(ellipsis).repr() == "Ellipsis");
    CHECK(to_py(newaxis).is_none());
}

TEST_CASE("pyfunc: Python callables as C++ function values") {
    pyvalue math = pyimport("math");
    pyfunction cosf = pyfunc(math.attr("cos"));
    CHECK(cosf(0.0).cast<double>() == 1.0);
    std::function<double(double)> f = cosf;
    CHECK(f(0.0) == 1.0);
    std::function<std::string(std::string, int)> rep = pyfunc(pyeval("lambda s, n: s * n"));
    CHECK(rep("ab", 3) == "ababab");
    std::function<void(int)> sink = pyfunc(pyeval("lambda x: None"));
    sink(1);
    auto e = error_of([] { pyfunc(to_py(3)); });
    CHECK(contains(e, "pyfunc: expected a callable Python object, got a int"));
    CHECK_THROWS_AS(pyfunc(to_py(3)), type_error);
    // wrong result type: the typed function reports the conversion
    std::function<int(int)> bad = pyfunc(pyeval("lambda x: 'no'"));
    CHECK_THROWS_AS(bad(1), type_error);
}

namespace {
// A context manager that logs its calls; `suppress` makes __exit__ swallow exceptions,
// `fail_exit` makes __exit__ raise.
pyvalue recorder() {
    return pyexec(R"(
log = []
class Ctx:
    def __init__(self, suppress=False, fail_exit=False):
        self.suppress, self.fail_exit = suppress, fail_exit
    def __enter__(self):
        log.append('enter')
        return 'entered'
    def __exit__(self, t, v, tb):
        log.append(('exit', None if t is None else t.__name__, None if v is None else str(v)))
        if self.fail_exit:
            raise OSError('exit failed')
        return self.suppress
)");
}
} // namespace

TEST_CASE("enter/exit and with: exception info reaches __exit__") {
    pyvalue g = recorder();
    pyvalue ctx = g["Ctx"]();
    CHECK(ctx.enter().cast<std::string>() == "entered");
    ctx.exit();
    CHECK(g["log"].repr() == "['enter', ('exit', None, None)]");

    g = recorder();
    std::string seen;
    with(g["Ctx"](), [&](pyvalue& as) { seen = as.cast<std::string>(); });
    CHECK(seen == "entered");
    CHECK(g["log"].repr() == "['enter', ('exit', None, None)]");

    // a C++ isthmus error: __exit__ sees ValueError with the message; rethrown as itself
    g = recorder();
    CHECK_THROWS_AS(with(g["Ctx"](), [](pyvalue&) { throw value_error("bad shape"); }),
                    value_error);
    CHECK(g["log"].repr() == "['enter', ('exit', 'ValueError', 'bad shape')]");

    // a Python exception raised in the body reaches __exit__ as itself
    g = recorder();
    auto e = python_error_of([&] { with(g["Ctx"](), [](pyvalue&) { pyeval("1 / 0"); }); });
    CHECK(e.type_name() == "ZeroDivisionError");
    CHECK(g["log"].repr() == "['enter', ('exit', 'ZeroDivisionError', 'division by zero')]");

    // suppression
    g = recorder();
    CHECK_NOTHROW(with(g["Ctx"]("suppress"_kw = true), [](pyvalue&) { throw index_error("i"); }));
    CHECK(g["log"].repr() == "['enter', ('exit', 'IndexError', 'i')]");

    // an exception in __exit__ itself
    g = recorder();
    auto e2 = python_error_of([&] { with(g["Ctx"]("fail_exit"_kw = true), [](pyvalue&) {}); });
    CHECK(e2.type_name() == "OSError");
    CHECK(e2.message() == "exit failed");
    // not a context manager
    auto e3 = python_error_of([] { with(to_py(1), [](pyvalue&) {}); });
    CHECK(e3.type_name() == "AttributeError");
}

TEST_CASE("with_guard: RAII enter/exit") {
    pyvalue g = recorder();
    {
        with_guard w(g["Ctx"]());
        CHECK(w.value().cast<std::string>() == "entered");
        CHECK(g["log"].len() == 1);
    }
    CHECK(g["log"].repr() == "['enter', ('exit', None, None)]");

    g = recorder();
    try {
        with_guard w(g["Ctx"]());
        throw std::runtime_error("unwinding");
    } catch (const std::runtime_error& e) {
        CHECK(std::string(e.what()) == "unwinding");
    }
    CHECK(contains(g["log"].repr(), "('exit', 'RuntimeError', 'a C++ exception is propagating"));

    // __exit__ raising: thrown from the destructor (not unwinding), or from exit()
    g = recorder();
    auto e = python_error_of([&] { with_guard w(g["Ctx"]("fail_exit"_kw = true)); });
    CHECK(e.type_name() == "OSError");
    g = recorder();
    {
        with_guard w(g["Ctx"]("fail_exit"_kw = true));
        CHECK_THROWS_AS(w.exit(), python_error);
    } // already exited: the destructor does nothing
    CHECK(g["log"].len() == 2);
}

TEST_CASE("C++ callbacks: Python calls C++, exceptions round-trip with their type") {
    pyvalue mul = py_function([](double x, double y) { return x * y; }, "mul");
    CHECK(mul(3.0, 4.0).cast<double>() == 12.0);
    CHECK(contains(mul.repr(), "mul"));
    pyvalue m = pyimport("builtins").attr("map")(mul, list(1, 2), list(3, 4));
    CHECK(builtins().attr("list")(m).cast<std::vector<double>>() == std::vector<double>{3, 8});
    // a wrong call: TypeError in Python, the original type_error when it returns to C++
    CHECK_THROWS_WITH_AS(mul(1.0), "the C++ function takes 2 argument(s), 1 given", type_error);
    pyvalue caught_type =
        pyexec("try:\n    f(1.0)\nexcept TypeError as e:\n    r = str(e)\n", dict("f"_kw = mul));
    CHECK(caught_type["r"].cast<std::string>() == "the C++ function takes 2 argument(s), 1 given");

    // a C++ exception thrown inside: Python sees ValueError; C++ gets value_error back
    pyvalue thrower = py_function([](int x) -> int {
        if (x < 0) throw value_error("negative input " + std::to_string(x));
        return x;
    });
    pyvalue g = pyexec(R"(
def call_and_catch(f):
    try:
        f(-3)
    except ValueError as e:
        return 'caught ' + str(e)
def call(f):
    return f(-5)
)");
    CHECK(g["call_and_catch"](thrower).cast<std::string>() == "caught negative input -3");
    CHECK_THROWS_WITH_AS(g["call"](thrower), "negative input -5", value_error);
    // a non-isthmus C++ exception: RuntimeError in Python, the original type back in C++
    pyvalue other = py_function([]() -> int { throw std::out_of_range("oor"); });
    pyvalue caught =
        pyexec("try:\n    f()\nexcept RuntimeError as e:\n    r = str(e)\n", dict("f"_kw = other));
    CHECK(caught["r"].cast<std::string>() == "oor");
    CHECK_THROWS_WITH_AS(pyeval("f()", dict("f"_kw = other)), "oor", std::out_of_range);
    // a Python exception raised by Python code that the callback called: itself, unchanged
    pyvalue relay =
        py_callback([](const pyvalue& args, const pyvalue&) { return pyvalue(args[0])(); });
    auto e3 = python_error_of([&] { relay(pyeval("lambda: {}['k']")); });
    CHECK(e3.type_name() == "KeyError");
    CHECK_THROWS_AS(py_callback({}), value_error);
}
