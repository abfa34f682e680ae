"""Python computing on native isthmus values: the PyQuasar-style API from Python.

Run from the repository root after a build:  PYTHONPATH=build/python python3 examples/python_tour.py
"""
import numpy as np

import isthmus as q

q.init("cpu")

# The PyQuasar manual's example 1: two values added in the native runtime, then brought to NumPy.
a = q.value([5, 4, 3, 2, 1]) + q.value(2.0)
print("value([5,4,3,2,1]) + value(2.0) =", a.to_py())

# A cube made natively, sliced and reduced without leaving the runtime.
A = q.zeros(4, 5, 3)
A[:, :, 0] = q.value(np.arange(20, dtype=np.float32).reshape(4, 5))
A[1:3, 1:4, 1] = 7
print("q.type(A, 'cube'):", q.type(A, "cube"), " size:", q.size(A), " size(A,[0,1]):",
      q.size(A, [0, 1]))
print("A[:, 2, 0] =", A[:, 2, 0])
print("sum over the first two axes:", A.sum(axis=(0, 1)))
print("mean of channel 0:", float(A[:, :, 0].mean()))

# Quasar type names build values: a cell of four empty matrices.
w = q.typename("vec[mat]")(4)
print("typename('vec[mat]')(4) has", len(w), "elements of shape", w[0].shape)

# Zero-copy with NumPy: a NumPy view of a native value shares its memory.
B = q.ones(3, 4)
view = np.asarray(B)
view[0, 0] = 42  # writes into the native value
print("after writing through NumPy, B[0, 0] =", float(B[0, 0]))
ptr = B.lock(q.LOCK_READ, q.MEMRESOURCE_CPU)
print("same memory:", ptr == view.__array_interface__["data"][0])
B.unlock(q.LOCK_READ, q.MEMRESOURCE_CPU)

# ...and a NumPy array wrapped without a copy.
src = np.linspace(0, 1, 6).reshape(2, 3)
C = q.from_py(src)
src[1, 2] = -1.0
print("q.from_py shares memory: C[1, 2] =", float(C[1, 2]))

# Matrix product and broadcasting against NumPy.
M = q.value(np.random.default_rng(0).standard_normal((64, 32)), dtype="float64")
N = q.value(np.random.default_rng(1).standard_normal((32, 16)), dtype="float64")
err = np.abs((M @ N).to_py() - M.to_py() @ N.to_py()).max()
print(f"(M @ N) matches NumPy: max abs error {err:.2e}")

# NumPy's vocabulary as module functions and methods, computed natively.
q.manual_seed(7)
X = q.randn(1000, 3, dtype="float64")
Z = (X - q.mean(X, axis=0)) / q.std(X, axis=0)  # standardise the columns
print("standardised column means ~0:", np.round(q.mean(Z, axis=0).to_py(), 12) + 0.0)
angles = q.linspace(0, np.pi, 5)
print("sin(linspace(0, pi, 5)) =", q.round(q.sin(angles) * 1000).to_py() / 1000 + 0.0)
img = q.arange(12).reshape(3, 4)
print("where(img % 2 == 0, img, -1) =\n", q.where(img % 2 == 0, img, -1))
print("concatenate + transpose:", q.concatenate([img, img.T.reshape(3, 4)], axis=1).shape)

# Where work runs: q.placement says, `with q.device(...)` decides, A.to(...) moves data ahead.
# (With q.init("cuda") the same lines put values and ops on the GPU.)
print("an op on img would run on:", q.placement(img, img))
with q.device("cpu"):
    print("made inside q.device('cpu'):", q.ones(2).device)
print("img.to('cpu') is img:", img.to("cpu") is img)

# Errors are typed Python exceptions with the runtime's message; values stay unchanged.
try:
    q.zeros(2, 3) + q.zeros(4)
except ValueError as e:
    print("ValueError:", e)
q.destroy()
