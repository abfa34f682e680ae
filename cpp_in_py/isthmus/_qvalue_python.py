"""Every qvalue attribute written in Python, attached to the native type in one place.

The type and its native attributes are C++ (cpp_in_py/src/qvalue/, listed in its qvalue.hpp);
what is simpler in Python joins them here, once, when the package is imported:

  __array_ufunc__, __array_function__, __format__    NumPy's protocols (numpy_protocols/)
  __reduce_ex__, __reduce__, __copy__, __deepcopy__  pickling and copying (pickling.py)
  __array_namespace__, to_device, mT                 the array API standard (_array_api_object.py)
"""

from __future__ import annotations

from typing import Any

from . import _array_api_object, numpy_protocols, pickling


def python_attributes() -> dict[str, Any]:
    """The attributes, by name (a property for mT)."""
    return {
        "__array_ufunc__": numpy_protocols.array_ufunc,
        "__array_function__": numpy_protocols.array_function,
        "__format__": numpy_protocols.format_value,
        "__reduce_ex__": pickling.reduce_ex,
        "__reduce__": pickling.reduce,
        "__copy__": pickling.copy_,
        "__deepcopy__": pickling.deepcopy_,
        "__array_namespace__": _array_api_object.array_namespace,
        "to_device": _array_api_object.to_device,
        "mT": property(_array_api_object.matrix_transpose),
    }


def attach(qvalue: Any) -> None:
    """Sets the attributes on the qvalue type (isthmus/__init__.py calls it once)."""
    for name, attribute in python_attributes().items():
        setattr(qvalue, name, attribute)
