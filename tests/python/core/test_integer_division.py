# Integer // and % by a scalar divisor (Note [division by a scalar integer]) against NumPy:
# every int8/uint8 pair, every int16/uint16 dividend, int32/uint32 edges and exact multiples.
import numpy as np
import pytest

import isthmus as q

rng = np.random.default_rng(20261127)


@pytest.fixture(autouse=True)
def cpu():
    q.init("cpu")


def check(a, b):
    with np.errstate(all="ignore"):
        want_div, want_mod = a // a.dtype.type(b), a % a.dtype.type(b)
    got_div = np.asarray(q.asvalue(a) // int(b))
    got_mod = np.asarray(q.asvalue(a) % int(b))
    assert got_div.dtype == want_div.dtype and got_mod.dtype == want_mod.dtype
    np.testing.assert_array_equal(got_div, want_div, err_msg=f"{a.dtype} // {b}")
    np.testing.assert_array_equal(got_mod, want_mod, err_msg=f"{a.dtype} % {b}")


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_every_8_bit_pair(dtype):
    info = np.iinfo(dtype)
    a = np.arange(info.min, info.max + 1).astype(dtype)
    for b in range(info.min, info.max + 1):
        check(a, b)  # 0, -1 and the minimum take the element functions' special values


@pytest.mark.parametrize("dtype", ["int16", "uint16"])
def test_every_16_bit_dividend(dtype):
    info = np.iinfo(dtype)
    a = np.arange(info.min, info.max + 1).astype(dtype)
    for b in list(range(-40, 41)) + [info.min, info.min + 1, info.max, info.max - 1, 1000,
                                     -1000, 12345, -257, 256]:
        if info.min <= b <= info.max:
            check(a, b)


@pytest.mark.parametrize("dtype", ["int32", "uint32"])
def test_32_bit_edges_and_exact_quotients(dtype):
    info = np.iinfo(dtype)
    edges = [info.min, info.min + 1, info.max, info.max - 1, 0, 1, 2, 3]
    if info.min < 0:
        edges += [-1, -2, -3]
    a = np.concatenate([rng.integers(info.min, info.max, 100_000, endpoint=True, dtype=dtype),
                        np.array(edges, dtype=dtype)])
    divisors = [1, 2, 3, 7, 10, 1000, 65536, 99991, info.max, info.max - 1, 0]
    if info.min < 0:
        divisors += [-1, -2, -3, -7, -10, -1000, -99991, info.min, info.min + 1]
    divisors += [int(b) for b in rng.integers(info.min, info.max, 100, dtype=np.int64)]
    for b in divisors:
        check(a, b)
    for b in (3, 7, 1000, 12345, 2**20 + 1):  # exact quotients: the product's rounding
        lo = info.min // b if info.min < 0 else 0
        multiples = rng.integers(lo, info.max // b, 20_000) * b
        check(multiples.astype(dtype), b)
        if info.min < 0:
            check(multiples.astype(dtype), -b)


def test_array_divisors_and_layouts_agree_with_the_scalar_path():
    a = rng.integers(-10**9, 10**9, 5001).astype(np.int32)
    for b in (7, -7, 1000):
        by_scalar = np.asarray(q.asvalue(a) // b)
        by_array = np.asarray(q.asvalue(a) // q.asvalue(np.full_like(a, b)))
        strided = np.asarray(q.asvalue(a[::3]) // b)
        np.testing.assert_array_equal(by_scalar, by_array)
        np.testing.assert_array_equal(strided, by_scalar[::3])
        np.testing.assert_array_equal(np.asarray(q.asvalue(a) % b), a % np.int32(b))
