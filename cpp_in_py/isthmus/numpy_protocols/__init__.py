"""NumPy's protocols for qvalue: __array_ufunc__ (NEP 13), __array_function__ (NEP 18), __format__.

Note [NumPy protocols]
~~~~~~~~~~~~~~~~~~~~~~
NumPy lets another array type take over its functions: a ufunc called with a qvalue among its
operands calls ``qvalue.__array_ufunc__`` (NEP 13), and a NumPy function with a dispatcher
(``np.sum``, ``np.concatenate``, ``np.median``, ...) calls ``qvalue.__array_function__``
(NEP 18). Both are written here in Python and attached to the native type in
``isthmus/__init__.py`` (the type is a mutable heap type), because each only maps NumPy's names
and keywords onto the module functions, which do the work natively; the cost is one Python call
per NumPy call.

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

from ._format import format_value
from ._functions import array_function
from ._tables import HANDLED_ACCUMULATIONS, HANDLED_FUNCTIONS, HANDLED_REDUCTIONS, HANDLED_UFUNCS
from ._ufuncs import array_ufunc

# The implementations, which fill HANDLED_FUNCTIONS as they are imported (in this order).
from . import _fn_reductions, _fn_shape, _fn_indexing  # noqa: F401
from . import _fn_linalg, _fn_creation, _fn_elementwise, _fn_properties  # noqa: F401
from . import _fn_sorting  # noqa: F401

__all__ = [
    "HANDLED_UFUNCS",
    "HANDLED_REDUCTIONS",
    "HANDLED_ACCUMULATIONS",
    "HANDLED_FUNCTIONS",
    "array_ufunc",
    "array_function",
    "format_value",
]
