# Type stubs for the isthmus Python module (the native part is isthmus._isthmus).
#
# Checked with mypy (tests/python/cpp_in_py/test_stub_typing.py). The module defines `type`, `print`,
# `sum`, `min`, `max`, `abs`, `round`, `pow`, `any` and `all`, which shadow the builtins inside
# this file: annotations that mean the builtin say `builtins.type`.
import builtins
import inspect
import types
from typing import Any, Callable, Collection, Iterator, Sequence, SupportsIndex, overload

import numpy as np
import numpy.typing as npt

from . import numpy_protocols as numpy_protocols
from . import torch as torch
from . import autograd as autograd
from . import nn as nn
from . import optim as optim
from .autograd import enable_grad as enable_grad
from .autograd import no_grad as no_grad
from .autograd import set_grad_enabled as set_grad_enabled

__version__: str

LOCK_READ: int
LOCK_WRITE: int
LOCK_READWRITE: int
MEMRESOURCE_CPU: int
MEMRESOURCE_SINGLE_CUDA: int
MEMRESOURCE_SINGLE_OPENCL: int
MEMRESOURCE_DEVICE0: int
MEMRESOURCE_DEVICE1: int
MEMRESOURCE_DEVICE2: int
MEMRESOURCE_DEVICE3: int
MEMRESOURCE_DEVICE4: int

_DType = str | np.dtype[Any] | builtins.type
_Sizes = SupportsIndex | Sequence[SupportsIndex]

def init(
    device: str = "cpu",
    precision: str | _DType = "float32",
    load_compiler: bool = False,
    *,
    loadCompiler: bool | None = None,
) -> None: ...
def destroy() -> None: ...
def is_initialized() -> bool: ...
def cuda_available() -> bool: ...
def cuda_unavailable_reason() -> str: ...
def cuda_synchronize(device: int = -1) -> None: ...
def cuda_memory_info(device: int = 0) -> dict[str, int]: ...
def cuda_set_memory_limit(device: int, bytes: int | None) -> None: ...
def cuda_empty_cache(device: int = 0) -> int: ...
def cuda_memory_source(source: str | None = None) -> str: ...
def cuda_stream(device: int = 0) -> int: ...

class device_scope:
    """A scope in which new values and ops go to one device (made by q.device)."""

    @property
    def device(self) -> str: ...
    def __enter__(self) -> device_scope: ...
    def __exit__(self, *args: Any) -> None: ...

def device(device: str) -> device_scope:
    """`with q.device("cuda:1"):` runs new values and ops of this thread on that device."""
    ...

def placement(*values: Any) -> str:
    """The device an op on these values would run on now ("cpu", "cuda:0", ...)."""
    ...

def to(a: Any, device: str, copy: bool = False) -> qvalue:
    """`a` with its data on `device`; a new value there with copy=True."""
    ...

def set_transfer_threshold(elements: int) -> None: ...
def transfer_threshold() -> int: ...

class qvalue:
    """A native isthmus value: a tensor, scalar, string, cell or none."""

    def __init__(self, obj: Any = None, dtype: _DType | None = None) -> None: ...
    @property
    def kind(self) -> str: ...
    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def ndim(self) -> int: ...
    @property
    def dtype(self) -> np.dtype[Any] | str | None: ...
    @property
    def device(self) -> str: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def itemsize(self) -> int: ...
    @property
    def __array_interface__(self) -> dict[str, Any]: ...
    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        """The CUDA array interface (v3) of a tensor on a CUDA device (AttributeError otherwise).

        Zero-copy: the storage stays pinned to the device while this qvalue lives; `stream` is
        isthmus's stream, which consumers synchronise with.
        """
    __array_priority__: int
    @overload
    def size(self) -> tuple[int, ...]: ...
    @overload
    def size(self, dims: int) -> int: ...
    @overload
    def size(self, dims: Sequence[int]) -> tuple[int, ...]: ...
    def numel(self) -> int: ...
    def is_contiguous(self) -> bool: ...
    def to_py(self) -> Any: ...
    def item(self) -> bool | int | float | complex: ...
    def copy(self) -> qvalue: ...
    def astype(self, dtype: _DType) -> qvalue: ...
    def contiguous(self) -> qvalue: ...
    def to(self, device: str, copy: bool = False) -> qvalue: ...
    def lock(self, mode: int, resource: int = ...) -> int: ...
    def unlock(self, mode: int, resource: int = ...) -> None: ...
    def __array__(self, dtype: Any = None, *, copy: bool | None = None) -> npt.NDArray[Any]: ...
    def __buffer__(self, flags: int) -> memoryview: ...
    def __dlpack__(
        self,
        *,
        stream: int | None = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> Any:
        """A DLPack capsule sharing the tensor's memory (scalars: a new 0-d tensor).

        max_version >= (1, 0) gives a "dltensor_versioned" capsule, None a legacy "dltensor"
        one. stream: for CUDA data the consumer's stream (None/1 legacy default, 2 per-thread
        default, a cudaStream_t, -1 no sync; 0 raises ValueError), made to wait for isthmus's
        work through an event; CPU data takes None only. dl_device: None (where the data is),
        (1, 0) or (2, n). copy=True exports a copy (flag IS_COPIED), copy=False raises
        BufferError when only a copy could be exported (negative strides, scalars, storage
        pinned to another device). The storage stays pinned to the exported device until the
        consumer releases the tensor.
        """
    def __dlpack_device__(self) -> tuple[int, int]:
        """(2, n) (kDLCUDA) for a tensor located on cuda:n, else (1, 0) (kDLCPU)."""
    # pickling and copies (isthmus/pickling.py, docs/scaling-out.md)
    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[Any, ...]:
        """(isthmus.pickling.rebuild, (payload,)); protocol 5 hands contiguous CPU data out of
        band without a copy."""
    def __reduce__(self) -> tuple[Any, ...]: ...
    def __copy__(self) -> qvalue:
        """Tensors: a new contiguous copy; cells: a new cell, same elements; others: self."""
    def __deepcopy__(self, memo: dict[Any, Any]) -> qvalue:
        """As __copy__, with a cell's elements copied at every depth (shared ones stay shared)."""
    # NumPy's protocols (docs/numpy-protocols.md): NumPy ufuncs and functions compute in isthmus
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any: ...
    def __array_function__(
        self,
        func: Callable[..., Any],
        types: Collection[builtins.type],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any: ...
    def __format__(self, format_spec: str) -> str: ...
    # the array API standard (docs/array-api.md; isthmus/_array_api_object.py)
    def __array_namespace__(self, /, *, api_version: str | None = None) -> types.ModuleType:
        """The isthmus.array_api module (the standard's namespace, 2024.12)."""
    def to_device(self, device: str, /, *, stream: None = None) -> qvalue:
        """self when already on device, else a copy made there (stream= is not supported)."""
    @property
    def mT(self) -> qvalue:
        """The last two axes swapped (a view); ValueError below 2 dimensions."""
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[qvalue]: ...
    def __getitem__(self, key: Any) -> qvalue: ...
    def __setitem__(self, key: Any, value: Any) -> None: ...
    def __bool__(self) -> bool: ...
    def __float__(self) -> float: ...
    def __int__(self) -> int: ...
    def __complex__(self) -> complex: ...
    def __index__(self) -> int: ...
    # operators: the other operand may be a qvalue, a number, a NumPy array, a torch tensor
    # (any DLPack producer) or a list
    def __add__(self, other: Any) -> qvalue: ...
    def __radd__(self, other: Any) -> qvalue: ...
    def __iadd__(self, other: Any) -> qvalue: ...
    def __sub__(self, other: Any) -> qvalue: ...
    def __rsub__(self, other: Any) -> qvalue: ...
    def __isub__(self, other: Any) -> qvalue: ...
    def __mul__(self, other: Any) -> qvalue: ...
    def __rmul__(self, other: Any) -> qvalue: ...
    def __imul__(self, other: Any) -> qvalue: ...
    def __truediv__(self, other: Any) -> qvalue: ...
    def __rtruediv__(self, other: Any) -> qvalue: ...
    def __itruediv__(self, other: Any) -> qvalue: ...
    def __floordiv__(self, other: Any) -> qvalue: ...
    def __rfloordiv__(self, other: Any) -> qvalue: ...
    def __ifloordiv__(self, other: Any) -> qvalue: ...
    def __mod__(self, other: Any) -> qvalue: ...
    def __rmod__(self, other: Any) -> qvalue: ...
    def __imod__(self, other: Any) -> qvalue: ...
    def __pow__(self, other: Any) -> qvalue: ...
    def __rpow__(self, other: Any) -> qvalue: ...
    def __ipow__(self, other: Any) -> qvalue: ...
    def __matmul__(self, other: Any) -> qvalue: ...
    def __rmatmul__(self, other: Any) -> qvalue: ...
    def __and__(self, other: Any) -> qvalue: ...
    def __rand__(self, other: Any) -> qvalue: ...
    def __or__(self, other: Any) -> qvalue: ...
    def __ror__(self, other: Any) -> qvalue: ...
    def __xor__(self, other: Any) -> qvalue: ...
    def __rxor__(self, other: Any) -> qvalue: ...
    def __lshift__(self, other: Any) -> qvalue: ...
    def __rlshift__(self, other: Any) -> qvalue: ...
    def __rshift__(self, other: Any) -> qvalue: ...
    def __rrshift__(self, other: Any) -> qvalue: ...
    def __eq__(self, other: Any) -> Any: ...  # elementwise: a bool tensor
    def __ne__(self, other: Any) -> Any: ...  # elementwise: a bool tensor
    def __lt__(self, other: Any) -> qvalue: ...
    def __le__(self, other: Any) -> qvalue: ...
    def __gt__(self, other: Any) -> qvalue: ...
    def __ge__(self, other: Any) -> qvalue: ...
    def __neg__(self) -> qvalue: ...
    def __pos__(self) -> qvalue: ...
    def __abs__(self) -> qvalue: ...
    def __invert__(self) -> qvalue: ...
    # reductions (a 0-d result is a scalar qvalue)
    def sum(self, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> qvalue: ...
    def prod(self, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> qvalue: ...
    def mean(self, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> qvalue: ...
    def min(self, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> qvalue: ...
    def max(self, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> qvalue: ...
    def any(self, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> qvalue: ...
    def all(self, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> qvalue: ...
    def var(
        self, axis: int | Sequence[int] | None = None, keepdims: bool = False, ddof: int = 0
    ) -> qvalue: ...
    def std(
        self, axis: int | Sequence[int] | None = None, keepdims: bool = False, ddof: int = 0
    ) -> qvalue: ...
    def argmin(self, axis: int | None = None, keepdims: bool = False) -> qvalue: ...
    def argmax(self, axis: int | None = None, keepdims: bool = False) -> qvalue: ...
    def cumsum(self, axis: int | None = None) -> qvalue:
        """Running sum along axis (the flattened tensor when None)."""
    def cumprod(self, axis: int | None = None) -> qvalue:
        """Running product along axis (the flattened tensor when None)."""
    # shape (views unless noted)
    @overload
    def reshape(self, shape: Sequence[SupportsIndex], /) -> qvalue: ...
    @overload
    def reshape(self, *shape: SupportsIndex) -> qvalue:
        """The same elements in a new shape (one size may be -1); a view when possible."""
    def view(self, *shape: SupportsIndex | Sequence[SupportsIndex]) -> qvalue:
        """Like reshape, but always a view (ValueError when impossible), as torch's view."""
    def transpose(self, *axes: SupportsIndex | Sequence[SupportsIndex]) -> qvalue:
        """Dimensions reversed (no arguments) or permuted; a view."""
    def permute(self, *dims: SupportsIndex | Sequence[SupportsIndex]) -> qvalue:
        """Result dimension i is dimension dims[i] (torch's permute); a view."""
    @property
    def T(self) -> qvalue:
        """The dimensions reversed (a view)."""
    def squeeze(self, axis: int | Sequence[int] | None = None) -> qvalue:
        """Removes size-1 dimensions (all, or the given ones); a view."""
    def unsqueeze(self, dim: int) -> qvalue:
        """Inserts a size-1 dimension at dim; a view."""
    def expand(self, *shape: SupportsIndex | Sequence[SupportsIndex]) -> qvalue:
        """Broadcasts to a larger shape with stride 0 on the new axes (a read-only view)."""
    def flatten(self) -> qvalue:
        """A 1-d copy in C order."""
    # ---- autograd (docs/autograd.md) ----
    requires_grad: bool
    """True when gradients flow to this tensor (settable on leaves; floating point only)."""
    grad: qvalue | None
    """The gradient accumulated by backward (None until then; settable, None clears it)."""
    @property
    def grad_fn(self) -> Any:
        """The recorded op that made this tensor (None for leaves)."""
    @property
    def is_leaf(self) -> bool:
        """True unless the tensor was made by a recorded op."""
    def requires_grad_(self, requires_grad: bool = True) -> qvalue:
        """Sets requires_grad in place and returns the tensor."""
    def retain_grad(self) -> None:
        """Keeps this non-leaf tensor's gradient in .grad during backward."""
    def detach(self) -> qvalue:
        """The same memory without the graph."""
    def backward(
        self, gradient: qvalue | None = None, retain_graph: bool = False,
        create_graph: bool = False,
    ) -> None:
        """Accumulates the gradient of this tensor into every leaf that requires grad."""
    def ravel(self) -> qvalue:
        """The elements as a 1-d tensor (a view when possible)."""
    def flip(self, axis: int | Sequence[int] | None = None) -> qvalue:
        """Reverses the order along axis (all axes when None); a view."""
    @property
    def real(self) -> qvalue:
        """The real part (a view for complex tensors)."""
    @property
    def imag(self) -> qvalue:
        """The imaginary part (a view for complex tensors, zeros for real ones)."""
    # computing
    def clip(self, min: Any = None, max: Any = None) -> qvalue:
        """Limits values to [min, max] (either may be None)."""
    def round(self) -> qvalue:
        """Rounds half to even."""
    def conj(self) -> qvalue:
        """The complex conjugate (a copy)."""
    def dot(self, other: Any) -> qvalue:
        """The matrix product self @ other."""
    def nonzero(self) -> tuple[qvalue, ...]:
        """Index tensors of the nonzero elements, one per axis."""
    def take(self, indices: Any, axis: int | None = None) -> qvalue:
        """Elements at indices along axis (flattened when None)."""
    def repeat(self, repeats: Any, axis: int | None = None) -> qvalue:
        """Repeats each element along axis (flattened when None)."""
    def fill(self, value: Any) -> None:
        """Sets every element to value, in place."""
    def tolist(self) -> Any:
        """The elements as nested lists of Python numbers."""

class qtype:
    """A parsed Quasar type name; calling it builds a value."""

    def __call__(self, *sizes: _Sizes) -> qvalue: ...
    @property
    def kind(self) -> str: ...
    @property
    def rank(self) -> int | None: ...
    @property
    def dtype(self) -> np.dtype[Any] | str | None: ...
    @property
    def element(self) -> qtype: ...
    def matches(self, value: Any) -> bool: ...

def value(obj: Any = None, dtype: _DType | None = None, *,
          requires_grad: bool = False) -> qvalue: ...
def is_grad_enabled() -> bool:
    """True while ops are recorded for autograd (per thread)."""
def zeros(*sizes: _Sizes, dtype: _DType | None = None) -> qvalue: ...
def ones(*sizes: _Sizes, dtype: _DType | None = None) -> qvalue: ...
def uninit(*sizes: _Sizes, dtype: _DType | None = None) -> qvalue: ...
def from_py(obj: Any, *, copy: bool | None = None) -> qvalue: ...
def asvalue(obj: Any) -> qvalue: ...
def from_dlpack(
    obj: Any, /, *, device: str | tuple[int, int] | None = None, copy: bool | None = None
) -> qvalue:
    """A qvalue sharing the memory of a DLPack producer or capsule.

    obj: a NumPy array, a torch tensor (CPU or CUDA), a qvalue, anything with __dlpack__ or
      __cuda_array_interface__, or a DLPack capsule (consumed: a capsule can be imported once).
    device: None (where the data is), "cpu"/(1, 0), or "cuda"/"cuda:N"/(2, N); a copy when
      the producer cannot export there. CUDA producers are passed isthmus's stream.
    copy: None shares when possible and copies read-only or misaligned data; True always gives
      memory of its own; False shares or raises ValueError.
    Tensors that require grad raise BufferError (pass t.detach(), or use q.torch.from_tensor);
    conjugate and negative views are resolved into a copy (ValueError with copy=False).
    """
def typename(name: str) -> qtype: ...
def type(value: Any, type: str | qtype) -> bool: ...
def size(value: Any, dims: int | Sequence[int] | None = None) -> int | tuple[int, ...]: ...
def print(*values: Any, **kwargs: Any) -> None: ...
def not_(value: Any) -> qvalue: ...
def memcpy(dst_ptr: Any, src_ptr: Any, nbytes: int) -> None:
    """Copies nbytes of host memory (addresses as ints or ctypes pointers; overlap allowed)."""
def _native_stats(reset: bool = False) -> dict[str, int]: ...
def _op_table() -> list[dict[str, Any]]:
    """The op table's rows (isthmus/ops/op_table.hpp), for tests and tools."""
def build_info() -> dict[str, Any]:
    """What this build runs on: version, openmp_threads, blas {name, version, core, config,
    threads, shared_pools, shared_calls} (docs/threads.md)."""
def _share_blas_pools() -> int: ...

# ---- module functions (NumPy's names; any array-like where a tensor goes) ----
_ArrayLike = Any
_Axis = int | Sequence[int] | None

# BEGIN GENERATED by scripts/gen_ops.py from the op table: do not edit
# elementwise, one argument (the op table's unary rows)
def negative(x: _ArrayLike) -> qvalue:
    """-x elementwise (bool raises TypeError)."""
def abs(x: _ArrayLike) -> qvalue:
    """|x| elementwise (complex -> its real dtype; abs(INT_MIN) == INT_MIN)."""
def absolute(x: _ArrayLike) -> qvalue:
    """|x| elementwise (complex -> its real dtype; abs(INT_MIN) == INT_MIN) (alias of abs)."""
def sign(x: _ArrayLike) -> qvalue:
    """-1, 0 or 1 elementwise (NaN stays NaN; complex: x/|x|, 0 at 0)."""
def exp(x: _ArrayLike) -> qvalue:
    """e**x elementwise."""
def exp2(x: _ArrayLike) -> qvalue:
    """2**x elementwise."""
def log(x: _ArrayLike) -> qvalue:
    """Natural logarithm elementwise."""
def log2(x: _ArrayLike) -> qvalue:
    """Base-2 logarithm elementwise."""
def log10(x: _ArrayLike) -> qvalue:
    """Base-10 logarithm elementwise."""
def expm1(x: _ArrayLike) -> qvalue:
    """e**x - 1 elementwise, accurate near 0."""
def log1p(x: _ArrayLike) -> qvalue:
    """log(1 + x) elementwise, accurate near 0."""
def sqrt(x: _ArrayLike) -> qvalue:
    """Square root elementwise."""
def cbrt(x: _ArrayLike) -> qvalue:
    """Cube root elementwise, negative for negative x (not for complex)."""
def rsqrt(x: _ArrayLike) -> qvalue:
    """1 / sqrt(x) elementwise."""
def sin(x: _ArrayLike) -> qvalue:
    """Sine elementwise (radians)."""
def cos(x: _ArrayLike) -> qvalue:
    """Cosine elementwise (radians)."""
def tan(x: _ArrayLike) -> qvalue:
    """Tangent elementwise (radians)."""
def arcsin(x: _ArrayLike) -> qvalue:
    """Inverse sine elementwise."""
def asin(x: _ArrayLike) -> qvalue:
    """Inverse sine elementwise (alias of arcsin)."""
def arccos(x: _ArrayLike) -> qvalue:
    """Inverse cosine elementwise."""
def acos(x: _ArrayLike) -> qvalue:
    """Inverse cosine elementwise (alias of arccos)."""
def arctan(x: _ArrayLike) -> qvalue:
    """Inverse tangent elementwise."""
def atan(x: _ArrayLike) -> qvalue:
    """Inverse tangent elementwise (alias of arctan)."""
def sinh(x: _ArrayLike) -> qvalue:
    """Hyperbolic sine elementwise."""
def cosh(x: _ArrayLike) -> qvalue:
    """Hyperbolic cosine elementwise."""
def tanh(x: _ArrayLike) -> qvalue:
    """Hyperbolic tangent elementwise."""
def arcsinh(x: _ArrayLike) -> qvalue:
    """Inverse hyperbolic sine elementwise."""
def asinh(x: _ArrayLike) -> qvalue:
    """Inverse hyperbolic sine elementwise (alias of arcsinh)."""
def arccosh(x: _ArrayLike) -> qvalue:
    """Inverse hyperbolic cosine elementwise."""
def acosh(x: _ArrayLike) -> qvalue:
    """Inverse hyperbolic cosine elementwise (alias of arccosh)."""
def arctanh(x: _ArrayLike) -> qvalue:
    """Inverse hyperbolic tangent elementwise."""
def atanh(x: _ArrayLike) -> qvalue:
    """Inverse hyperbolic tangent elementwise (alias of arctanh)."""
def erf(x: _ArrayLike) -> qvalue:
    """The error function elementwise (not for complex; NumPy has none: scipy.special.erf, torch.erf)."""
def erfc(x: _ArrayLike) -> qvalue:
    """1 - erf(x) elementwise, accurate where erf(x) is near 1 (not for complex)."""
def floor(x: _ArrayLike) -> qvalue:
    """Rounds down elementwise (integers unchanged)."""
def ceil(x: _ArrayLike) -> qvalue:
    """Rounds up elementwise (integers unchanged)."""
def round(x: _ArrayLike) -> qvalue:
    """Rounds half to even elementwise, as np.round with decimals=0 (complex: each part)."""
def rint(x: _ArrayLike) -> qvalue:
    """Rounds half to even elementwise, as np.round with decimals=0 (complex: each part) (alias of round)."""
def logical_not(x: _ArrayLike) -> qvalue:
    """x == 0 elementwise (a bool tensor)."""
def bitwise_not(x: _ArrayLike) -> qvalue:
    """~x elementwise (bool: logical not; bool and integers only)."""
def invert(x: _ArrayLike) -> qvalue:
    """~x elementwise (bool: logical not; bool and integers only) (alias of bitwise_not)."""
def isnan(x: _ArrayLike) -> qvalue:
    """True where x is NaN."""
def isinf(x: _ArrayLike) -> qvalue:
    """True where x is +-inf."""
def isfinite(x: _ArrayLike) -> qvalue:
    """True where x is neither NaN nor infinite."""
def signbit(x: _ArrayLike) -> qvalue:
    """True where x's sign bit is set: negative numbers, -0.0 and NaNs with the sign bit (not for complex)."""
def conj(x: _ArrayLike) -> qvalue:
    """The complex conjugate (a copy; real dtypes unchanged)."""
def conjugate(x: _ArrayLike) -> qvalue:
    """The complex conjugate (a copy; real dtypes unchanged) (alias of conj)."""
def square(x: _ArrayLike) -> qvalue:
    """x * x elementwise."""
def reciprocal(x: _ArrayLike) -> qvalue:
    """1 / x elementwise (integers give float64, unlike NumPy)."""
def real(x: _ArrayLike) -> qvalue:
    """The real part (a view of complex tensors, as NumPy's .real)."""
def imag(x: _ArrayLike) -> qvalue:
    """The imaginary part (a view of complex tensors; zeros for real ones)."""

# elementwise, two arguments (broadcasting; Python numbers are weak scalars)
def add(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:
    """x1 + x2 elementwise, broadcasting (bool: logical or)."""
def subtract(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:
    """x1 - x2 elementwise, broadcasting (bool raises TypeError)."""
def multiply(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:
    """x1 * x2 elementwise, broadcasting (bool: logical and)."""
def divide(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:
    """x1 / x2 (true division) elementwise; integers give float64."""
def true_divide(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:
    """x1 / x2 (true division) elementwise; integers give float64 (alias of divide)."""
def floor_divide(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:
    """x1 // x2 elementwise, broadcasting (not for complex)."""
def mod(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:
    """x1 % x2 (sign of x2, as Python) elementwise."""
def remainder(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:
    """x1 % x2 (sign of x2, as Python) elementwise (alias of mod)."""
def power(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:
    """x1 ** x2 elementwise; negative integer powers of integers raise ValueError."""
def pow(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:
    """x1 ** x2 elementwise; negative integer powers of integers raise ValueError (alias of power)."""
def maximum(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:
    """Elementwise maximum, NaN-propagating."""
def minimum(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:
    """Elementwise minimum, NaN-propagating."""
def arctan2(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:
    """atan2(x1, x2) elementwise, in radians."""
def atan2(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:
    """atan2(x1, x2) elementwise, in radians (alias of arctan2)."""
def equal(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:
    """x1 == x2 elementwise (a bool tensor)."""
def not_equal(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:
    """x1 != x2 elementwise (a bool tensor)."""
def less(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:
    """x1 < x2 elementwise (a bool tensor)."""
def less_equal(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:
    """x1 <= x2 elementwise (a bool tensor)."""
def greater(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:
    """x1 > x2 elementwise (a bool tensor)."""
def greater_equal(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:
    """x1 >= x2 elementwise (a bool tensor)."""
def logical_and(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:
    """(x1 != 0) and (x2 != 0) elementwise."""
def logical_or(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:
    """(x1 != 0) or (x2 != 0) elementwise."""
def logical_xor(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:
    """(x1 != 0) != (x2 != 0) elementwise."""
def bitwise_and(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:
    """x1 & x2 elementwise (bool and integers)."""
def bitwise_or(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:
    """x1 | x2 elementwise (bool and integers)."""
def bitwise_xor(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:
    """x1 ^ x2 elementwise (bool and integers)."""
def left_shift(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:
    """x1 << x2 elementwise (integers; counts past the width give 0)."""
def right_shift(x1: _ArrayLike, x2: _ArrayLike) -> qvalue:
    """x1 >> x2 elementwise (integers; arithmetic for signed)."""
# END GENERATED

@overload
def where(condition: _ArrayLike) -> tuple[qvalue, ...]: ...
@overload
def where(condition: _ArrayLike, x: _ArrayLike, y: _ArrayLike) -> qvalue:
    """Elements of x where condition is true, else of y; where(cond) is nonzero(cond)."""
def clip(a: _ArrayLike, a_min: Any, a_max: Any) -> qvalue:
    """Limits values to [a_min, a_max] (either bound may be None)."""
def clamp(a: _ArrayLike, a_min: Any, a_max: Any) -> qvalue: ...
def fma(a: _ArrayLike, b: _ArrayLike, c: _ArrayLike) -> qvalue:
    """a * b + c in one pass."""

# linear algebra
def matmul(x1: _ArrayLike, x2: _ArrayLike) -> qvalue: ...
def dot(a: _ArrayLike, b: _ArrayLike) -> qvalue: ...
def vdot(a: _ArrayLike, b: _ArrayLike) -> qvalue: ...
def inner(a: _ArrayLike, b: _ArrayLike) -> qvalue: ...

# reductions (a 0-d result is a scalar qvalue)
def sum(a: _ArrayLike, axis: _Axis = None, keepdims: bool = False) -> qvalue: ...
def prod(a: _ArrayLike, axis: _Axis = None, keepdims: bool = False) -> qvalue: ...
def mean(a: _ArrayLike, axis: _Axis = None, keepdims: bool = False) -> qvalue: ...
def min(a: _ArrayLike, axis: _Axis = None, keepdims: bool = False) -> qvalue: ...
def max(a: _ArrayLike, axis: _Axis = None, keepdims: bool = False) -> qvalue: ...
def amin(a: _ArrayLike, axis: _Axis = None, keepdims: bool = False) -> qvalue: ...
def amax(a: _ArrayLike, axis: _Axis = None, keepdims: bool = False) -> qvalue: ...
def any(a: _ArrayLike, axis: _Axis = None, keepdims: bool = False) -> qvalue: ...
def all(a: _ArrayLike, axis: _Axis = None, keepdims: bool = False) -> qvalue: ...
def var(a: _ArrayLike, axis: _Axis = None, keepdims: bool = False, ddof: int = 0) -> qvalue: ...
def std(a: _ArrayLike, axis: _Axis = None, keepdims: bool = False, ddof: int = 0) -> qvalue: ...
def argmin(a: _ArrayLike, axis: int | None = None, keepdims: bool = False) -> qvalue: ...
def argmax(a: _ArrayLike, axis: int | None = None, keepdims: bool = False) -> qvalue: ...
def cumsum(a: _ArrayLike, axis: int | None = None) -> qvalue: ...
def cumprod(a: _ArrayLike, axis: int | None = None) -> qvalue: ...

def nextafter(x1: _ArrayLike, x2: _ArrayLike) -> qvalue: ...

# sorting
def sort(a: _ArrayLike, axis: int | None = -1, *, descending: bool = False,
         stable: bool | None = None) -> qvalue: ...
def argsort(a: _ArrayLike, axis: int | None = -1, *, descending: bool = False,
            stable: bool | None = None) -> qvalue: ...
def searchsorted(a: _ArrayLike, v: _ArrayLike, side: str = "left",
                 sorter: _ArrayLike | None = None) -> qvalue: ...

# shape
def concatenate(arrays: Sequence[_ArrayLike], axis: int = 0) -> qvalue: ...
def concat(arrays: Sequence[_ArrayLike], axis: int = 0) -> qvalue: ...
def stack(arrays: Sequence[_ArrayLike], axis: int = 0) -> qvalue: ...
def split(a: _ArrayLike, indices_or_sections: int | Sequence[int], axis: int = 0) -> tuple[qvalue, ...]: ...
def array_split(
    a: _ArrayLike, indices_or_sections: int | Sequence[int], axis: int = 0
) -> tuple[qvalue, ...]: ...
def flip(m: _ArrayLike, axis: _Axis = None) -> qvalue: ...
def tile(A: _ArrayLike, reps: int | Sequence[int]) -> qvalue: ...
def repeat(a: _ArrayLike, repeats: Any, axis: int | None = None) -> qvalue: ...
def pad(
    array: _ArrayLike, pad_width: Any, mode: str = "constant", constant_values: Any = 0
) -> qvalue: ...
def reshape(a: _ArrayLike, shape: int | Sequence[int]) -> qvalue: ...
def transpose(a: _ArrayLike, axes: Sequence[int] | None = None) -> qvalue: ...
def squeeze(a: _ArrayLike, axis: _Axis = None) -> qvalue: ...
def expand_dims(a: _ArrayLike, axis: int) -> qvalue: ...
def broadcast_to(array: _ArrayLike, shape: int | Sequence[int]) -> qvalue: ...
def ravel(a: _ArrayLike) -> qvalue: ...

# indexing
def nonzero(a: _ArrayLike) -> tuple[qvalue, ...]: ...
def argwhere(a: _ArrayLike) -> qvalue: ...
def take(a: _ArrayLike, indices: _ArrayLike, axis: int | None = None) -> qvalue: ...
def take_along_axis(arr: _ArrayLike, indices: _ArrayLike, axis: int) -> qvalue: ...
def put_along_axis(arr: _ArrayLike, indices: _ArrayLike, values: _ArrayLike, axis: int) -> None: ...

# creation
def full(shape: _Sizes, fill_value: Any, dtype: _DType | None = None) -> qvalue: ...
def zeros_like(a: _ArrayLike, dtype: _DType | None = None) -> qvalue: ...
def ones_like(a: _ArrayLike, dtype: _DType | None = None) -> qvalue: ...
def full_like(a: _ArrayLike, fill_value: Any, dtype: _DType | None = None) -> qvalue: ...
def uninit_like(a: _ArrayLike, dtype: _DType | None = None) -> qvalue: ...
def arange(start: Any, stop: Any = None, step: Any = None, dtype: _DType | None = None) -> qvalue: ...
def linspace(
    start: float, stop: float, num: int = 50, endpoint: bool = True, dtype: _DType | None = None
) -> qvalue: ...
def eye(N: int, M: int | None = None, k: int = 0, dtype: _DType | None = None) -> qvalue: ...
def copy(a: _ArrayLike) -> qvalue: ...

# random numbers (Philox; identical results on any thread count)
def manual_seed(seed: int) -> None: ...
def rand(*sizes: _Sizes, size: _Sizes | None = None, dtype: _DType | None = None) -> qvalue: ...
def randn(*sizes: _Sizes, size: _Sizes | None = None, dtype: _DType | None = None) -> qvalue: ...
def randint(
    low: int, high: int | None = None, size: _Sizes | None = None, dtype: _DType | None = None
) -> qvalue: ...
def uniform(
    low: float = 0.0, high: float = 1.0, size: _Sizes | None = None, dtype: _DType | None = None
) -> qvalue: ...
def normal(
    loc: float = 0.0, scale: float = 1.0, size: _Sizes | None = None, dtype: _DType | None = None
) -> qvalue: ...


# ---- image files and display (docs/images.md; signatures in images.py) ----
from . import images as images
from .images import ImageFileError as ImageFileError
from .images import imread as imread
from .images import imshow as imshow
from .images import run_gui as run_gui
from .images import imwrite as imwrite

# ---- the array API standard's namespace (docs/array-api.md), imported on first use ----
from . import array_api as array_api

# ---- pickling (docs/scaling-out.md) ----
from . import pickling as pickling

class unpickle_device:
    """`with q.unpickle_device("cpu"):` puts every tensor unpickled inside on that device.

    For pickles of CUDA values loaded where that device is missing (RuntimeError otherwise).
    The scope belongs to the current thread or asyncio task (contextvars); scopes nest.
    """

    def __init__(self, device: str) -> None: ...
    @property
    def device(self) -> str: ...
    def __enter__(self) -> unpickle_device: ...
    def __exit__(self, *exc: Any) -> None: ...


# ---- plugins (docs/plugins.md) ----
from . import autograd as autograd
from . import signatures as signatures

# ---- slow-compile notices (the "isthmus.compile" logger; Note [compile notices]) ----
from . import compile_log as compile_log

PLUGIN_ABI_VERSION: int

class CompileError(RuntimeError):
    diagnostics: str

class native_function:
    __name__: str
    __signature__: inspect.Signature
    __text_signature__: str
    signature: str
    plugin_path: str
    plugin: str
    overloads: tuple[dict[str, Any], ...]
    vjp: native_function | None
    jvp: native_function | None
    def __call__(self, *args: Any) -> Any: ...

class native_kernel:
    name: str
    doc: str
    __signature__: inspect.Signature
    __text_signature__: str
    signature: str
    plugin_path: str
    plugin: str
    overloads: dict[str, Any]
    devices: tuple[str, ...]
    vjp: native_kernel | None
    jvp: native_kernel | None
    tier: str
    def wait_optimised(self) -> str: ...

class native_event:
    def add(self, callback: Callable[..., Any]) -> None: ...
    def clear(self) -> None: ...
    def __len__(self) -> int: ...
    def __iadd__(self, callback: Callable[..., Any]) -> native_event: ...

class native_object:
    type_name: str
    def __getattr__(self, name: str) -> Any: ...
    def __setattr__(self, name: str, value: Any) -> None: ...

def import_native(path_or_name: str) -> types.ModuleType: ...
def compile_string(name: str, source: str, flags: Sequence[str] = ..., *,
                   lang: str | None = ...,
                   cuda_compiler: str | None = ...,
                   tiered: bool = ...) -> types.ModuleType: ...
def compile_file(path: str, flags: Sequence[str] = ..., *,
                 lang: str | None = ...,
                 cuda_compiler: str | None = ...,
                 tiered: bool = ...) -> types.ModuleType: ...
def wait_for_compiles() -> None: ...
def parallel_do(dims: int | Sequence[SupportsIndex] | qvalue, /, *args: Any) -> None:
    """Runs a plugin kernel at every position of dims: parallel_do(dims, x, y, kernel); the
    kernel (a native_kernel) is the last argument."""

class checked:
    """`with q.checked():` checked mode for plugin kernels and functions on this thread."""
    def __init__(self, enabled: bool = ...) -> None: ...
    def __enter__(self) -> checked: ...
    def __exit__(self, *exc: Any) -> None: ...
    @staticmethod
    def active() -> bool: ...

class deterministic:
    """`with q.deterministic():` parallel_do runs positions in order on this thread
    (bit-identical scatter-add sums across runs and thread counts)."""
    def __init__(self, enabled: bool = ...) -> None: ...
    def __enter__(self) -> deterministic: ...
    def __exit__(self, *exc: Any) -> None: ...
    @staticmethod
    def active() -> bool: ...

def nvrtc_library() -> str | None: ...
def plugin_cache_dir() -> str: ...
def plugin_compiler() -> str: ...
def plugin_include_dir() -> str: ...

# Note [no module __getattr__ in the stub]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# At run time import_native, compile_string and compile_file set each plugin function and kernel
# as an attribute of isthmus itself (`q.addk` after compiling a plugin that defines addk); the
# module has no __getattr__, those are plain attributes. A stub cannot know them, and a blanket
# `def __getattr__(name: str) -> Any` here would hide every typo (`q.compile_strng` would pass),
# so there is none: type checkers report names this stub does not define. Typed code reaches
# plugin names through the module the compile returns (a types.ModuleType, whose attributes are
# Any), or through a stub that `python -m isthmus.stubgen` writes for the plugin.
