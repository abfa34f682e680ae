"""One library, both directions: python3 imports isthmus and a C++ extension that calls back
into Python through pyvalue (run by CTest as py_in_cpp_from_python)."""

import os
import threading

import isthmus
import isthmus_embed_ext as ext
import pytest


def mapped_isthmus_files():
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "isthmus" in line and "/" in line}
    return {p for p in paths if "libisthmus" in p or "_isthmus" in p}


def test_same_library_loaded_once():
    files = mapped_isthmus_files()
    real = {os.path.realpath(p) for p in files}
    assert len(real) == 1, files
    assert os.path.realpath(ext.library_path()) in real
    assert os.path.realpath(isthmus._isthmus.__file__) in real
    assert ext.interpreter_initialized()


def test_reentrant_call_back_into_python():
    assert ext.apply(lambda x: x * 3, 14) == 42
    # nested: Python -> C++ -> Python -> C++ -> Python
    assert ext.apply(lambda x: ext.apply(lambda y: y + 1, x) * 2, 5) == 12


def test_calls_with_the_gil_released():
    assert ext.sum_calls(lambda i: i * i, 1000) == sum(i * i for i in range(1000))


def test_cpp_threads_call_python_without_deadlock():
    lock = threading.Lock()
    seen = []

    def f(i):
        with lock:
            seen.append(threading.get_ident())
        return i

    assert ext.threaded_calls(f, 8, 2000) == 8 * sum(range(2000))
    assert len(seen) == 8 * 2000
    assert threading.get_ident() not in seen  # the C++ threads, not this one, ran f


def test_python_exceptions_cross_back_unchanged():
    def raiser():
        raise KeyError("from python")

    with pytest.raises(KeyError, match="from python"):
        ext.call_and_throw(raiser)

    def native_error():
        isthmus._isthmus._raise_error("value_error", "native message")

    with pytest.raises(ValueError, match="native message"):
        ext.call_and_throw(native_error)


def test_tensor_shared_with_numpy():
    np = pytest.importorskip("numpy")
    a = ext.arange_tensor(5)
    assert isinstance(a, np.ndarray)
    np.testing.assert_array_equal(a, np.arange(5.0))
    a[0] = 9.0
    assert a[0] == 9.0


def test_isthmus_still_works():
    isthmus.init("cpu")
    v = isthmus.value([1.0, 2.0])
    assert float(isthmus.to_py(v).sum() if hasattr(isthmus, "to_py") else v.to_py().sum()) == 3.0
