"""qvalue.__array_function__ (NEP 18): NumPy functions run their HANDLED_FUNCTIONS entry."""

from __future__ import annotations

import builtins
import sys
from typing import Any, Callable

import numpy as np

from .. import _isthmus as _q
from ._fallback import _fallback
from ._foreign import _has_masked
from ._tables import HANDLED_FUNCTIONS

_qvalue = _q.qvalue


def array_function(self: Any, func: Callable[..., Any], types: Any, args: tuple[Any, ...],
                   kwargs: dict[str, Any]) -> Any:
    """qvalue.__array_function__ (NEP 18): NumPy functions on qvalues compute in isthmus.

    See Note [NumPy protocols] in isthmus/numpy_protocols/__init__.py and docs/numpy-protocols.md.
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
