# Exception translation: every isthmus error type becomes the matching Python exception.
import numpy as np
import pytest

import isthmus as q


@pytest.mark.parametrize(
    "kind, exc",
    [
        ("value_error", ValueError),
        ("type_error", TypeError),
        ("index_error", IndexError),
        ("memory_error", MemoryError),
        ("overflow_error", OverflowError),
        ("not_implemented_error", NotImplementedError),
        ("runtime_error", RuntimeError),
        ("internal_error", RuntimeError),
        ("error", RuntimeError),
    ],
)
def test_error_mapping_preserves_message(kind, exc):
    msg = f"some {kind} happened: shape (2, 3) vs (4,)"
    with pytest.raises(exc) as info:
        q._isthmus._raise_error(kind, msg)
    assert str(info.value) == msg
    assert type(info.value) is exc


def test_real_errors_have_typed_exceptions():
    A = q.zeros(2, 3)
    with pytest.raises(ValueError, match="negative"):
        q.zeros(2, -3)
    with pytest.raises(TypeError, match="integers"):
        q.zeros(2.5)
    with pytest.raises(ValueError, match="position"):
        q.typename("vec[mat")
    with pytest.raises(IndexError, match="out of bounds"):
        A[5]
    with pytest.raises(IndexError, match="too many indices"):
        A[0, 0, 0]
    with pytest.raises(TypeError, match="dtype"):
        q.zeros(2, dtype="float128x")
    with pytest.raises(TypeError, match="no isthmus equivalent"):
        q.from_py(np.array(["a", "b"]))
    with pytest.raises(NotImplementedError, match="not supported|OpenCL"):
        A.lock(q.LOCK_READ, q.MEMRESOURCE_SINGLE_OPENCL)
    with pytest.raises(ValueError):
        A.lock(q.LOCK_READ, 40)
    with pytest.raises(RuntimeError, match="unlock"):
        A.unlock(q.LOCK_READ, q.MEMRESOURCE_CPU)
    # nothing changed
    assert A.shape == (2, 3) and A.to_py().sum() == 0
