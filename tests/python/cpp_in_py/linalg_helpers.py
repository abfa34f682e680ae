# Shared helpers of the composed linalg tests (elimination, Jacobi rotations): dtypes, matrices,
# the CPU session each test starts in.
import numpy as np
import pytest

import isthmus as q

DTYPES = ["float32", "float64", "complex64", "complex128"]


@pytest.fixture(autouse=True)
def cpu_session():
    """Each test starts in a CPU session (a CUDA test ends its own and starts a CPU one again)."""
    q.init("cpu")


def matrix_source(seed):
    """rand(shape, dtype): standard normal entries (complex: independent real and imaginary
    parts) from one generator seeded with `seed`."""
    rng = np.random.default_rng(seed)

    def rand(shape, dtype):
        a = rng.standard_normal(shape)
        if np.dtype(dtype).kind == "c":
            a = a + 1j * rng.standard_normal(shape)
        return a.astype(dtype)
    return rand
