"""The array API standard (2024.12) namespace: `A.__array_namespace__()` (docs/array-api.md).

    import isthmus.array_api as xp
    x = xp.asarray([3.0, 1.0, 2.0])
    xp.sort(x), xp.sum(x), xp.linalg  # ...

Arrays are qvalues themselves (tensors); see docs/array-api.md for what is composed, what runs
NumPy's LAPACK or pocketfft for CPU arrays and where isthmus departs from the standard.
"""

# Note [arrays are tensors]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# The namespace has no array class of its own: its arrays are qvalues of kind "tensor", so
# values move between the namespace and the rest of isthmus without wrapping. isthmus gives a
# *scalar* qvalue for full reductions and for scalar-only ops; the standard wants 0-d arrays, so
# every function of the namespace turns a scalar result into a 0-d tensor (`_helpers.out`) and
# takes scalar qvalues as 0-d arrays (`_helpers.tensor`).
#
# Note [the namespace starts the runtime]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Code written against the standard never calls `q.init`, so importing this module starts a CPU
# session when none runs, as unpickling does (Note [unpickling starts the runtime] in
# pickling.py). A program that wants CUDA or float64 `scalar`s calls `q.init(...)` before it
# imports `isthmus.array_api`; the namespace's default dtypes (float64, int64) do not depend on
# the precision.

from __future__ import annotations

from . import _helpers

_helpers.ensure_session()

from ._dtypes import (  # noqa: E402
    astype, bool, can_cast, complex64, complex128, finfo, float32, float64, iinfo, int8, int16,
    int32, int64, isdtype, result_type, uint8, uint16, uint32, uint64)
from ._creation import *  # noqa: E402,F401,F403
from ._elementwise import *  # noqa: E402,F401,F403
from ._indexing import *  # noqa: E402,F401,F403
from ._linalg import *  # noqa: E402,F401,F403
from ._manipulation import *  # noqa: E402,F401,F403
from ._searching import *  # noqa: E402,F401,F403
from ._set import *  # noqa: E402,F401,F403
from ._sorting import *  # noqa: E402,F401,F403
from ._statistical import *  # noqa: E402,F401,F403
from ._utility import *  # noqa: E402,F401,F403
from ._info import __array_namespace_info__  # noqa: E402,F401
from . import fft, linalg  # noqa: E402,F401  (the extensions)
from . import (_creation, _elementwise, _indexing, _linalg, _manipulation,  # noqa: E402
               _searching, _set, _sorting, _statistical, _utility)

import math as _math  # noqa: E402

__array_api_version__ = "2024.12"

e = _math.e
inf = _math.inf
nan = _math.nan
pi = _math.pi
newaxis = None

__all__ = sorted(
    ["__array_api_version__", "__array_namespace_info__", "fft", "linalg", "e", "inf", "nan", "pi",
     "newaxis",
     "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32",
     "float64", "complex64", "complex128", "finfo", "iinfo", "isdtype", "result_type",
     "can_cast", "astype"] + _creation.__all__ + _elementwise.__all__ + _indexing.__all__
    + _linalg.__all__
    + _manipulation.__all__ + _searching.__all__ + _set.__all__ + _sorting.__all__
    + _statistical.__all__ + _utility.__all__)
