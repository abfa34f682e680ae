"""Operands, dtypes and outputs: how the protocols read NumPy's arguments and keywords."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _isthmus as _q

_qvalue = _q.qvalue


class _Missing:
    """The "not given" default of keywords whose None means something."""

    def __repr__(self) -> str:
        return "<not given>"


_MISSING: Any = _Missing()
_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def _is_number(x: Any) -> bool:
    """A Python number (weak) or a NumPy scalar (strong): passed to isthmus as it is."""
    return isinstance(x, (np.generic, bool, int, float, complex))


# Note [Python integers out of bounds]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# NumPy 2 (NEP 50) takes a Python int as a weak scalar: it takes the dtype it meets, and when
# its value does not fit that dtype NumPy raises OverflowError ("Python integer 300 out of
# bounds for int8") instead of wrapping it: np.add(a, 200, dtype=np.int8),
# np.full_like(int8_array, 300), np.max(int8_array, initial=300), np.pad(...,
# constant_values=300). The protocols convert such ints with _check_python_int before any
# cast, so 300 never becomes 44. NumPy scalars (np.int64(300)) and floats are not Python
# ints and keep NumPy's unsafe casts (np.full_like(int8_array, 300.5) is 44 in NumPy too);
# initial= of a reduction is the exception, converted as NumPy does with int() first
# (_reduction_scalar in _reductions.py).


def _check_python_int(value: Any, dt: Any) -> None:
    """OverflowError, as NumPy 2 raises it, when a Python int does not fit the integer dtype dt.

    See Note [Python integers out of bounds].
    """
    if type(value) is bool or not isinstance(value, int):
        return
    if not isinstance(dt, np.dtype) or dt.kind not in "iu":
        return
    info = np.iinfo(dt)
    if not info.min <= value <= info.max:
        raise OverflowError(f"Python integer {value} out of bounds for {dt}")


def _operand(x: Any) -> Any:
    """An operand as isthmus takes it: qvalues and numbers as they are, the rest via asvalue."""
    if isinstance(x, _qvalue) or _is_number(x):
        return x
    if isinstance(x, (list, tuple)):
        x = np.asarray(x)  # NumPy's dtype inference (Python floats are float64 here)
    return _q.asvalue(x)


def _tensor(x: Any) -> Any:
    """An array argument as a qvalue (numbers too: reductions and shape functions need one)."""
    if isinstance(x, _qvalue):
        return x
    if _is_number(x) or isinstance(x, (list, tuple)):
        x = np.asarray(x)
    return _q.asvalue(x)


def _dtype_arg(dtype: Any, fname: str) -> Any:
    """A dtype= argument: a NumPy dtype, or the string "bfloat16"."""
    if isinstance(dtype, str) and dtype == "bfloat16":
        return dtype
    try:
        return np.dtype(dtype)
    except TypeError as e:
        raise TypeError(f"{fname}: dtype={dtype!r} is not a dtype ({e})") from None


def _kind(dt: Any) -> str:
    """NumPy's dtype kind letter ("f" for bfloat16)."""
    return dt.kind if isinstance(dt, np.dtype) else "f"


def _astype(x: Any, dt: Any) -> Any:
    """x converted to dtype dt (unsafe casting); the same object when it already has it."""
    if isinstance(x, _qvalue):
        return x if _same_dtype(x.dtype, dt) else x.astype(dt)
    if isinstance(x, np.generic):
        return x if x.dtype == dt else np.asarray(x).astype(dt)[()]
    if _is_number(x):
        if not isinstance(dt, np.dtype):
            return x
        _check_python_int(x, dt)
        return np.asarray(x).astype(dt)[()]
    return _q.asvalue(x).astype(dt)


def _same_dtype(a: Any, b: Any) -> bool:
    return str(a) == str(b)


_BF16_SAFE_FROM = {"bool", "int8", "uint8", "bfloat16"}
_BF16_SAFE_TO = {"bfloat16", "float32", "float64", "complex64", "complex128"}


def _can_cast(src: Any, dst: Any, casting: str) -> bool:
    """np.can_cast, extended to bfloat16 (which NumPy lacks) by its place in the kinds."""
    if isinstance(src, np.dtype) and isinstance(dst, np.dtype):
        return bool(np.can_cast(src, dst, casting))
    if casting == "unsafe":
        return True
    if casting in ("no", "equiv"):
        return _same_dtype(src, dst)
    if casting == "safe":
        if str(src) == "bfloat16":
            return str(dst) in _BF16_SAFE_TO
        return str(src) in _BF16_SAFE_FROM
    order = "buifc"  # same_kind: never towards a lower kind
    return order.index(_kind(src)) <= order.index(_kind(dst))


def _check_casting_name(casting: Any) -> None:
    if casting not in _CASTINGS:
        raise ValueError(
            "casting must be one of 'no', 'equiv', 'safe', 'same_kind', or 'unsafe', "
            f"got {casting!r}"
        )


def _unsupported(fname: str, keyword: str, value: Any, why: str = "") -> TypeError:
    more = f" ({why})" if why else ""
    return TypeError(
        f"{fname}: isthmus does not support {keyword}={value!r}{more}; "
        "convert with np.asarray(...) to compute in NumPy"
    )


def _shape_of(x: Any) -> tuple[int, ...]:
    if isinstance(x, (_qvalue, np.ndarray)):
        return tuple(x.shape)
    return ()


def _out_array(out: Any, fname: str) -> Any:
    """Checks an out= argument (a tensor qvalue or a writeable NumPy array)."""
    if isinstance(out, _qvalue):
        if out.kind != "tensor":
            raise TypeError(f"{fname}: out= must be a tensor, got a qvalue of kind {out.kind}")
        return out
    if isinstance(out, np.ndarray):
        if not out.flags.writeable:
            raise ValueError(f"{fname}: output array is read-only")
        return out
    raise TypeError(f"{fname}: out= must be a qvalue or a NumPy array, got {type(out).__name__}")


def _store(fname: str, out: Any, r: Any, mask: Any, casting: str, what: str = "ufunc") -> Any:
    """Writes r into out (where mask is true) after NumPy's casting and shape checks."""
    out = _out_array(out, fname)
    rdt, odt = r.dtype, out.dtype
    if not _can_cast(rdt, odt, casting):
        if what == "ufunc":
            raise TypeError(
                f"Cannot cast ufunc '{fname}' output from {_dtype_repr(rdt)} to "
                f"{_dtype_repr(odt)} with casting rule '{casting}'"
            )
        raise TypeError(
            f"Cannot cast array data from {_dtype_repr(rdt)} to {_dtype_repr(odt)} according "
            f"to the rule '{casting}' ({fname}'s out=)"
        )
    oshape = tuple(out.shape)
    shapes = [_shape_of(r)] + ([_shape_of(mask)] if mask is not None else [])
    try:
        fits = np.broadcast_shapes(oshape, *shapes) == oshape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"{fname}: non-broadcastable output operand with shape {oshape} doesn't match the "
            f"broadcast shape of the result and mask, {' and '.join(map(str, shapes))}"
        )
    r = _astype(r, odt)
    if isinstance(out, np.ndarray):
        try:
            target = _q.from_py(out, copy=False)
        except ValueError:  # not shareable (byte order, alignment): write through NumPy
            np.copyto(out, np.asarray(r), casting="unsafe",
                      where=True if mask is None else np.asarray(mask))
            return out
    else:
        target = out
    if mask is not None:
        r = _q.where(mask, r, target)
    target[...] = r
    return out


def _dtype_repr(dt: Any) -> str:
    return repr(dt) if isinstance(dt, np.dtype) else f"dtype('{dt}')"


def _mask(where: Any, fname: str) -> Any:
    """A where= argument as a bool qvalue, or None for "everywhere"."""
    if where is True or where is _MISSING:
        return None
    m = _operand(where)
    if not isinstance(m, _qvalue):
        m = _q.asvalue(np.asarray(m))
    if not _same_dtype(m.dtype, "bool"):
        raise TypeError(
            f"{fname}: where= must be a boolean mask, got dtype {m.dtype} (cannot cast it to "
            "bool according to the rule 'safe')"
        )
    return m


def _single_out(out: Any, fname: str) -> Any:
    """NumPy passes out= as a tuple to __array_ufunc__; functions pass it as it is."""
    if isinstance(out, tuple):
        if len(out) != 1:
            raise TypeError(f"{fname}: expected one output, got {len(out)}")
        out = out[0]
    return out


def _given(value: Any) -> bool:
    return value is not _MISSING and value is not np._NoValue


def _opt(value: Any, default: Any) -> Any:
    return value if _given(value) else default
