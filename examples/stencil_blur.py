"""A 3x3 blur with clamped edges as a kernel, declared a stencil so its interior runs unmapped.

(The gain needs the position's last dimension to be the view's unit-stride one, as here; an
interleaved RGB image read channel by channel steps by 3 along it and stays scalar: blur each
plane of a planar image instead.)

The same kernel twice: as written, every read of the 'clamped view maps its index; with
.stencil({"x"}, 1) the launcher runs the positions at least one pixel from every edge without
the map (the reads there are inside the image anyway), which the compiler turns into vector loads.
Both give the same bits, NumPy's padded reference within rounding; the declared one is faster.

    python examples/stencil_blur.py [height width]      (default 1024 1536)
"""
import sys

import numpy as np

import isthmus as q
from best_time import best_ms  # examples/best_time.py

BLUR = r"""
    m.kernel("{name}",
             [](ip::view<const float, 2, ip::access::clamped> x, ip::view<float, 2> y,
                ip::ivec2 p) {{
                 float s = 0.0f;
                 for (int di = -1; di <= 1; ++di)
                     for (int dj = -1; dj <= 1; ++dj) s += x(p[0] + di, p[1] + dj);
                 y(p[0], p[1]) = s / 9.0f;
             }},
             {{"x", "y"}})
        .at_position({{"y"}}){declaration};"""

SRC = ("namespace ip = isthmus::plugin;\nISTHMUS_PLUGIN(stencil_blur, m) {"
       + BLUR.format(name="blur_mapped", declaration="")
       + BLUR.format(name="blur_stencil", declaration='.stencil({"x"}, 1)') + "\n}\n")


def reference(img):
    p = np.pad(img, 1, mode="edge")
    h, w = img.shape
    return sum(p[1 + a:1 + a + h, 1 + b:1 + b + w] for a in (-1, 0, 1) for b in (-1, 0, 1)) / 9


def main():
    h, w = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) > 2 else (1024, 1536)
    q.init("cpu")
    mod = q.compile_string("stencil_blur", SRC)
    q.wait_for_compiles()  # time the -O3 build, not the quick one it returned first
    img = np.random.default_rng(0).random((h, w), dtype=np.float32) * 255  # a grey image
    out = {name: np.zeros_like(img) for name in ("blur_mapped", "blur_stencil")}
    for name, y in out.items():
        q.parallel_do((h, w), img, y, getattr(mod, name))
    err = float(np.abs(out["blur_stencil"] - reference(img)).max())
    print(f"{h}x{w} image: max |isthmus - numpy| = {err:.3g}")
    assert err < 1e-3, err
    assert np.array_equal(out["blur_stencil"], out["blur_mapped"]), "the stencil changed the bits"
    for name, y in out.items():
        ms = best_ms(lambda: q.parallel_do((h, w), img, y, getattr(mod, name)))
        print(f"{name:13s} {ms:7.2f} ms")
    print("stencil_blur: OK")


if __name__ == "__main__":
    main()
