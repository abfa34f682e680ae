"""A CUDA kernel compiled on the fly and run with parallel_do, on the GPU when there is one.

Compiles examples/plugins/unsharp.cu with q.compile_file (the .cu extension selects CUDA: NVRTC
for the device code of its ISTHMUS_KERNEL when NVRTC is found, else nvcc), runs the kernel on a
synthetic grey image and checks it against NumPy. Without a GPU the same kernel
body runs through the plugin's CPU launcher; with one, q.init("cuda") puts the data and the
kernel on the device.

    python examples/plugins/cuda_kernel.py
"""
import pathlib
import time

import numpy as np

import isthmus as q

HERE = pathlib.Path(__file__).resolve().parent


def reference(x, amount):
    p = np.pad(x, 1, mode="edge").astype(np.float64)
    h, w = x.shape
    box = sum(p[1 + di:1 + di + h, 1 + dj:1 + dj + w] for di in (-1, 0, 1) for dj in (-1, 0, 1))
    return x + amount * (x - box / 9.0)


def main():
    device = "cuda" if q.cuda_available() else "cpu"
    q.init(device)
    print("device:", device, "" if device == "cuda" else f"({q.cuda_unavailable_reason()})")
    t0 = time.perf_counter()
    mod = q.compile_file(str(HERE / "unsharp.cu"))
    print(f"compiled (or loaded from the cache) in {time.perf_counter() - t0:.1f} s",
          f"(NVRTC: {q.nvrtc_library() or 'not found, nvcc used'}):",
          mod.unsharp.signature, "runs on", mod.unsharp.devices)
    yy, xx = np.mgrid[0:480, 0:640].astype(np.float32)
    img = (128 + 60 * np.sin(xx / 19.0) * np.cos(yy / 13.0)).astype(np.float32)
    x = q.value(img)
    y = q.zeros(480, 640)
    q.parallel_do(q.size(y), x, y, 1.5, q.unsharp)
    print("result on", y.device)
    err = float(np.abs(np.asarray(y) - reference(img, 1.5)).max())
    print(f"max |isthmus - numpy| = {err:.3g}")
    assert err < 1e-3, err
    print("cuda_kernel: OK")


if __name__ == "__main__":
    main()
