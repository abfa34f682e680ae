"""Plugins from Python: import_native, calls with qvalues/NumPy/torch, parallel_do, objects."""
import os

import numpy as np
import pytest

import isthmus as q

from conftest import BUILD_DIR

PLUGINS = BUILD_DIR / "tests" / "plugins"
GOOD = str(PLUGINS / "good_plugin.so")


@pytest.fixture(scope="module")
def good():
    return q.import_native(GOOD)


def test_import_native_returns_a_module_and_adds_names_to_q(good):
    assert good.__name__ == "good_plugin"
    assert good.__file__ == os.path.realpath(GOOD)
    assert "plus" in good.functions and "axpb" in good.kernels
    assert q.plus is good.plus and q.axpb is good.axpb
    assert q.import_native(GOOD) is good  # importing again is a no-op
    assert "plus(a: float64, b: float64) -> scalar" in good.plus.__doc__
    assert "kernel axpb(x: mat, y: mat, a: float64, b: float64, pos: ivec2)" in good.__doc__
    assert isinstance(good.plus, q.native_function)
    assert isinstance(good.axpb, q.native_kernel)


def test_import_by_name_uses_the_search_path(good, monkeypatch, tmp_path):
    monkeypatch.setenv("ISTHMUS_PLUGIN_PATH", f"{tmp_path}:{PLUGINS}")
    assert q.import_native("good_plugin") is good
    monkeypatch.chdir(PLUGINS)
    monkeypatch.delenv("ISTHMUS_PLUGIN_PATH")
    assert q.import_native("good_plugin") is good


def test_bad_libraries_raise_clear_errors():
    with pytest.raises(RuntimeError, match="no such file"):
        q.import_native("/nonexistent/libnothing.so")
    with pytest.raises(RuntimeError, match="no plugin named \"nothing_here\""):
        q.import_native("nothing_here")
    with pytest.raises(RuntimeError, match="is not an isthmus plugin"):
        q.import_native(str(PLUGINS / "not_a_plugin.so"))
    with pytest.raises(RuntimeError) as e:
        q.import_native(str(PLUGINS / "wrong_abi_plugin.so"))
    assert f"ABI version {q.PLUGIN_ABI_VERSION + 998}" in str(e.value)
    assert f"speaks plugin ABI version {q.PLUGIN_ABI_VERSION}" in str(e.value)


def test_name_clash_raises_and_adds_nothing(tmp_path):
    # c_plugin defines `twice`; make a name clash by pre-defining it on q.
    q.twice = lambda x: x
    try:
        with pytest.raises(ValueError, match="defines \"twice\", which isthmus already has"):
            q.import_native(str(PLUGINS / "c_plugin.so"))
    finally:
        del q.twice
    mod = q.import_native(str(PLUGINS / "c_plugin.so"))
    assert mod.twice(2.5) == 5.0 and q.twice is mod.twice


def test_scalars_strings_and_none(good):
    assert good.plus(1.5, 2.25) == 3.75
    assert good.plus(1, 2) == 3.0
    assert good.plus(np.float32(0.5), True) == 1.5
    assert good.iadd(40, 2) == 42 and isinstance(good.iadd(1, 2), int)
    assert good.greet("python") == "hello python"
    assert good.nothing() is None
    x = 0.1 + 0.2  # passed exactly as float64
    assert good.plus(x, 0.0) == x


def test_tensors_numpy_qvalue_and_views(good):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 7))
    assert good.total(a) == pytest.approx(a.sum())
    assert good.total(a.T) == pytest.approx(a.sum())  # non-contiguous
    assert good.total(a[::2, 1::3]) == pytest.approx(a[::2, 1::3].sum())
    assert good.total(q.value(a)) == pytest.approx(a.sum())
    assert good.total(np.arange(6, dtype=np.int32).reshape(2, 3)) == 15.0  # converted
    assert good.total(np.zeros((0, 3))) == 0.0
    y = np.zeros(10)
    good.fill_inplace(y[::2], 3.0)  # written in place, zero-copy, strided
    np.testing.assert_array_equal(y, [3, 0] * 5)


def test_overloads_pick_the_dtype(good):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(9)
    r64 = good.scaled(x, 2.0)
    r32 = good.scaled(x.astype(np.float32), 2.0)
    assert isinstance(r64, q.qvalue) and r64.dtype == np.float64 and r32.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(r64), 2.0 * x)
    np.testing.assert_allclose(np.asarray(r32), 2.0 * x.astype(np.float32), rtol=1e-6)
    with pytest.raises(TypeError, match="no overload accepts"):
        good.scaled("x", 1.0)


def test_torch_tensors_are_accepted_zero_copy(good):
    torch = pytest.importorskip("torch")
    t = torch.zeros(6, dtype=torch.float64)
    good.fill_inplace(t, 2.5)
    assert t.tolist() == [2.5] * 6
    assert good.total(torch.ones(2, 3, dtype=torch.float64)) == 6.0


def test_wrong_arguments_raise_before_running(good):
    with pytest.raises(TypeError, match=r"expected 2 argument\(s\), got 1"):
        good.plus(1.0)
    with pytest.raises(TypeError, match=r"argument 2 \(b\): expected a real number, got a string"):
        good.plus(1.0, "x")
    with pytest.raises(TypeError, match="positional arguments only"):
        good.plus(a=1.0, b=2.0)
    y = np.zeros(3, dtype=np.float32)
    with pytest.raises(TypeError, match="exact dtype"):
        good.fill_inplace(y, 1.0)
    assert (y == 0).all()
    with pytest.raises(TypeError):
        good.norm3(np.ones(2))


def test_plugin_errors_keep_type_and_message(good):
    with pytest.raises(ValueError, match="fail_value: something is off"):
        good.fail_value("something is off")
    with pytest.raises(RuntimeError, match="std failure"):
        good.fail_std()
    assert good.plus(1.0, 1.0) == 2.0  # the process and the plugin are fine afterwards


def test_python_callables_are_called_back(good):
    seen = []

    def cb(x):
        seen.append(x)
        return x * 1.5

    assert good.call_twice(cb) == 10.5 and seen == [7, 7]

    def bad(x):
        raise KeyError("from python")

    with pytest.raises(KeyError, match="from python"):  # the Python exception itself
        good.call_twice(bad)


def test_objects_fields_methods_and_events(good):
    c = good.counter("button")
    assert isinstance(c, q.native_object) and c.type_name == "counter"
    assert c.label == "button" and c.count == 0
    c.step = 0.5
    assert c.step == 0.5
    assert set(dir(c)) >= {"label", "count", "step", "tick", "describe", "ontick"}
    clicks = []

    def on_click(count, label):
        clicks.append((count, label))

    c.ontick.add(on_click)
    assert len(c.ontick) == 1
    assert c.tick() == 1 and c.tick() == 2
    assert clicks == [(1, "button"), (2, "button")]
    assert c.describe() == "button:2"
    assert good.count_of(c) == 2
    c.ontick.clear()
    c.tick()
    assert len(clicks) == 2
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        c.nope
    with pytest.raises(AttributeError):
        c.nope = 1
    with pytest.raises(TypeError):
        c.count = "text"
    assert c.count == 3

    def failing(count, label):
        raise ValueError("handler failed")

    c.ontick.add(failing)
    with pytest.raises(ValueError, match="handler failed"):
        c.tick()


def test_parallel_do_against_numpy(good):
    rng = np.random.default_rng(2)
    for shape in [(3, 4), (301, 257)]:
        x = rng.standard_normal(shape[::-1]).T  # non-contiguous
        y = q.zeros(*shape, dtype="float64")
        q.parallel_do(shape, x, y, 2.0, -0.5, good.axpb)
        np.testing.assert_array_equal(np.asarray(y), 2.0 * x - 0.5)
    ynp = np.zeros((2, 3))
    q.parallel_do(q.size(ynp), np.ones((2, 3)), ynp, 1.0, 1.0, q.axpb)  # NumPy out, zero-copy
    assert (ynp == 2.0).all()


@pytest.mark.parametrize("kernel,ref", [
    ("shift_clamped", lambda i, n: min(max(i, 0), n - 1)),
    ("shift_circular", lambda i, n: i % n),
    ("shift_mirror", lambda i, n: (i % (2 * n)) if (i % (2 * n)) < n else 2 * n - 1 - i % (2 * n)),
])
def test_access_modifiers(good, kernel, ref):
    x = np.random.default_rng(3).standard_normal(6)
    for shift in (-13, -3, 0, 2, 11):
        y = np.zeros(6)
        q.parallel_do(6, x, y, shift, getattr(good, kernel))
        np.testing.assert_array_equal(y, [x[ref(i + shift, 6)] for i in range(6)])


def test_kernel_errors_and_bad_launches(good):
    x, y = np.ones(100000), np.zeros(100000)
    with pytest.raises(IndexError, match="index 100000 is out of bounds for dimension 0"):
        q.parallel_do(100000, x, y, 1, good.shift_checked)
    y2 = np.zeros((2, 2))
    with pytest.raises(TypeError, match=r"expected 4 argument\(s\) before the kernel, got 3"):
        q.parallel_do((2, 2), np.ones((2, 2)), y2, 1.0, good.axpb)
    with pytest.raises(ValueError, match="position has 2 dimension"):
        q.parallel_do(4, np.ones((2, 2)), y2, 1.0, 0.0, good.axpb)
    with pytest.raises(TypeError, match="last argument must be a native kernel"):
        q.parallel_do((2, 2), np.ones((2, 2)), y2, 1.0, 0.0, good.plus)
    with pytest.raises(TypeError, match="argument 2 \\(y\\)"):
        q.parallel_do((2, 2), np.ones((2, 2)), np.zeros((2, 2), np.float32), 1.0, 0.0, good.axpb)
    with pytest.raises(TypeError, match="parallel_do"):
        good.axpb(1)
    with pytest.raises(TypeError, match="takes no keyword arguments"):
        q.parallel_do((2, 2), np.ones((2, 2)), y2, 1.0, 0.0, kernel=good.axpb)
    with pytest.raises(TypeError, match="last argument must be a native kernel, got NoneType"):
        q.parallel_do((2, 2), np.ones((2, 2)), y2, 1.0, 0.0, None)
    assert (y2 == 0).all()


VIEW_RESULTS = r"""
namespace ip = isthmus::plugin;
ISTHMUS_PLUGIN(view_results, m) {
    m.def("vr_same", [](ip::view<const float, 1> x) { return x; }, {"x"});
    m.def("vr_mat", [](ip::view<double, 2> x) { return x; }, {"x"});
}
"""


def test_a_view_returned_by_a_function_comes_back_as_a_copy(tmp_path, monkeypatch):
    # See Note [view results]: the view's descriptor lived in the plugin's stack frame; it used to
    # reach the host dangling (garbage shape and strides, memory the result did not own).
    monkeypatch.setenv("ISTHMUS_CACHE_DIR", str(tmp_path / "cache"))
    q.compile_string("view_results", VIEW_RESULTS)
    assert q.vr_same.signature.endswith("-> tensor")
    x = np.arange(7, dtype=np.float32)
    r = q.vr_same(x)
    np.testing.assert_array_equal(np.asarray(r), x)
    x[:] = -1  # a copy: the argument's later writes do not show
    np.testing.assert_array_equal(np.asarray(r), np.arange(7, dtype=np.float32))
    m = np.arange(12.0).reshape(3, 4)
    for arg in (m, m.T, m[::-1, ::2], np.zeros((0, 3)), np.zeros((2, 0))):
        got = q.vr_mat(arg.copy() if not arg.flags.writeable else arg)
        assert got.shape == arg.shape
        np.testing.assert_array_equal(np.asarray(got), arg)
    del m
    t = q.vr_mat(np.ones((2, 2)))
    np.testing.assert_array_equal(np.asarray(t), np.ones((2, 2)))
