"""The one inbound rule (Note [inbound rule], docs/boundary.md): each input kind through each entry point.

Every row is an input kind with what the rule says of it: whether it is shared without a copy,
and which error it raises where it is refused. Every entry point that takes a Python object
where a runtime value goes is run on every row, and must agree: the same values, memory shared
exactly where the rule says so (a write through the result shows in the input), the same error
type where the rule refuses (and the input unchanged).
"""
import sys

import numpy as np
import pytest

import isthmus as q

from conftest import BUILD_DIR

torch = pytest.importorskip("torch")

GOOD = str(BUILD_DIR / "tests" / "plugins" / "good_plugin.so")
EXT_DIR = BUILD_DIR / "tests" / "py_in_cpp_ext"

SHARED, COPIED = "shared", "copied"


def _readonly(a):
    a.flags.writeable = False
    return a


class ArrayProtocol:
    """A third-party object that only implements __array__ (NumPy's protocol)."""

    def __init__(self, a):
        self._a = a

    def __array__(self, dtype=None, copy=None):
        return self._a if dtype is None else self._a.astype(dtype)


def _base():
    return np.random.default_rng(7).standard_normal(12)


# name -> (factory returning the object, how the rule treats its memory; None: no memory)
KINDS = {
    "numpy contiguous": (lambda: _base(), SHARED),
    "numpy strided": (lambda: _base()[::3], SHARED),
    "numpy negative strides": (lambda: _base()[::-2], SHARED),
    "numpy 2-d transposed": (lambda: _base().reshape(3, 4).T, SHARED),
    "numpy 0-d": (lambda: np.array(2.5), SHARED),
    "numpy empty": (lambda: np.zeros((0, 3)), None),
    "numpy read-only": (lambda: _readonly(_base()), COPIED),
    "numpy big-endian": (lambda: _base().astype(">f8"), COPIED),
    "torch cpu": (lambda: torch.from_numpy(_base()), SHARED),
    "torch non-contiguous": (lambda: torch.from_numpy(_base()).reshape(3, 4).t(), SHARED),
    "torch negative view": (lambda: torch._neg_view(torch.from_numpy(_base())), COPIED),
    "memoryview (writable buffer)": (lambda: memoryview(_base()), SHARED),
    "bytes-backed buffer (read-only)": (
        lambda: np.frombuffer(_base().tobytes(), dtype=np.float64), COPIED),
    "__array__ object": (lambda: ArrayProtocol(_base()), SHARED),
    "list of floats": (lambda: [float(x) for x in _base()], COPIED),
    "nested list": (lambda: _base().reshape(3, 4).tolist(), COPIED),
}

# Kinds every entry point refuses, with the error type (the input is left as it was).
REFUSED = {
    "torch requires_grad": (lambda: torch.ones(3, dtype=torch.float64, requires_grad=True),
                            BufferError),
    "object()": (lambda: object(), TypeError),
}


def as_numpy(x):
    """The input's values as a NumPy array (the reference)."""
    if isinstance(x, torch.Tensor):
        return x.resolve_neg().resolve_conj().detach().numpy().copy()
    if isinstance(x, ArrayProtocol):
        return np.array(x._a)
    return np.array(x)


def write_seven(v):
    """Writes 7 into every element of a converted value (a qvalue)."""
    v[...] = 7.0


# ---- entry points: each converts x and returns a qvalue whose memory follows the rule ----

def via_asvalue(x):
    return q.asvalue(x)


def via_from_py(x):
    return q.from_py(x)


ENTRIES = {"q.asvalue": via_asvalue, "q.from_py": via_from_py}


@pytest.fixture(scope="module")
def good():
    return q.import_native(GOOD)


@pytest.fixture(scope="module")
def ext():
    if not list(EXT_DIR.glob("isthmus_embed_ext*")):
        pytest.skip("the embedding test extension is not built")
    sys.path.insert(0, str(EXT_DIR))
    import isthmus_embed_ext

    return isthmus_embed_ext


@pytest.mark.parametrize("entry", sorted(ENTRIES))
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_conversions_share_exactly_where_the_rule_says(kind, entry):
    make, memory = KINDS[kind]
    x = make()
    ref = as_numpy(x)
    v = ENTRIES[entry](x)
    np.testing.assert_array_equal(np.asarray(v), ref.astype(np.asarray(v).dtype))
    if memory is None:
        return
    write_seven(v)
    after = as_numpy(x)
    if memory == SHARED:
        assert (after == 7.0).all(), f"{entry} copied a {kind}"
    else:
        np.testing.assert_array_equal(after, ref)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_copy_false_shares_or_raises_value_error(kind):
    make, memory = KINDS[kind]
    x = make()
    ref = as_numpy(x)
    if memory == COPIED:
        with pytest.raises(ValueError, match="without a copy"):
            q.from_py(x, copy=False)
        np.testing.assert_array_equal(as_numpy(x), ref)
    else:
        v = q.from_py(x, copy=False)
        np.testing.assert_array_equal(np.asarray(v), ref)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_copy_true_and_value_never_share(kind):
    make, _ = KINDS[kind]
    for convert in (lambda x: q.from_py(x, copy=True), q.value):
        x = make()
        ref = as_numpy(x)
        v = convert(x)
        if v.size:
            write_seven(v)
        np.testing.assert_array_equal(as_numpy(x), ref)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_plugin_arguments_follow_the_rule(good, kind):
    make, memory = KINDS[kind]
    x = make()
    ref = as_numpy(x)
    if ref.ndim != 1 or ref.dtype != np.float64:
        pytest.skip("fill_inplace takes a 1-d float64 view")
    if memory != SHARED:  # See Note [written arguments]: a written copy would be lost
        with pytest.raises(ValueError, match=r"argument 1 \(y\) is written"):
            good.fill_inplace(x, 7.0)
        np.testing.assert_array_equal(as_numpy(x), ref)
        return
    good.fill_inplace(x, 7.0)  # writes through its view of the argument
    assert (as_numpy(x) == 7.0).all(), f"the plugin call copied a {kind}"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_cpp_from_py_tensor_follows_the_rule(ext, kind):
    make, memory = KINDS[kind]
    x = make()
    ref = as_numpy(x)
    if memory == COPIED:
        with pytest.raises(ValueError, match="without a copy"):
            ext.fill_from_py(x, 7.0, False)
        np.testing.assert_array_equal(as_numpy(x), ref)
    n = ext.fill_from_py(x, 7.0, True)
    assert n == ref.size
    after = as_numpy(x)
    if memory == SHARED:
        assert (after == 7.0).all(), f"from_py<tensor> copied a {kind}"
    elif memory == COPIED:
        np.testing.assert_array_equal(after, ref)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_operators_and_functions_compute_on_every_kind(kind):
    make, _ = KINDS[kind]
    x = make()
    ref = as_numpy(x)
    A = q.value(np.ones(ref.shape))
    tol = 1e-6 if isinstance(x, list) else 1e-15  # lists of floats: the `scalar` precision
    kw = {"rtol": tol, "atol": tol}
    np.testing.assert_allclose(np.asarray(A + x), 1.0 + ref, **kw)
    np.testing.assert_allclose(np.asarray(q.add(x, 1.0)), ref + 1.0, **kw)
    np.testing.assert_allclose(np.asarray(q.negative(x)), -ref, **kw)
    np.testing.assert_array_equal(as_numpy(x), ref)  # inputs are never written


@pytest.mark.parametrize("kind", sorted(REFUSED))
def test_refused_kinds_raise_the_same_error_everywhere(good, kind):
    make, error = REFUSED[kind]
    x = make()
    A = q.value([1.0, 2.0, 3.0])
    calls = {
        "q.asvalue": lambda: q.asvalue(x),
        "q.from_py": lambda: q.from_py(x),
        "q.value": lambda: q.value(x),
        "q.negative": lambda: q.negative(x),
        "q.add": lambda: q.add(A, x),
        "plugin call": lambda: good.fill_inplace(x, 7.0),
    }
    if error is BufferError:  # an operator defers to objects it does not know (TypeError)
        calls["operator"] = lambda: A + x
        calls["q.from_dlpack"] = lambda: q.from_dlpack(x)
    for name, call in calls.items():
        with pytest.raises(error):
            call()
    np.testing.assert_array_equal(A.to_py(), [1.0, 2.0, 3.0])
    if isinstance(x, torch.Tensor):
        np.testing.assert_array_equal(x.detach().numpy(), np.ones(3))


def test_requires_grad_message_names_detach(good, ext):
    w = torch.ones(4, dtype=torch.float64, requires_grad=True)
    for call in (lambda: good.fill_inplace(w, 7.0), lambda: ext.fill_from_py(w, 7.0, True)):
        with pytest.raises(BufferError, match=r"requires grad.*detach\(\)"):
            call()
    good.fill_inplace(w.detach(), 7.0)  # the explicit way: shares the memory
    assert (w.detach().numpy() == 7.0).all()


def test_conjugate_views_are_resolved_or_refused():
    c = torch.tensor([1 + 2j, 3 - 4j], dtype=torch.complex128).conj()
    v = q.from_py(c)
    np.testing.assert_array_equal(np.asarray(v), np.array([1 - 2j, 3 + 4j]))
    with pytest.raises(ValueError, match="conjugate bit"):
        q.from_py(c, copy=False)
    np.testing.assert_array_equal(np.asarray(q.asvalue(c) + 0), np.array([1 - 2j, 3 + 4j]))


def test_copy_argument_takes_booleans_or_none_only():
    for bad in (1, "yes", 0.0):
        with pytest.raises(TypeError, match="copy must be None, True or False"):
            q.from_py(np.zeros(2), copy=bad)
        with pytest.raises(TypeError, match="copy must be None, True or False"):
            q.from_dlpack(np.zeros(2), copy=bad)


def test_parallel_do_arguments_follow_the_rule(good):
    x = torch.from_numpy(np.arange(6.0).reshape(2, 3))
    y = torch.zeros(3, 2, dtype=torch.float64).t()  # non-contiguous output, shared
    q.parallel_do((2, 3), x, y, 2.0, 1.0, good.axpb)
    np.testing.assert_array_equal(y.numpy(), 2.0 * np.arange(6.0).reshape(2, 3) + 1.0)
    w = torch.zeros(2, 3, dtype=torch.float64, requires_grad=True)
    with pytest.raises(BufferError, match="requires grad"):
        q.parallel_do((2, 3), x, w, 2.0, 1.0, good.axpb)
    assert (w.detach().numpy() == 0).all()
    ylist = [[0.0] * 3, [0.0] * 3]  # a list is a copy: its writes would be lost
    with pytest.raises(ValueError, match=r"argument 2 \(y\) is written.*a list cannot be shared"):
        q.parallel_do((2, 3), x, ylist, 2.0, 1.0, good.axpb)
    assert ylist == [[0.0] * 3, [0.0] * 3]


def test_from_dlpack_argument_errors_leave_the_input_alone():
    x = np.arange(3.0)
    for call, match in ((lambda: q.from_dlpack(), "one positional argument"),
                        (lambda: q.from_dlpack(x, x), "one positional argument"),
                        (lambda: q.from_dlpack(x, dev="cpu"), "unexpected keyword argument 'dev'"),
                        (lambda: q.from_dlpack(x, copy="no"), "copy must be None, True or False")):
        with pytest.raises(TypeError, match=match):
            call()
    np.testing.assert_array_equal(x, [0.0, 1.0, 2.0])
    with pytest.raises(TypeError, match="unexpected keyword argument 'strem'"):
        q.value([1.0]).__dlpack__(strem=None)
