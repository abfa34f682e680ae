"""Python -> plugin -> Python: ip::call_python (the host slot), callback::call, and a plugin using pyvalue."""
import math
import os
import threading

import numpy as np
import pytest

import isthmus as q

from conftest import BUILD_DIR

GOOD = str(BUILD_DIR / "tests" / "plugins" / "good_plugin.so")


@pytest.fixture(scope="module")
def good():
    return q.import_native(GOOD)


def test_named_python_functions_return_values(good):
    rng = np.random.default_rng(11)
    for a, b in rng.standard_normal((5, 2)):
        assert good.py_hypot(float(a), float(b)) == math.hypot(a, b)
    assert good.py_hypot(3, 4) == 5.0  # ints convert for real parameters
    assert good.py_upper("héllo") == "HÉLLO"


@pytest.mark.parametrize("name,ref", [("numpy.sum", np.sum), ("numpy.linalg.norm", np.linalg.norm)])
def test_numpy_functions_on_tensor_arguments(good, name, ref):
    rng = np.random.default_rng(12)
    base = rng.standard_normal(40)
    for x in (base, base[::3], base[:0], q.from_py(base[:7])):  # contiguous, strided, empty, qvalue
        np.testing.assert_allclose(good.py_reduce(name, x), ref(np.asarray(x)), rtol=1e-12)


def test_tensor_results_from_python(good):
    x = np.random.default_rng(13).standard_normal(9)[::2]
    np.testing.assert_allclose(np.asarray(good.py_cumsum(x)), np.cumsum(x), rtol=1e-12)
    assert np.asarray(good.py_cumsum(np.zeros(0))).shape == (0,)


def test_python_callable_argument(good):
    seen = []

    def f(x, k):
        seen.append((x, k))
        return x ** k

    assert good.py_apply(f, 3.0) == 9.0 and seen == [(3.0, 2)]
    assert good.py_apply(lambda x, k: np.float64(x) * k, -1.25) == -2.5  # NumPy scalar result
    assert good.py_apply_name("math.floor", lambda x: x * 3) == 4.0


def test_python_exceptions_keep_type_and_message(good):
    def bad(x, k):
        raise KeyError("raised in python")

    with pytest.raises(KeyError, match="raised in python"):
        good.py_apply(bad, 1.0)
    with pytest.raises(ValueError, match="math domain error"):
        good.py_apply_name("math.sqrt", lambda x: -x)
    with pytest.raises(ModuleNotFoundError, match="no_such_module_xyz"):
        good.py_reduce("no_such_module_xyz.f", np.ones(2))
    with pytest.raises(AttributeError, match="nothing_here"):
        good.py_reduce("numpy.nothing_here", np.ones(2))
    with pytest.raises(ValueError, match='"nosuchbuiltin" is not a builtin'):
        good.py_reduce("nosuchbuiltin", np.ones(2))
    with pytest.raises(TypeError, match="not a callable"):
        good.py_reduce("math.pi", np.ones(2))
    with pytest.raises(TypeError, match="expected a number, got string"):
        good.py_apply(lambda x, k: "text", 1.0)  # a result of the wrong kind for the plugin
    x = np.arange(4.0)
    assert good.py_reduce("numpy.sum", x) == 6.0 and (x == np.arange(4.0)).all()  # still fine


def test_gil_released_by_parallel_do_is_taken_again(good):
    # parallel_do releases the GIL; each call_python takes it again (serial and threaded).
    for n in (5, 20000):
        x = np.random.default_rng(14).standard_normal(n)
        y = np.zeros(n)
        q.parallel_do(n, x, y, good.py_hypot_kernel)
        np.testing.assert_allclose(y, np.hypot(x, 1.0), rtol=1e-14)


def test_calls_from_python_threads(good):
    out = {}

    def work(i):
        out[i] = [good.py_apply(lambda x, k: x + k + i, float(j)) for j in range(50)]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == {i: [float(j + 2 + i) for j in range(50)] for i in range(4)}


def test_compile_string_plugin_calls_python_without_link_flags(tmp_path, monkeypatch):
    monkeypatch.setenv("ISTHMUS_CACHE_DIR", str(tmp_path / "cache"))
    src = """
    namespace ip = isthmus::plugin;
    ISTHMUS_PLUGIN(cp_python, m) {
        m.def("cp_norm", [](ip::view<const double, 1> x) {
            return ip::call_python<double>("numpy.linalg.norm", x);
        }, {"x"});
        m.def("cp_call", [](ip::callback f, std::string s) {
            return f.call<std::string>(s) + "!";
        }, {"f", "s"});
    }
    """
    mod = q.compile_string("cp_python", src)
    x = np.random.default_rng(15).standard_normal(17)
    np.testing.assert_allclose(mod.cp_norm(x), np.linalg.norm(x), rtol=1e-12)
    assert mod.cp_call(str.swapcase, "aBc") == "AbC!"
    with pytest.raises(ZeroDivisionError):
        mod.cp_call(lambda s: 1 / 0, "x")


def test_scalar_fast_path_keeps_conversions_and_errors(good):
    # plus(double, double) takes the scalar fast path for exact floats/ints/bools only.
    assert good.plus(1.5, 2.25) == 3.75
    assert good.plus(2, True) == 3.0 and isinstance(good.plus(2, 3), float)
    assert good.plus(np.float32(0.5), 1.0) == 1.5  # NumPy scalars take the generic path
    # Ints beyond int64 convert to a real parameter as Python's own float(int) does, and raise
    # OverflowError when even that fails (Note [integer parameters]).
    assert good.plus(2 ** 70, 1.0) == 2.0 ** 70 + 1.0
    with pytest.raises(OverflowError, match=r"argument 1 \(a\): Python integer a 2001-bit "
                                            r"integer is too large to convert to float64"):
        good.plus(2 ** 2000, 1.0)
    with pytest.raises(TypeError, match="expected 2 argument"):
        good.plus(1.0)
    with pytest.raises(TypeError, match="argument 2"):
        good.plus(1.0, "x")


# ---- form (a): a plugin that links libisthmus and uses pyvalue itself ----

PYVALUE_PLUGIN = str(BUILD_DIR / "tests" / "plugins" / "pyvalue_plugin.so")


@pytest.fixture(scope="module")
def pvp():
    return q.import_native(PYVALUE_PLUGIN)


def test_pyvalue_plugin_calls_python(pvp):
    rng = np.random.default_rng(21)
    for x in rng.uniform(0.1, 3.0, 5):
        assert pvp.py_math("log", float(x)) == math.log(x)
        assert pvp.py_math("sqrt", float(x)) == math.sqrt(x)
    x = rng.standard_normal(17)
    for arr in (x, x[::4], q.from_py(x[:5])):
        assert pvp.py_mean(arr) == pytest.approx(np.mean(np.asarray(arr)), rel=1e-14)


def test_pyvalue_plugin_shares_the_loaded_library(pvp):
    # The plugin resolved libisthmus to the file `import isthmus` mapped: one copy in memory.
    with open("/proc/self/maps") as f:
        maps = {line.split()[-1] for line in f if "isthmus" in line and ".so" in line}
    names = {p for p in maps if os.path.basename(p).startswith(("libisthmus.so", "_isthmus."))}
    libs = {os.path.realpath(p) for p in names}  # (libisthmus_cuda.so is another library)
    assert len(libs) == 1, libs


def test_pyvalue_plugin_python_errors_come_back_with_the_message(pvp):
    with pytest.raises(RuntimeError, match="math domain error"):
        pvp.py_math("log", -1.0)
    with pytest.raises(RuntimeError, match="has no attribute 'nope'"):
        pvp.py_math("nope", 1.0)
    assert pvp.py_math("sqrt", 4.0) == 2.0  # the plugin and the interpreter are fine afterwards
