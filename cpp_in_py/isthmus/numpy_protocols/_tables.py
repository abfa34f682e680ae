"""The mapping tables: the ufuncs, ufunc methods and NumPy functions isthmus computes itself."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _isthmus as _q
from ._keywords import _operand

_qvalue = _q.qvalue

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
    floor ceil rint isnan isinf isfinite signbit conjugate square reciprocal matmul nextafter
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

#: NumPy function -> its isthmus implementation (filled by ``_implements`` in the _fn_ modules).
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
