"""Memory safety at the plugin boundary from Python: access modifiers on empty dimensions, checked
mode (`with q.checked():`, ISTHMUS_CHECKED), parallel_do's shape rules and dims, and integer
ranges of plugin parameters (OverflowError, as NumPy 2 raises for Python ints)."""
import math
import re
import textwrap

import numpy as np
import pytest

import isthmus as q

from conftest import BUILD_DIR

GOOD = str(BUILD_DIR / "tests" / "plugins" / "good_plugin.so")
CANARY = -777.0


@pytest.fixture(scope="module")
def good():
    return q.import_native(GOOD)


@pytest.fixture(scope="module")
def cache(worker_cache):
    """One compile cache for the module: a plugin compiled twice loads once (its names stay)."""
    with worker_cache("plugin_checks") as d:
        yield d


def fenced():
    """A 10 x 10 canary buffer and its 4 x 4 block at (3, 3) (a zero-copy NumPy view)."""
    buf = np.full((10, 10), CANARY)
    return buf, buf[3:7, 3:7]


def fence_intact(buf):
    outside = np.ones((10, 10), bool)
    outside[3:7, 3:7] = False
    return bool((buf[outside] == CANARY).all())


# ---- access modifiers on an empty dimension ---------------------------------------------------

EMPTY_SRC = """
namespace ip = isthmus::plugin;
ISTHMUS_PLUGIN(pc_empty, m) {
    m.kernel("pc_clamped", [](ip::view<const double, 2, ip::access::clamped> x,
                              ip::view<double, 1> y, int64_t i) { y(i) = x(i, i - 1); },
             {"x", "y"});
    m.kernel("pc_circular", [](ip::view<const double, 2, ip::access::circular> x,
                               ip::view<double, 1> y, int64_t i) { y(i) = x(i, i - 1); },
             {"x", "y"});
    m.kernel("pc_mirror", [](ip::view<const double, 2, ip::access::mirror> x,
                             ip::view<double, 1> y, int64_t i) { y(i) = x(i, i - 1); },
             {"x", "y"});
    m.kernel("pc_checked", [](ip::view<const double, 2, ip::access::checked> x,
                              ip::view<double, 1> y, int64_t i) { y(i) = x(i, i - 1); },
             {"x", "y"});
}
"""


@pytest.mark.parametrize("modifier", ["clamped", "circular", "mirror"])
def test_modifiers_on_an_empty_dimension_raise_index_error(cache, modifier):
    mod = q.compile_string("pc_empty", EMPTY_SRC)
    kernel = getattr(mod, f"pc_{modifier}")
    y = np.array([5.0, 6.0])
    x = np.zeros((2, 0))  # rows fine, no columns
    message = (f"pc_{modifier}: index -1 has no element to map to: dimension 1 has size 0 "
               f"('{modifier} access) in argument 1 (x): index (0, -1) into shape (2, 0)")
    with pytest.raises(IndexError, match=re.escape(message)):
        q.parallel_do(2, x, y, kernel)
    assert (y == [5.0, 6.0]).all()
    # the same kernel on a non-empty x works, and so does an empty space
    x = np.arange(6.0).reshape(2, 3)
    q.parallel_do(2, x, y, kernel)
    ref = {"clamped": [x[0, 0], x[1, 0]], "circular": [x[0, 2], x[1, 0]],
           "mirror": [x[0, 0], x[1, 0]]}[modifier]
    np.testing.assert_array_equal(y, ref)
    q.parallel_do(0, np.zeros((0, 0)), y, kernel)


def test_checked_on_an_empty_dimension_and_the_good_plugin_kernels(cache, good):
    mod = q.compile_string("pc_empty", EMPTY_SRC)
    y = np.array([5.0, 6.0])
    with pytest.raises(IndexError, match=re.escape(
            "index -1 is out of bounds for dimension 1 with size 0 ('checked access) in "
            "argument 1 (x)")):
        q.parallel_do(2, np.zeros((2, 0)), y, mod.pc_checked)
    for name in ("shift_clamped", "shift_circular", "shift_mirror"):
        with pytest.raises(IndexError, match="has no element to map to: dimension 0 has size 0"):
            q.parallel_do(2, np.zeros(0), y, 1, getattr(good, name))
    assert (y == [5.0, 6.0]).all()


# ---- checked mode ---------------------------------------------------------------------------

def test_the_issue_reproducer_is_an_index_error_in_checked_mode(good):
    xbuf, x = fenced()
    ybuf, y = fenced()
    assert not q.checked.active()
    with q.checked():
        assert q.checked.active()
        with pytest.raises(IndexError) as e:
            q.parallel_do((100, 100), x, y, 2.0, 1.0, good.axpb_free)
        assert "axpb_free: index " in str(e.value)
        assert "(unchecked view, checked mode) in argument 1 (x): index (" in str(e.value)
        assert "into shape (4, 4)" in str(e.value)
        with pytest.raises(IndexError, match=re.escape(
                "axpb_free: index 4 is out of bounds for dimension 0 with size 4 (unchecked view, "
                "checked mode) in argument 1 (x): index (4, 0) into shape (4, 4)")):
            q.parallel_do((5, 4), x, y, 2.0, 1.0, good.axpb_free)
        q.parallel_do((4, 4), x, y, 2.0, 1.0, good.axpb_free)  # the right dims run as usual
    assert not q.checked.active()
    assert fence_intact(xbuf) and fence_intact(ybuf)
    assert (y == 2.0 * CANARY + 1.0).all()


def test_a_checked_launch_names_its_first_bad_position_whatever_the_threads(good):
    # Thousands of bad rows shared between threads: the error is the first in position order.
    xbuf, x = fenced()
    ybuf, y = fenced()
    with q.checked():
        for _ in range(20):
            with pytest.raises(IndexError, match=re.escape("index (4, 0) into shape (4, 4)")):
                q.parallel_do((5000, 4), x, y, 2.0, 1.0, good.axpb_free)
    assert fence_intact(xbuf) and fence_intact(ybuf)


def test_checked_blocks_nest_restore_and_refuse_reentry(good):
    with q.checked():
        with q.checked(False):
            assert not q.checked.active()
        assert q.checked.active()
        with pytest.raises(ValueError):
            with q.checked(False):
                raise ValueError("inside")
        assert q.checked.active()
    assert not q.checked.active()
    block = q.checked()
    with block:
        with pytest.raises(RuntimeError, match="already entered"):
            block.__enter__()
    assert not q.checked.active()
    with block:  # reusable once left
        assert q.checked.active()


def test_checked_mode_covers_written_arguments_load_store_and_functions(good):
    with q.checked():
        # in order on one thread, so that (0, 2) is the first failing position whatever the
        # launch plan measured (Note [deterministic launches])
        with q.deterministic(), pytest.raises(IndexError,
                                              match=re.escape("in argument 2 (y): index (0, 2)")):
            q.parallel_do((3, 4), np.ones((3, 4)), np.zeros((3, 2)), 1.0, 0.0, good.axpb_free)
        img = np.ones((2, 4), np.float32)
        sums = np.zeros((2, 4), np.float32)
        q.parallel_do((2, 2), img, sums, good.row_sum3)
        assert sums[1, 1] == 3.0
        with pytest.raises(IndexError, match=re.escape(
                "index 4 is out of bounds for dimension 1 with size 4 (unchecked view, checked "
                "mode) in argument 1 (x): index (0, 4) into shape (2, 4)")):
            q.parallel_do((2, 4), img, sums, good.row_sum3)
        assert good.sum_prefix(np.array([1.0, 2.0, 3.0]), 3) == 6.0
        with pytest.raises(IndexError, match=re.escape(
                "sum_prefix: index 3 is out of bounds for dimension 0 with size 3 (unchecked "
                "view, checked mode) in argument 1 (x): index (3) into shape (3)")):
            good.sum_prefix(np.array([1.0, 2.0, 3.0]), 4)


CHECKED_SRC = """
namespace ip = isthmus::plugin;
ISTHMUS_PLUGIN(pc_checked_mode, m) {
    m.kernel("pc_copy", [](ip::view<const float, 1> x, ip::view<float, 1> y, int64_t i) {
        y(i) = x(i);
    }, {"x", "y"});
}
"""


def test_compiled_and_cached_kernels_honour_checked_mode(cache, run_python):
    mod = q.compile_string("pc_checked_mode", CHECKED_SRC)
    x = np.arange(8, dtype=np.float32)
    y = np.zeros(8, np.float32)
    q.parallel_do(8, x, y, mod.pc_copy)
    with q.checked():
        with pytest.raises(IndexError, match=re.escape(
                "pc_copy: index 8 is out of bounds for dimension 0 with size 8 (unchecked view, "
                "checked mode) in argument 1 (x): index (8) into shape (8)")):
            q.parallel_do(9, x, y, mod.pc_copy)
    np.testing.assert_array_equal(y, x)
    # A fresh process loads the cached plugin (no compile) and honours the mode the same way.
    code = f"""
        import os
        os.environ["ISTHMUS_CACHE_DIR"] = {str(cache)!r}
        import numpy as np, isthmus as q
        q.init("cpu")
        mod = q.compile_string("pc_checked_mode", {CHECKED_SRC!r})
        x, y = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
        with q.checked():
            try:
                q.parallel_do(9, x, y, mod.pc_copy)
            except IndexError as e:
                print("IndexError", e)
    """
    assert "IndexError pc_copy: index 8 is out of bounds" in run_python(code).stdout
    assert len(list(cache.glob("pc_checked_mode-*.so"))) == 1


def test_the_environment_turns_checked_mode_on(run_python):
    code = f"""
        import os, sys
        os.environ["ISTHMUS_CHECKED"] = sys.argv[1] if len(sys.argv) > 1 else "{{value}}"
        import numpy as np, isthmus as q
        q.init("cpu")
        good = q.import_native({GOOD!r})
        print("active", q.checked.active())
        with q.checked(False):
            print("inner", q.checked.active())
        try:
            q.parallel_do((6, 4), np.ones((4, 4)), np.zeros((4, 4)), 1.0, 0.0, good.axpb_free)
            print("ran")
        except IndexError as e:
            print("IndexError", e)
    """
    out = run_python(textwrap.dedent(code).replace("{value}", "1")).stdout
    assert "active True" in out and "inner False" in out
    assert "IndexError axpb_free: index 4 is out of bounds for dimension 0" in out
    out = run_python(textwrap.dedent(code).replace("{value}", "bogus"), check=False)
    assert "ISTHMUS_CHECKED must be 1 or 0" in out.stderr
    assert "ValueError" in out.stderr


def test_a_plugin_without_checked_mode_support_runs_unchecked_and_says_so(run_python):
    c_plugin = str(BUILD_DIR / "tests" / "plugins" / "c_plugin.so")
    res = run_python(f"""
        import numpy as np, isthmus as q
        q.init("cpu")
        mod = q.import_native({c_plugin!r})
        y = np.zeros(3, np.int64)
        with q.checked():
            q.parallel_do(3, y, mod.c_flags)
            q.parallel_do(3, y, mod.c_flags)
        print(y.tolist())
    """)
    assert res.stdout.strip() == "[1, 1, 1]"  # the flag reached it; it checks nothing itself
    assert res.stderr.count("was not built with checked-mode support") == 1


# ---- parallel_do: shape rules and dims --------------------------------------------------------

def test_declared_shape_rules_refuse_the_reproducer_in_normal_mode(good):
    xbuf, x = fenced()
    ybuf, y = fenced()
    with pytest.raises(ValueError, match=re.escape(
            "argument 1 (x) is indexed at the position, so its leading dimensions must cover "
            "dims (100, 100), but its shape is (4, 4)")):
        q.parallel_do((100, 100), x, y, 2.0, 1.0, good.axpb)
    with pytest.raises(ValueError, match=re.escape("argument 2 (y)")):
        q.parallel_do((5, 5), np.ones((5, 5)), y, 2.0, 1.0, good.axpb)
    assert fence_intact(xbuf) and fence_intact(ybuf) and (y == CANARY).all()
    big = np.zeros((5, 6))
    q.parallel_do((2, 3), np.ones((5, 6)), big, 3.0, 0.0, good.axpb)  # covering is enough
    assert big[:2, :3].sum() == 18.0 and big.sum() == 18.0
    q.parallel_do((0, 100), x, y, 2.0, 1.0, good.axpb)  # nothing runs, nothing to check


def test_bad_dims_raise_before_running(good):
    y = np.zeros((2, 2))
    args = (np.ones((2, 2)), y, 1.0, 0.0, good.axpb_free)
    with pytest.raises(ValueError, match="does not fit int64"):
        q.parallel_do((2 ** 70, 1), *args)
    with pytest.raises(ValueError, match="does not fit int64"):
        q.parallel_do(2 ** 64, np.zeros(1), np.zeros(1), 0, good.shift_clamped)
    with pytest.raises(ValueError, match=re.escape("has more than 2^63 - 1 positions")):
        q.parallel_do((2 ** 40, 2 ** 40), *args)
    with pytest.raises(ValueError, match="negative size"):
        q.parallel_do((2, -1), *args)
    with pytest.raises(ValueError, match="dims must hold integers"):
        q.parallel_do(np.array([2.0, math.nan]), *args)
    with pytest.raises(ValueError, match="dims must hold integers"):
        q.parallel_do(np.array([2.5, 2.0]), *args)
    with pytest.raises(ValueError, match="dims must hold integers"):
        q.parallel_do(np.array([1e300, 1.0]), *args)
    with pytest.raises(TypeError, match="dims must hold ints"):
        q.parallel_do((2.0, 2), *args)
    with pytest.raises(TypeError, match="1-d tensor of integers"):
        q.parallel_do(np.ones((2, 2), np.int64), *args)
    assert (y == 0).all()
    with pytest.raises(ValueError, match="does not fit int64"):
        q.parallel_do(np.array([2 ** 63, 1], np.uint64), *args)
    with pytest.raises(ValueError, match=re.escape("has more than 2^63 - 1 positions")):
        q.parallel_do(np.array([2 ** 62 + 1, 4], np.int64), *args)  # exact, not via float64
    assert (y == 0).all()
    q.parallel_do(np.array([2, 2]), *args)  # integer tensors are fine
    assert (y == 1).all()


# ---- integer ranges of plugin parameters ------------------------------------------------------

WIDTHS = [("echo_i8", "int8", -2 ** 7, 2 ** 7 - 1), ("echo_i16", "int16", -2 ** 15, 2 ** 15 - 1),
          ("echo_i32", "int32", -2 ** 31, 2 ** 31 - 1), ("echo_i64", "int64", -2 ** 63, 2 ** 63 - 1),
          ("echo_u8", "uint8", 0, 2 ** 8 - 1), ("echo_u16", "uint16", 0, 2 ** 16 - 1),
          ("echo_u32", "uint32", 0, 2 ** 32 - 1), ("echo_u64", "uint64", 0, 2 ** 64 - 1)]


@pytest.mark.parametrize("fn,type_name,lo,hi", WIDTHS)
def test_python_ints_out_of_an_integer_parameters_range_raise_overflow_error(good, fn, type_name,
                                                                          lo, hi):
    f = getattr(good, fn)
    assert f(lo) == lo and f(hi) == hi
    assert f(True) == 1 and f(np.int8(5)) == 5
    for bad in (lo - 1, hi + 1, 2 ** 40 if hi < 2 ** 40 else 2 ** 100, -2 ** 100):
        with pytest.raises(OverflowError) as e:
            f(bad)
        text = str(e.value)
        assert text.startswith(f"{fn}: argument 1 (v): ")
        assert f"out of bounds for {type_name}" in text
    for wrong in (1.0, math.nan, math.inf, 1j, "1"):
        with pytest.raises(TypeError):
            f(wrong)


def test_the_issue_case_and_numpy_scalars(good):
    with pytest.raises(OverflowError, match=re.escape(
            "echo_i32: argument 1 (v): integer 1099511627776 is out of bounds for int32")):
        good.echo_i32(2 ** 40)
    with pytest.raises(OverflowError, match="integer 300 is out of bounds for int8"):
        good.echo_i8(np.int64(300))
    with pytest.raises(OverflowError, match="out of bounds for int64"):
        good.echo_i64(np.uint64(2 ** 64 - 1))
    with pytest.raises(OverflowError, match="integer -1 is out of bounds for uint64"):
        good.echo_u64(np.int64(-1))
    # not on the scalar fast path (a tensor argument): the same error
    with pytest.raises(OverflowError, match=re.escape("argument 1 (k): integer 300 is out of "
                                                      "bounds for int8")):
        good.i8_and_tensor(300, np.zeros(2))
    assert good.i8_and_tensor(-128, np.zeros(2)) == -126
    # a kernel's integer argument is checked before anything runs
    y = np.full(3, 7, np.int32)
    with pytest.raises(OverflowError, match=re.escape("argument 2 (v): integer 1099511627776")):
        q.parallel_do(3, y, 2 ** 40, good.fill_i32)
    with pytest.raises(OverflowError, match=re.escape("argument 2 (v): Python integer")):
        q.parallel_do(3, y, 2 ** 100, good.fill_i32)
    assert (y == 7).all()
    q.parallel_do(3, y, -2 ** 31, good.fill_i32)
    assert (y == -2 ** 31).all()


def test_bool_and_real_parameters(good):
    assert good.echo_bool(True) is True and good.echo_bool(np.bool_(False)) is False
    for wrong in (1, 0, 1.0, 2 ** 70, 1j):
        with pytest.raises(TypeError):
            good.echo_bool(wrong)
    # ints convert to reals like float(int) (NumPy does the same), beyond int64 too
    assert good.echo_f64(2 ** 60 + 1) == float(2 ** 60 + 1)
    assert good.echo_f64(2 ** 64 - 1) == float(2 ** 64 - 1)
    assert good.echo_f64(-2 ** 70) == float(-2 ** 70)
    with pytest.raises(OverflowError, match=re.escape(
            "echo_f64: argument 1 (v): Python integer a 2001-bit integer is too large to "
            "convert to float64")):
        good.echo_f64(2 ** 2000)
    with pytest.raises(OverflowError, match="too large to convert to float32"):
        good.echo_f32(-2 ** 2000)
    # float64 -> float32 parameters round as NumPy's cast does (overflow gives inf)
    assert good.echo_f32(0.1) == float(np.float32(0.1))
    assert good.echo_f32(1e300) == math.inf
    assert math.isnan(good.echo_f64(math.nan))
    with pytest.raises(TypeError):
        good.echo_f64(1 + 2j)
    assert good.echo_c64(3) == 3 + 0j


def test_a_plugin_that_fails_to_define_itself_is_refused(cache):
    src = """
    namespace ip = isthmus::plugin;
    ISTHMUS_PLUGIN(pc_bad_rule, m) {
        m.kernel("pc_k", [](ip::view<float, 1> y, int64_t i) { y(i) = 0; }, {"y"})
            .at_position({"z"});
    }
    """
    with pytest.raises(RuntimeError, match=re.escape(
            "failed to define itself: kernel pc_k: at_position(\"z\"): the kernel has no tensor "
            "parameter of that name")):
        q.compile_string("pc_bad_rule", src)
    assert not hasattr(q, "pc_k")


def test_nul_bytes_in_paths_names_and_flags_are_refused(cache):
    with pytest.raises(ValueError, match="NUL byte"):
        q.import_native(GOOD + "\x00.so")
    with pytest.raises(ValueError, match="NUL byte"):
        q.compile_file("/tmp/x\x00.cpp")
    with pytest.raises(ValueError, match="a compiler flag contains a NUL byte"):
        q.compile_string("pc_nul", "ISTHMUS_PLUGIN(pc_nul, m) {}", ["-O2\x00-fplugin=evil.so"])


# ---- a kernel's own launch check (Note [launch checks]) --------------------------------------

LAUNCH_CHECK_SRC = """
#include <atomic>
#include <string>
namespace ip = isthmus::plugin;
static std::atomic<int64_t> checks{0};
struct scaled_copy {
    void check_launch(ip::view<const float, 1> x, ip::view<float, 1> y, float) const {
        ++checks;
        if (x.size(0) != y.size(0))
            throw ip::value_error("scaled_copy: x and y differ in size");
    }
    void operator()(ip::view<const float, 1> x, ip::view<float, 1> y, float a, int64_t i) const {
        y(i) = a * x(i);
    }
};
ISTHMUS_PLUGIN(pc_launch_check, m) {
    m.kernel("pc_scaled_copy", scaled_copy{}, {"x", "y", "a"});
    m.def("pc_launch_checks", [] { return checks.load(); });
}
"""


def test_a_kernels_launch_check_runs_once_per_range_before_any_position(cache):
    mod = q.compile_string("pc_launch_check", LAUNCH_CHECK_SRC)
    x = np.arange(100000, dtype=np.float32)
    y = np.zeros_like(x)
    q.parallel_do(x.size, x, y, 2.0, mod.pc_scaled_copy)
    np.testing.assert_array_equal(y, 2 * x)
    ranges = mod.pc_launch_checks()
    # Once per range the CPU loop runs, not per position; how many ranges follows the measured
    # cost of a position (See Note [CPU launch plan]), which a sanitizer build multiplies.
    assert 1 <= ranges <= x.size // 20
    short = np.full(99999, 5.0, np.float32)
    with pytest.raises(ValueError, match="scaled_copy: x and y differ in size"):
        q.parallel_do(short.size, x, short, 3.0, mod.pc_scaled_copy)
    np.testing.assert_array_equal(short, 5.0)  # nothing written
    with q.checked():
        with pytest.raises(ValueError, match="scaled_copy: x and y differ in size"):
            q.parallel_do(short.size, x, short, 3.0, mod.pc_scaled_copy)
    np.testing.assert_array_equal(short, 5.0)
    assert mod.pc_launch_checks() > ranges
