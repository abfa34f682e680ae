"""NumPy's protocols for qvalue: __array_ufunc__ (NEP 13), __array_function__ (NEP 18), __format__.

Note [NumPy protocols]
~~~~~~~~~~~~~~~~~~~~~~
NumPy lets another array type take over its functions: a ufunc called with a qvalue among its
operands calls ``qvalue.__array_ufunc__`` (NEP 13), and a NumPy function with a dispatcher
(``np.sum``, ``np.concatenate``, ``np.median``, ...) calls ``qvalue.__array_function__``
(NEP 18). Both are written here in Python and attached to the native type in ``__init__.py``
(the type is a mutable heap type), because each only maps NumPy's names and keywords onto the
module functions, which do the work natively; the cost is one Python call per NumPy call.

The rules, as CuPy's are for its arrays:

1. **isthmus computes where it has the op.** Every ufunc in ``HANDLED_UFUNCS`` (its
   ``__call__``), the reductions ``HANDLED_REDUCTIONS`` (``ufunc.reduce``), the scans
   ``HANDLED_ACCUMULATIONS`` (``ufunc.accumulate``) and every function in
   ``HANDLED_FUNCTIONS`` runs in isthmus, on the device where the values are, and returns
   qvalues. Operands go through ``q.asvalue`` (NumPy arrays are shared, not copied; lists are
   read by NumPy first so they get NumPy's dtypes); Python numbers stay weak and NumPy scalars
   strong, as for the operators. A 0-d result is a scalar qvalue where NumPy gives a NumPy
   scalar. Results follow isthmus's dtype rules (docs/ops.md), which are NumPy 2's except
   where docs/numpy-protocols.md lists a difference.
2. **NumPy's keywords are honoured or refused, never ignored.** A keyword isthmus cannot honour
   (``order='F'``, ``np.pad``'s ``stat_length``, ``np.var``'s ``mean=``, ...) raises
   ``TypeError`` naming it, before anything is computed or written. ``out=`` takes a qvalue
   or a NumPy array: the result is computed, checked against ``casting`` and the output's
   shape, then written in place (a NumPy output through a shared view of its memory), and the
   output object is returned, as NumPy does; so ``ndarray += qvalue`` still writes into the
   array. ``where=`` computes everywhere and keeps the output's old values where the mask is
   false (without ``out=``, those positions are zero, where NumPy leaves them uninitialised).
   ``dtype=`` and a ``casting`` other than ``'same_kind'`` are checked by NumPy's own type
   resolution (``ufunc.resolve_dtypes``), so they raise NumPy's exceptions with NumPy's
   messages; with ``dtype=`` the operands are cast to NumPy's loop dtypes first.
3. **Everything else falls back to NumPy on the host, for CPU values only.** A ufunc isthmus
   lacks, another ufunc method (``outer``, ``at``, ``reduceat``, ``reduce`` of a ufunc that
   is not a reduction here) and a NumPy function not in ``HANDLED_FUNCTIONS`` run NumPy's own
   code on ``np.asarray`` views of the qvalues (shared memory, so ``np.add.at`` and ``out=``
   write into them); ndarray and NumPy scalar results come back as qvalues (through
   ``q.asvalue``, an output that was a qvalue as that qvalue), anything else as NumPy returned
   it. A qvalue on a CUDA device raises ``TypeError`` instead: NumPy can only read host memory,
   and a silent device-to-host transfer is the mistake this rule exists to prevent (move it
   with ``A.to("cpu")`` when that is meant).
4. **Foreign array types are left alone**: when another argument's type overrides NumPy too
   (a type with its own ``__array_ufunc__``/``__array_function__`` that is neither ndarray nor
   qvalue), the protocol returns ``NotImplemented`` so that type, or NumPy's TypeError, decides.
   Masked arrays count as foreign: reading one as a plain array would drop its mask.

``__format__`` formats a scalar, or a tensor with one element, as its Python number
(``f"{x:.2f}"``); an empty spec is ``str(x)``; other values with a spec raise ``TypeError``
as ``ndarray.__format__`` does.
"""

from __future__ import annotations

import builtins
import operator
import sys
from typing import Any, Callable

import numpy as np

from . import _isthmus as _q

__all__ = [
    "HANDLED_UFUNCS",
    "HANDLED_REDUCTIONS",
    "HANDLED_ACCUMULATIONS",
    "HANDLED_FUNCTIONS",
    "array_ufunc",
    "array_function",
    "format_value",
]

_qvalue = _q.qvalue
_AxisError = getattr(getattr(np, "exceptions", np), "AxisError")


class _Missing:
    """The "not given" default of keywords whose None means something."""

    def __repr__(self) -> str:
        return "<not given>"


_MISSING: Any = _Missing()
_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")

# ---------------------------------------------------------------------------------------------
# The mapping tables
# ---------------------------------------------------------------------------------------------

# The NumPy ufuncs isthmus has, each under the same name as a module function. Names missing
# from either side (an older NumPy) are skipped; aliases (np.divide is np.true_divide, np.abs
# is np.absolute, np.mod is np.remainder, np.bitwise_not is np.invert, np.conj is
# np.conjugate) are the same ufunc object, so one name covers them.
_UFUNC_NAMES = """
    add subtract multiply true_divide floor_divide remainder power maximum minimum arctan2
    equal not_equal less less_equal greater greater_equal
    logical_and logical_or logical_xor logical_not
    bitwise_and bitwise_or bitwise_xor invert left_shift right_shift
    negative absolute sign exp exp2 log log2 log10 expm1 log1p sqrt cbrt
    sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh arccosh arctanh
    floor ceil rint isnan isinf isfinite conjugate square reciprocal matmul
""".split()


def _positive(x: Any) -> Any:
    """np.positive: +x, a copy of x."""
    return +x if isinstance(x, _qvalue) else +_operand(x)


def _build_ufunc_table() -> dict[np.ufunc, Callable[..., Any]]:
    table: dict[np.ufunc, Callable[..., Any]] = {}
    for name in _UFUNC_NAMES:
        uf = getattr(np, name, None)
        fn = getattr(_q, name, None)
        if isinstance(uf, np.ufunc) and fn is not None:
            table[uf] = fn
    table[np.positive] = _positive
    return table


#: NumPy ufunc -> the isthmus function its ``__call__`` runs (See Note [NumPy protocols]).
HANDLED_UFUNCS: dict[np.ufunc, Callable[..., Any]] = _build_ufunc_table()

#: ufunc -> the isthmus reduction that ``ufunc.reduce`` runs.
HANDLED_REDUCTIONS: dict[np.ufunc, str] = {
    np.add: "sum",
    np.multiply: "prod",
    np.maximum: "max",
    np.minimum: "min",
    np.logical_and: "all",
    np.logical_or: "any",
}

#: ufunc -> the isthmus scan that ``ufunc.accumulate`` runs.
HANDLED_ACCUMULATIONS: dict[np.ufunc, str] = {np.add: "cumsum", np.multiply: "cumprod"}

#: NumPy function -> its isthmus implementation (filled by ``_implements`` below).
HANDLED_FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {}


def _implements(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Registers an implementation for the NumPy functions of these names that exist."""

    def register(impl: Callable[..., Any]) -> Callable[..., Any]:
        for name in names:
            fn = getattr(np, name, None)
            if fn is not None and not isinstance(fn, np.ufunc) and fn not in HANDLED_FUNCTIONS:
                HANDLED_FUNCTIONS[fn] = impl
        return impl

    return register


# ---------------------------------------------------------------------------------------------
# Operands, dtypes, outputs
# ---------------------------------------------------------------------------------------------


def _is_number(x: Any) -> bool:
    """A Python number (weak) or a NumPy scalar (strong): passed to isthmus as it is."""
    return isinstance(x, (np.generic, bool, int, float, complex))


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


# ---------------------------------------------------------------------------------------------
# __array_ufunc__
# ---------------------------------------------------------------------------------------------


def _masked(x: Any) -> bool:
    """True for NumPy masked arrays, whose mask isthmus would drop (numpy.ma loaded only)."""
    ma = sys.modules.get("numpy.ma")
    return ma is not None and isinstance(x, ma.MaskedArray)


def _foreign(x: Any) -> bool:
    """True when x's type overrides NumPy's ufuncs itself (neither ndarray nor qvalue), and for
    masked arrays, whose meaning (the mask) isthmus cannot keep."""
    t = type(x)
    if issubclass(t, _qvalue):
        return False
    if not hasattr(t, "__array_ufunc__"):
        return False
    return t.__array_ufunc__ is not np.ndarray.__array_ufunc__ or _masked(x)


def _has_masked(x: Any, depth: int = 0) -> bool:
    """True when a masked array is among a function's arguments (or in a list of them)."""
    if _masked(x):
        return True
    if depth < 2 and type(x) in (list, tuple):
        return builtins.any(_has_masked(e, depth + 1) for e in x)
    if depth < 1 and type(x) is dict:
        return builtins.any(_has_masked(e, depth + 1) for e in x.values())
    return False


def _weak_type(x: Any) -> Any:
    """An operand's entry for ufunc.resolve_dtypes (Python types for weak scalars)."""
    if isinstance(x, _qvalue):
        dt = x.dtype
        if x.kind == "scalar":  # isthmus's scalars are weak, as Python numbers
            kind = _kind(dt)
            return np.dtype(bool) if kind == "b" else {"i": int, "u": int, "f": float}.get(
                kind, complex)
        if not isinstance(dt, np.dtype):
            raise TypeError(
                f"dtype= and casting= need NumPy dtypes, and {dt} is not one; convert with "
                "A.astype('float32') first"
            )
        return dt
    if isinstance(x, (np.generic, np.ndarray)):
        return x.dtype
    if isinstance(x, bool):
        return np.dtype(bool)
    for t in (int, float, complex):
        if isinstance(x, t):
            return t
    return np.asarray(x).dtype


def _numpy_loop(ufunc: np.ufunc, ops: list[Any], dtype: Any, casting: str) -> tuple[Any, ...]:
    """NumPy's loop dtypes for these operands, dtype= and casting (raising NumPy's errors)."""
    dts = tuple(_weak_type(x) for x in ops) + (None,) * ufunc.nout
    if dtype is None:
        return tuple(ufunc.resolve_dtypes(dts, casting=casting))
    if not isinstance(dtype, np.dtype):
        raise TypeError(
            f"{ufunc.__name__}: dtype={dtype!r} is not a NumPy dtype; cast the operands "
            "with .astype() instead"
        )
    sig = (None,) * ufunc.nin + (dtype,) * ufunc.nout
    return tuple(ufunc.resolve_dtypes(dts, signature=sig, casting=casting))


def _is_default_matmul_axes(axes: Any) -> bool:
    """axes= of matmul that says what matmul does anyway (the last two axes of each)."""
    if axes is None:
        return False
    try:
        return [tuple(a) for a in axes] == [(-2, -1)] * 3
    except TypeError:
        return False


def _ufunc_call(ufunc: np.ufunc, fn: Callable[..., Any], inputs: tuple[Any, ...],
                kwargs: dict[str, Any]) -> Any:
    name = ufunc.__name__
    out = _single_out(kwargs.pop("out", None), name)
    where = kwargs.pop("where", True)
    casting = kwargs.pop("casting", "same_kind")
    dtype = kwargs.pop("dtype", None)
    order = kwargs.pop("order", "K")
    kwargs.pop("subok", None)  # our results are qvalues either way
    if ufunc is np.matmul and _is_default_matmul_axes(kwargs.get("axes")):
        del kwargs["axes"]  # ndarray's @= passes the default axes explicitly
    for key, value in kwargs.items():
        if value is not None:  # signature=, axes=, axis=, keepdims= (gufuncs)
            raise _unsupported(f"numpy.{name}", key, value)
    if order not in ("K", "A", "C", None):
        raise _unsupported(f"numpy.{name}", "order", order, "results are in C or K order")
    _check_casting_name(casting)
    if dtype is not None:
        dtype = _dtype_arg(dtype, f"numpy.{name}")
    ops = [_operand(x) for x in inputs]
    mask = _mask(where, f"numpy.{name}")
    loop = None
    if dtype is not None or casting != "same_kind":  # NumPy's own checks and messages
        loop = _numpy_loop(ufunc, ops, dtype, casting)
    if dtype is not None:
        ops = [_astype(x, d) for x, d in zip(ops, loop)]
    r = fn(*ops)
    if dtype is not None:
        r = _astype(r, loop[-1])
    if out is None:
        if mask is not None:
            r = _q.where(mask, r, _q.zeros_like(r))
        return r
    return _store(name, out, r, mask, casting)


def _reduction(qname: str, fname: str, a: Any, axis: Any, dtype: Any, out: Any,
               keepdims: Any, initial: Any, where: Any, out_casting: str = "unsafe") -> Any:
    """sum/prod/max/min/all/any with NumPy's keywords (np.sum and np.add.reduce alike)."""
    A = _tensor(a)
    keepdims = bool(_opt(keepdims, False))
    if dtype is not None:
        dtype = _dtype_arg(dtype, fname)
        if qname in ("all", "any") and not _same_dtype(dtype, "bool"):
            raise _unsupported(fname, "dtype", dtype, "logical reductions give bool")
        A = _astype(A, dtype)
    mask = _mask(where, fname)
    if mask is not None:
        if qname in ("max", "min"):
            if initial is _MISSING:
                op = "maximum" if qname == "max" else "minimum"
                raise ValueError(
                    f"reduction operation '{op}' does not have an identity, so to use a where "
                    "mask one has to specify 'initial'"
                )
            identity = initial
        else:
            identity = {"sum": 0, "prod": 1, "all": True, "any": False}[qname]
        if np.broadcast_shapes(_shape_of(mask), tuple(A.shape)) != tuple(A.shape):
            raise ValueError(
                f"{fname}: where= of shape {_shape_of(mask)} does not broadcast to the "
                f"operand's shape {tuple(A.shape)}"
            )
        A = _q.where(mask, A, _scalar_as(identity, A.dtype))
    fn = getattr(_q, qname)
    if initial is not _MISSING and qname in ("max", "min") and A.numel() == 0:
        shape = _shape_of(_q.sum(A, axis, keepdims))
        r = _q.full(shape, _scalar_as(initial, A.dtype), dtype=A.dtype)
        if shape == ():
            r = r[()]
    else:
        r = fn(A, axis, keepdims)
        if initial is not _MISSING:
            init = _scalar_as(initial, r.dtype)
            combine = {"sum": operator.add, "prod": operator.mul, "max": _q.maximum,
                       "min": _q.minimum, "all": _q.logical_and, "any": _q.logical_or}[qname]
            r = _keep_scalar(r, combine(r, init))
    if dtype is not None and qname in ("sum", "prod"):
        r = _astype(r, dtype)
    if out is not None:
        return _store(fname, _single_out(out, fname), r, None, out_casting, what="function")
    return r


def _keep_scalar(before: Any, after: Any) -> Any:
    """after, as a scalar qvalue when before was one (a full reduction stays a scalar)."""
    if before.kind == "scalar" and after.kind == "tensor" and after.ndim == 0:
        return after[()]
    return after


def _scalar_as(value: Any, dt: Any) -> Any:
    """value converted to dtype dt (as NumPy casts initial=): a NumPy scalar of that dtype."""
    if isinstance(value, _qvalue):
        value = value.item()
    if isinstance(dt, np.dtype):
        return np.asarray(value).astype(dt)[()]
    return float(value)  # bfloat16: a weak Python float takes the tensor's dtype


def _ufunc_reduce(ufunc: np.ufunc, qname: str, inputs: tuple[Any, ...],
                  kwargs: dict[str, Any]) -> Any:
    name = f"numpy.{ufunc.__name__}.reduce"
    if len(inputs) != 1:
        raise TypeError(f"{name} takes one array, got {len(inputs)}")
    axis = kwargs.pop("axis", 0)
    dtype = kwargs.pop("dtype", None)
    out = kwargs.pop("out", None)
    keepdims = kwargs.pop("keepdims", False)
    initial = kwargs.pop("initial", _MISSING)
    if initial is np._NoValue:
        initial = _MISSING
    where = kwargs.pop("where", True)
    for key, value in kwargs.items():
        raise _unsupported(name, key, value)
    return _reduction(qname, name, inputs[0], axis, dtype, out, keepdims, initial, where)


def _scan(qname: str, fname: str, a: Any, axis: Any, dtype: Any, out: Any) -> Any:
    A = _tensor(a)
    if dtype is not None:
        dtype = _dtype_arg(dtype, fname)
        A = _astype(A, dtype)
    r = getattr(_q, qname)(A, axis)
    if dtype is not None:
        r = _astype(r, dtype)
    if out is not None:
        return _store(fname, _single_out(out, fname), r, None, "unsafe", what="function")
    return r


def _ufunc_accumulate(ufunc: np.ufunc, qname: str, inputs: tuple[Any, ...],
                      kwargs: dict[str, Any]) -> Any:
    name = f"numpy.{ufunc.__name__}.accumulate"
    if len(inputs) != 1:
        raise TypeError(f"{name} takes one array, got {len(inputs)}")
    axis = kwargs.pop("axis", 0)
    dtype = kwargs.pop("dtype", None)
    out = kwargs.pop("out", None)
    for key, value in kwargs.items():
        raise _unsupported(name, key, value)
    A = _tensor(inputs[0])
    if A.ndim == 0:
        raise TypeError(f"{name}: cannot accumulate on a scalar")
    if axis is None:
        if A.ndim != 1:
            raise ValueError(f"{name}: axis=None needs a 1-d array (accumulate takes one axis)")
        axis = 0
    if isinstance(axis, tuple):
        if len(axis) != 1:
            raise ValueError(f"{name}: accumulate does not allow multiple axes")
        axis = axis[0]
    return _scan(qname, name, A, axis, dtype, out)


# Operand types the module functions take exactly as _operand would pass them (no foreign
# overrides, no lists to read): a ufunc call with only these and no keywords goes straight in.
_PLAIN = frozenset(
    [_qvalue, np.ndarray, bool, int, float, complex]
    + [t for t in np.sctypeDict.values() if issubclass(t, np.number) or t is np.bool_]
)


def array_ufunc(self: Any, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
    """qvalue.__array_ufunc__ (NEP 13): NumPy ufuncs on qvalues compute in isthmus.

    See Note [NumPy protocols] in isthmus/numpy_protocols.py and docs/numpy-protocols.md.
    """
    if method == "__call__" and not kwargs:  # the common case, as cheap as it can be
        fn = HANDLED_UFUNCS.get(ufunc)
        if fn is not None and builtins.all(type(x) in _PLAIN for x in inputs):
            return fn(*inputs)
    outs = kwargs.get("out") or ()
    if builtins.any(_foreign(x) for x in inputs + tuple(outs)):
        return NotImplemented
    if method == "__call__":
        fn = HANDLED_UFUNCS.get(ufunc)
        if fn is not None:
            return _ufunc_call(ufunc, fn, inputs, dict(kwargs))
    elif method == "reduce" and ufunc in HANDLED_REDUCTIONS:
        return _ufunc_reduce(ufunc, HANDLED_REDUCTIONS[ufunc], inputs, dict(kwargs))
    elif method == "accumulate" and ufunc in HANDLED_ACCUMULATIONS:
        return _ufunc_accumulate(ufunc, HANDLED_ACCUMULATIONS[ufunc], inputs, dict(kwargs))
    label = f"numpy.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
    fn_np = ufunc if method == "__call__" else getattr(ufunc, method)
    return _fallback(fn_np, label, inputs, kwargs)


# ---------------------------------------------------------------------------------------------
# The fallback (See Note [NumPy protocols], rule 3)
# ---------------------------------------------------------------------------------------------


def _to_host(x: Any, memo: dict[int, tuple[Any, Any]], label: str) -> Any:
    """x with every qvalue replaced by a NumPy view of its memory (CPU values only)."""
    if isinstance(x, _qvalue):
        kind = x.kind
        if kind in ("tensor", "scalar"):
            device = x.device
            if device != "cpu":
                raise TypeError(
                    f"{label}: isthmus has no implementation of it, and NumPy computes on host "
                    f"memory only; this qvalue is on {device}, and isthmus does not copy it to "
                    "the host behind your back. Move it explicitly (A.to('cpu')) or use an "
                    "isthmus function (numpy_protocols.HANDLED_FUNCTIONS lists them)"
                )
            arr = np.asarray(x)
            memo[id(arr)] = (arr, x)
            return arr
        if kind == "none":
            return None
        if kind == "string":
            return x.to_py()
        raise TypeError(f"{label}: NumPy cannot take a qvalue of kind {kind}")
    if type(x) is list or type(x) is tuple:
        return type(x)(_to_host(e, memo, label) for e in x)
    if type(x) is dict:
        return {k: _to_host(v, memo, label) for k, v in x.items()}
    return x


def _from_host(r: Any, memo: dict[int, tuple[Any, Any]]) -> Any:
    """NumPy's result with arrays and NumPy scalars as qvalues (outputs as the given qvalues)."""
    if isinstance(r, np.ndarray):
        hit = memo.get(id(r))
        if hit is not None and hit[0] is r:
            return hit[1]
        if r.dtype.kind in "biufc" and r.dtype != np.longdouble and r.dtype != np.clongdouble:
            return _q.asvalue(r)
        return r
    if isinstance(r, np.generic):
        if r.dtype.kind in "biufc" and r.dtype != np.longdouble and r.dtype != np.clongdouble:
            return _q.asvalue(r)
        return r
    if isinstance(r, tuple):
        items = [_from_host(e, memo) for e in r]
        return type(r)(*items) if hasattr(r, "_fields") else type(r)(items)
    if type(r) is list:
        return [_from_host(e, memo) for e in r]
    return r


def _fallback(fn: Callable[..., Any], label: str, args: Any, kwargs: dict[str, Any]) -> Any:
    memo: dict[int, tuple[Any, Any]] = {}
    host_args = _to_host(tuple(args), memo, label)
    host_kwargs = _to_host(dict(kwargs), memo, label)
    return _from_host(fn(*host_args, **host_kwargs), memo)


# ---------------------------------------------------------------------------------------------
# __array_function__
# ---------------------------------------------------------------------------------------------


def array_function(self: Any, func: Callable[..., Any], types: Any, args: tuple[Any, ...],
                   kwargs: dict[str, Any]) -> Any:
    """qvalue.__array_function__ (NEP 18): NumPy functions on qvalues compute in isthmus.

    See Note [NumPy protocols] in isthmus/numpy_protocols.py and docs/numpy-protocols.md.
    """
    if not builtins.all(issubclass(t, (_qvalue, np.ndarray)) for t in types):
        return NotImplemented
    if "numpy.ma" in sys.modules and (_has_masked(args) or _has_masked(kwargs)):
        return NotImplemented
    impl = HANDLED_FUNCTIONS.get(func)
    if impl is not None:
        return impl(*args, **kwargs)
    label = f"{getattr(func, '__module__', None) or 'numpy'}.{getattr(func, '__name__', func)}"
    return _fallback(func, label, args, kwargs)


def _given(value: Any) -> bool:
    return value is not _MISSING and value is not np._NoValue


def _opt(value: Any, default: Any) -> Any:
    return value if _given(value) else default


# ---- reductions ----


@_implements("sum")
def _np_sum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: Any = _MISSING, initial: Any = _MISSING, where: Any = _MISSING) -> Any:
    return _reduction("sum", "numpy.sum", a, axis, dtype, out, keepdims,
                      _opt(initial, _MISSING), _opt(where, True))


@_implements("prod")
def _np_prod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
             keepdims: Any = _MISSING, initial: Any = _MISSING, where: Any = _MISSING) -> Any:
    return _reduction("prod", "numpy.prod", a, axis, dtype, out, keepdims,
                      _opt(initial, _MISSING), _opt(where, True))


def _minmax(qname: str, fname: str) -> Callable[..., Any]:
    def impl(a: Any, axis: Any = None, out: Any = None, keepdims: Any = _MISSING,
             initial: Any = _MISSING, where: Any = _MISSING) -> Any:
        return _reduction(qname, fname, a, axis, None, out, keepdims,
                          _opt(initial, _MISSING), _opt(where, True))

    impl.__name__ = f"_np_{qname}"
    return impl


_implements("max", "amax")(_minmax("max", "numpy.max"))
_implements("min", "amin")(_minmax("min", "numpy.min"))


def _logical(qname: str, fname: str) -> Callable[..., Any]:
    def impl(a: Any, axis: Any = None, out: Any = None, keepdims: Any = _MISSING, *,
             where: Any = _MISSING) -> Any:
        return _reduction(qname, fname, a, axis, None, out, keepdims, _MISSING,
                          _opt(where, True))

    impl.__name__ = f"_np_{qname}"
    return impl


_implements("any")(_logical("any", "numpy.any"))
_implements("all")(_logical("all", "numpy.all"))


def _mean_dtype(dt: Any) -> Any:
    """The dtype of a mean: inexact dtypes keep theirs, the others give float64."""
    return dt if _kind(dt) in "fc" else np.dtype(np.float64)


def _real_dtype(dt: Any) -> Any:
    if _kind(dt) == "c":
        return np.dtype(np.float32) if _same_dtype(dt, "complex64") else np.dtype(np.float64)
    return _mean_dtype(dt)


def _masked_count(mask: Any, shape: tuple[int, ...], axis: Any, keepdims: bool) -> Any:
    return _q.sum(_q.broadcast_to(mask, shape), axis, keepdims)


def _masked_mean(A: Any, mask: Any, axis: Any, keepdims: bool) -> Any:
    s = _q.sum(_q.where(mask, A, _scalar_as(0, A.dtype)), axis, keepdims)
    n = _masked_count(mask, tuple(A.shape), axis, keepdims)
    return _astype(s / n, _mean_dtype(A.dtype))


def _check_mask_shape(fname: str, mask: Any, A: Any) -> None:
    if np.broadcast_shapes(_shape_of(mask), tuple(A.shape)) != tuple(A.shape):
        raise ValueError(
            f"{fname}: where= of shape {_shape_of(mask)} does not broadcast to the operand's "
            f"shape {tuple(A.shape)}"
        )


@_implements("mean")
def _np_mean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
             keepdims: Any = _MISSING, *, where: Any = _MISSING) -> Any:
    A = _tensor(a)
    keep = bool(_opt(keepdims, False))
    if dtype is not None:
        dtype = _dtype_arg(dtype, "numpy.mean")
        A = _astype(A, dtype)
    mask = _mask(_opt(where, True), "numpy.mean")
    if mask is None:
        r = _q.mean(A, axis, keep)
    else:
        _check_mask_shape("numpy.mean", mask, A)
        r = _masked_mean(A, mask, axis, keep)
    if dtype is not None:
        r = _astype(r, dtype)
    if out is not None:
        return _store("numpy.mean", out, r, None, "unsafe", what="function")
    return r


def _variance(fname: str, a: Any, axis: Any, dtype: Any, out: Any, ddof: Any, keepdims: Any,
              where: Any, mean: Any, correction: Any, root: bool) -> Any:
    if _given(mean):
        raise _unsupported(fname, "mean", "<array>", "isthmus computes the mean itself")
    if _given(correction):
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    A = _tensor(a)
    keep = bool(_opt(keepdims, False))
    if dtype is not None:
        dtype = _dtype_arg(dtype, fname)
        A = _astype(A, dtype)
    mask = _mask(_opt(where, True), fname)
    if mask is None:
        r = (_q.std if root else _q.var)(A, axis, keep, ddof)
    else:
        _check_mask_shape(fname, mask, A)
        m = _masked_mean(A, mask, axis, True)
        d = _q.abs(A - m) if _kind(A.dtype) == "c" else A - m
        sq = _q.square(d)
        sq = _q.where(mask, sq, _scalar_as(0, sq.dtype))
        n = _masked_count(mask, tuple(A.shape), axis, keep)
        r = _astype(_q.sum(sq, axis, keep) / (n - ddof), _real_dtype(A.dtype))
        if root:
            r = _q.sqrt(r)
    if dtype is not None and _kind(dtype) != "c":
        r = _astype(r, dtype)
    if out is not None:
        return _store(fname, out, r, None, "unsafe", what="function")
    return r


@_implements("var")
def _np_var(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
            keepdims: Any = _MISSING, *, where: Any = _MISSING, mean: Any = _MISSING,
            correction: Any = _MISSING) -> Any:
    return _variance("numpy.var", a, axis, dtype, out, ddof, keepdims, where, mean, correction,
                     False)


@_implements("std")
def _np_std(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
            keepdims: Any = _MISSING, *, where: Any = _MISSING, mean: Any = _MISSING,
            correction: Any = _MISSING) -> Any:
    return _variance("numpy.std", a, axis, dtype, out, ddof, keepdims, where, mean, correction,
                     True)


def _argext(qname: str) -> Callable[..., Any]:
    def impl(a: Any, axis: Any = None, out: Any = None, *, keepdims: Any = _MISSING) -> Any:
        r = getattr(_q, qname)(_tensor(a), axis, bool(_opt(keepdims, False)))
        if out is not None:
            return _store(f"numpy.{qname}", out, r, None, "same_kind", what="function")
        return r

    impl.__name__ = f"_np_{qname}"
    return impl


_implements("argmin")(_argext("argmin"))
_implements("argmax")(_argext("argmax"))


@_implements("cumsum")
def _np_cumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    return _scan("cumsum", "numpy.cumsum", a, axis, dtype, out)


@_implements("cumprod")
def _np_cumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    return _scan("cumprod", "numpy.cumprod", a, axis, dtype, out)


# ---- joining and splitting ----


def _join(qname: str, fname: str, arrays: Any, axis: Any, out: Any, dtype: Any,
          casting: str) -> Any:
    _check_casting_name(casting)
    if out is not None and dtype is not None:
        raise TypeError(f"{fname}() only takes `out` or `dtype` as an argument, but both were "
                        "provided.")
    ts = [_tensor(x) for x in arrays]
    if axis is None:
        if qname == "stack":
            raise _unsupported(fname, "axis", None)
        ts = [_q.ravel(t) for t in ts]
        axis = 0
    if dtype is not None:
        dtype = _dtype_arg(dtype, fname)
        for t in ts:
            if not _can_cast(t.dtype, dtype, casting):
                raise TypeError(
                    f"Cannot cast array data from {_dtype_repr(t.dtype)} to "
                    f"{_dtype_repr(dtype)} according to the rule '{casting}'"
                )
        ts = [_astype(t, dtype) for t in ts]
    r = getattr(_q, qname)(ts, axis)
    if out is not None:
        return _store(fname, out, r, None, casting, what="function")
    return r


@_implements("concatenate", "concat")
def _np_concatenate(arrays: Any, axis: Any = 0, out: Any = None, *, dtype: Any = None,
                    casting: str = "same_kind") -> Any:
    return _join("concatenate", "numpy.concatenate", arrays, axis, out, dtype, casting)


@_implements("stack")
def _np_stack(arrays: Any, axis: int = 0, out: Any = None, *, dtype: Any = None,
              casting: str = "same_kind") -> Any:
    return _join("stack", "numpy.stack", arrays, axis, out, dtype, casting)


@_implements("split")
def _np_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    return list(_q.split(_tensor(ary), _index_arg(indices_or_sections), axis))


@_implements("array_split")
def _np_array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    return list(_q.array_split(_tensor(ary), _index_arg(indices_or_sections), axis))


def _index_arg(x: Any) -> Any:
    """An int or a list of ints for isthmus (NumPy arrays and qvalues of indices too)."""
    if isinstance(x, (np.ndarray, _qvalue)) and x.ndim > 0:
        return [operator.index(i) for i in x.tolist()]
    if isinstance(x, (np.ndarray, _qvalue, np.generic)):
        return operator.index(x)
    return x


# ---- shape ----


@_implements("flip")
def _np_flip(m: Any, axis: Any = None) -> Any:
    return _q.flip(_tensor(m), axis)


@_implements("fliplr")
def _np_fliplr(m: Any) -> Any:
    A = _tensor(m)
    if A.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return _q.flip(A, 1)


@_implements("flipud")
def _np_flipud(m: Any) -> Any:
    A = _tensor(m)
    if A.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return _q.flip(A, 0)


@_implements("tile")
def _np_tile(A: Any, reps: Any) -> Any:
    return _q.tile(_tensor(A), reps)


@_implements("repeat")
def _np_repeat(a: Any, repeats: Any, axis: Any = None) -> Any:
    return _q.repeat(_tensor(a), _operand(repeats) if not _is_number(repeats) else repeats,
                     axis)


_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


@_implements("pad")
def _np_pad(array: Any, pad_width: Any, mode: Any = "constant", **kwargs: Any) -> Any:
    if mode not in _PAD_MODES:
        raise _unsupported("numpy.pad", "mode", mode, f"isthmus pads with {', '.join(_PAD_MODES)}")
    constant = kwargs.pop("constant_values", 0)
    reflect_type = kwargs.pop("reflect_type", "even")
    if reflect_type != "even":
        raise _unsupported("numpy.pad", "reflect_type", reflect_type)
    for key, value in kwargs.items():
        raise _unsupported("numpy.pad", key, value)
    if np.ndim(constant) != 0:
        raise _unsupported("numpy.pad", "constant_values", constant, "one value for all sides")
    if isinstance(constant, (_qvalue, np.ndarray)):
        constant = constant.item()
    if isinstance(pad_width, (np.ndarray, _qvalue)):
        pad_width = np.asarray(pad_width).tolist()
    return _q.pad(_tensor(array), pad_width, mode, constant)


@_implements("reshape")
def _np_reshape(a: Any, /, shape: Any = None, order: str = "C", *, newshape: Any = None,
                copy: Any = None) -> Any:
    if shape is None:
        shape = newshape
    elif newshape is not None:
        raise TypeError("You cannot specify 'newshape' and 'shape' arguments at the same time.")
    if shape is None:
        raise TypeError("reshape() missing 1 required positional argument: 'shape'")
    if order != "C":
        raise _unsupported("numpy.reshape", "order", order, "isthmus reshapes in C order")
    A = _tensor(a)
    if copy is False:
        return A.view(shape if isinstance(shape, (tuple, list)) else (shape,))
    r = _q.reshape(A, shape)
    return _q.copy(r) if copy else r


@_implements("transpose", "permute_dims")
def _np_transpose(a: Any, axes: Any = None) -> Any:
    return _q.transpose(_tensor(a), axes)


def _normalize_axis(axis: Any, ndim: int) -> int:
    ax = operator.index(axis)
    if not -ndim <= ax < ndim:
        raise _AxisError(ax, ndim)
    return ax % ndim


@_implements("moveaxis")
def _np_moveaxis(a: Any, source: Any, destination: Any) -> Any:
    A = _tensor(a)
    src = [source] if np.ndim(source) == 0 else list(source)
    dst = [destination] if np.ndim(destination) == 0 else list(destination)
    src = [_normalize_axis(s, A.ndim) for s in src]
    dst = [_normalize_axis(d, A.ndim) for d in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError("repeated axis")
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of "
                         "elements")
    order = [n for n in range(A.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _q.transpose(A, order)


@_implements("swapaxes")
def _np_swapaxes(a: Any, axis1: Any, axis2: Any) -> Any:
    A = _tensor(a)
    i, j = _normalize_axis(axis1, A.ndim), _normalize_axis(axis2, A.ndim)
    order = list(range(A.ndim))
    order[i], order[j] = order[j], order[i]
    return _q.transpose(A, order)


@_implements("squeeze")
def _np_squeeze(a: Any, axis: Any = None) -> Any:
    return _q.squeeze(_tensor(a), axis)


@_implements("expand_dims")
def _np_expand_dims(a: Any, axis: Any) -> Any:
    A = _tensor(a)
    axes = [axis] if np.ndim(axis) == 0 else list(axis)
    nd = A.ndim + len(axes)
    norm = sorted(_normalize_axis(x, nd) for x in axes)
    if len(set(norm)) != len(norm):
        raise ValueError("repeated axis")
    for x in norm:
        A = _q.expand_dims(A, x)
    return A


@_implements("broadcast_to")
def _np_broadcast_to(array: Any, shape: Any, subok: bool = False) -> Any:
    return _q.broadcast_to(_tensor(array), shape)


@_implements("ravel")
def _np_ravel(a: Any, order: str = "C") -> Any:
    A = _tensor(a)
    if order not in ("C", "K", "A") or (order != "C" and not A.is_contiguous()):
        raise _unsupported("numpy.ravel", "order", order, "isthmus ravels in C order")
    return _q.ravel(A)


# ---- indexing ----


@_implements("nonzero")
def _np_nonzero(a: Any) -> Any:
    return _q.nonzero(_tensor(a))


@_implements("flatnonzero")
def _np_flatnonzero(a: Any) -> Any:
    return _q.nonzero(_q.ravel(_tensor(a)))[0]


@_implements("argwhere")
def _np_argwhere(a: Any) -> Any:
    return _q.argwhere(_tensor(a))


@_implements("take")
def _np_take(a: Any, indices: Any, axis: Any = None, out: Any = None,
             mode: str = "raise") -> Any:
    A = _tensor(a)
    idx = _tensor(indices)
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    if mode != "raise":
        n = A.numel() if axis is None else A.shape[_normalize_axis(axis, A.ndim)]
        if mode == "wrap":
            idx = _q.remainder(idx, n) if n > 0 else idx
        else:
            idx = _q.clip(idx, 0, builtins.max(n - 1, 0))
    r = _q.take(A, idx, axis)
    if _is_number(indices) and r.ndim == 0:
        r = r[()]  # one index gives a scalar, as NumPy's take
    if out is not None:
        return _store("numpy.take", out, r, None, "unsafe", what="function")
    return r


@_implements("take_along_axis")
def _np_take_along_axis(arr: Any, indices: Any, axis: Any = -1) -> Any:
    A = _tensor(arr)
    if axis is None:
        return _q.take_along_axis(_q.ravel(A), _tensor(indices), 0)
    return _q.take_along_axis(A, _tensor(indices), axis)


@_implements("put_along_axis")
def _np_put_along_axis(arr: Any, indices: Any, values: Any, axis: Any) -> None:
    A = _q.from_py(arr, copy=False) if isinstance(arr, np.ndarray) else _tensor(arr)
    if axis is None:
        flat = _q.ravel(A)
        _q.put_along_axis(flat, _tensor(indices), _tensor(values), 0)
        if not A.is_contiguous():
            A[...] = _q.reshape(flat, tuple(A.shape))
        return None
    _q.put_along_axis(A, _tensor(indices), _tensor(values), axis)
    return None


@_implements("where")
def _np_where(condition: Any, x: Any = _MISSING, y: Any = _MISSING, /) -> Any:
    if (x is _MISSING) != (y is _MISSING):
        raise ValueError("either both or neither of x and y should be given")
    if x is _MISSING:
        return _q.nonzero(_tensor(condition))
    return _q.where(_operand(condition), _operand(x), _operand(y))


@_implements("clip")
def _np_clip(a: Any, a_min: Any = _MISSING, a_max: Any = _MISSING, out: Any = None, *,
             min: Any = _MISSING, max: Any = _MISSING, **kwargs: Any) -> Any:
    if _given(min):
        if _given(a_min):
            raise TypeError("Passed more than one argument for a_min: a_min and min")
        a_min = min
    if _given(max):
        if _given(a_max):
            raise TypeError("Passed more than one argument for a_max: a_max and max")
        a_max = max
    lo = _operand(a_min) if _given(a_min) and a_min is not None else None
    hi = _operand(a_max) if _given(a_max) and a_max is not None else None
    casting = kwargs.pop("casting", "same_kind")
    _check_casting_name(casting)
    for key, value in kwargs.items():
        raise _unsupported("numpy.clip", key, value)
    r = _q.clip(_tensor(a), lo, hi)
    if out is not None:
        return _store("clip", out, r, None, casting)
    return r


# ---- linear algebra ----


def _exact_out(fname: str, out: Any, r: Any) -> Any:
    """np.dot's out=: NumPy takes only an output of exactly the result's dtype and shape."""
    o = _out_array(out, fname)
    if not _same_dtype(o.dtype, r.dtype) or tuple(o.shape) != _shape_of(r):
        raise ValueError("output array is not acceptable (must have the right datatype, number "
                         "of dimensions, and be a C-Array)")
    return _store(fname, o, r, None, "no", what="function")


@_implements("dot")
def _np_dot(a: Any, b: Any, out: Any = None) -> Any:
    r = _q.dot(_operand(a), _operand(b))
    return r if out is None else _exact_out("numpy.dot", out, r)


@_implements("vdot")
def _np_vdot(a: Any, b: Any) -> Any:
    return _q.vdot(_operand(a), _operand(b))


@_implements("inner")
def _np_inner(a: Any, b: Any) -> Any:
    return _q.inner(_operand(a), _operand(b))


@_implements("outer")
def _np_outer(a: Any, b: Any, out: Any = None) -> Any:
    A, B = _q.ravel(_tensor(a)), _q.ravel(_tensor(b))
    r = _q.multiply(_q.reshape(A, (-1, 1)), _q.reshape(B, (1, -1)))
    if out is not None:
        return _store("multiply", out, r, None, "same_kind")
    return r


# ---- creation from a prototype ----


def _like(fname: str, a: Any, dtype: Any, order: Any, shape: Any, device: Any,
          make: Callable[..., Any]) -> Any:
    A = _tensor(a)
    if order not in ("K", "A", "C", None):
        raise _unsupported(fname, "order", order, "isthmus makes C-order tensors")
    if device is not None and device != A.device:
        raise _unsupported(fname, "device", device, f"the prototype is on {A.device}")
    dt = A.dtype if dtype is None else _dtype_arg(dtype, fname)
    if shape is None:
        return make(A, dt)
    with _q.device(A.device):  # a new shape, on the prototype's device
        proto = _q.uninit(shape, dtype=dt)
    return make(proto, dt)


@_implements("zeros_like")
def _np_zeros_like(a: Any, dtype: Any = None, order: str = "K", subok: bool = True,
                   shape: Any = None, *, device: Any = None) -> Any:
    return _like("numpy.zeros_like", a, dtype, order, shape, device,
                 lambda p, dt: _q.zeros_like(p, dtype=dt))


@_implements("ones_like")
def _np_ones_like(a: Any, dtype: Any = None, order: str = "K", subok: bool = True,
                  shape: Any = None, *, device: Any = None) -> Any:
    return _like("numpy.ones_like", a, dtype, order, shape, device,
                 lambda p, dt: _q.ones_like(p, dtype=dt))


@_implements("empty_like")
def _np_empty_like(prototype: Any, dtype: Any = None, order: str = "K", subok: bool = True,
                   shape: Any = None, *, device: Any = None) -> Any:
    return _like("numpy.empty_like", prototype, dtype, order, shape, device,
                 lambda p, dt: _q.uninit_like(p, dtype=dt))


@_implements("full_like")
def _np_full_like(a: Any, fill_value: Any, dtype: Any = None, order: str = "K",
                  subok: bool = True, shape: Any = None, *, device: Any = None) -> Any:
    def make(p: Any, dt: Any) -> Any:
        if np.ndim(fill_value) != 0 or isinstance(fill_value, _qvalue):
            r = _q.zeros_like(p, dtype=dt)
            r[...] = _operand(fill_value)  # broadcasts and casts, as NumPy's copyto
            return r
        return _q.full_like(p, _scalar_as(fill_value, dt), dtype=dt)

    return _like("numpy.full_like", a, dtype, order, shape, device, make)


@_implements("copy")
def _np_copy(a: Any, order: str = "K", subok: bool = False) -> Any:
    if order not in ("K", "A", "C"):
        raise _unsupported("numpy.copy", "order", order, "isthmus copies in C or K order")
    return _q.copy(_tensor(a))


@_implements("astype")
def _np_astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Any:
    A = _tensor(x)
    if device is not None and device != A.device:
        raise _unsupported("numpy.astype", "device", device, f"the value is on {A.device}")
    dt = _dtype_arg(dtype, "numpy.astype")
    if not copy and _same_dtype(A.dtype, dt):
        return A
    return A.astype(dt)


# ---- elementwise helpers that are functions in NumPy ----


@_implements("round", "around")
def _np_round(a: Any, decimals: int = 0, out: Any = None) -> Any:
    A = _tensor(a)
    decimals = operator.index(decimals)
    kind = _kind(A.dtype)
    if decimals == 0 or kind in "biu" and decimals > 0:
        r = _q.round(A)
    elif kind in "fc":
        if decimals > 0:
            f = 10.0**decimals
            r = _q.round(A * f) / f
        else:
            f = 10.0**-decimals
            r = _q.round(A / f) * f
    else:
        raise _unsupported("numpy.round", "decimals", decimals,
                           "negative decimals for integers")
    if out is not None:
        return _store("rint", out, r, None, "same_kind")
    return r


@_implements("real")
def _np_real(val: Any) -> Any:
    return _q.real(_tensor(val))


@_implements("imag")
def _np_imag(val: Any) -> Any:
    return _q.imag(_tensor(val))


def _inexact(x: Any) -> Any:
    """x for isclose: integer and bool tensors as float64 (as NumPy does)."""
    if isinstance(x, _qvalue) and _kind(x.dtype) in "biu":
        return x.astype("float64")
    return x


@_implements("isclose")
def _np_isclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08,
                equal_nan: bool = False) -> Any:
    x, y = _inexact(_operand(a)), _inexact(_operand(b))
    finite = _q.logical_and(_q.isfinite(x), _q.isfinite(y))
    near = _q.less_equal(_q.abs(_q.subtract(x, y)), atol + rtol * _q.abs(y))
    r = _q.logical_or(_q.logical_and(finite, near), _q.equal(x, y))
    if equal_nan:
        r = _q.logical_or(r, _q.logical_and(_q.isnan(x), _q.isnan(y)))
    return r


@_implements("allclose")
def _np_allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08,
                 equal_nan: bool = False) -> bool:
    return bool(_q.all(_np_isclose(a, b, rtol, atol, equal_nan)))


@_implements("array_equal")
def _np_array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> bool:
    x, y = _operand(a1), _operand(a2)
    if _shape_of(x) != _shape_of(y):
        return False
    same = _q.equal(x, y)
    if equal_nan:
        same = _q.logical_or(same, _q.logical_and(_q.isnan(x), _q.isnan(y)))
    return bool(_q.all(same))


# ---- properties ----


@_implements("shape")
def _np_shape(a: Any) -> tuple[int, ...]:
    return tuple(_tensor(a).shape)


@_implements("ndim")
def _np_ndim(a: Any) -> int:
    return int(_tensor(a).ndim)


@_implements("size")
def _np_size(a: Any, axis: Any = None) -> int:
    A = _tensor(a)
    if axis is None:
        return int(A.numel())
    if isinstance(axis, tuple):
        return int(np.prod([A.shape[_normalize_axis(x, A.ndim)] for x in axis], dtype=np.int64))
    return int(A.shape[_normalize_axis(axis, A.ndim)])


# ---------------------------------------------------------------------------------------------
# __format__
# ---------------------------------------------------------------------------------------------


def format_value(self: Any, format_spec: str) -> str:
    """qvalue.__format__: a scalar or one-element tensor formats as its Python number.

    An empty spec gives str(self); any other value with a spec raises TypeError, as
    ndarray.__format__ does.
    """
    if not format_spec:
        return str(self)
    kind = self.kind
    if kind == "scalar" or (kind == "tensor" and self.numel() == 1):
        return format(self.item(), format_spec)
    if kind == "string":
        return format(self.to_py(), format_spec)
    shape = f" of shape {tuple(self.shape)}" if kind == "tensor" else ""
    raise TypeError(
        f"unsupported format string passed to isthmus.qvalue.__format__ (a {kind}{shape}; "
        "only scalars and one-element tensors take a format spec)"
    )
