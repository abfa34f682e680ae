"""The PyQuasar manual's Example 3: a color_temperature kernel compiled from a string, run with parallel_do.

Compiles the kernel with q.compile_string, runs it over an RGB image with q.parallel_do, checks
the result against NumPy, writes the input and output images as PNG files with q.imwrite and
reads them back with q.imread (both need Pillow: pip install pillow, or scripts/deps).

    python examples/color_temperature.py [output_dir]     (default: $ISTHMUS_EXAMPLES_OUT or out/)
"""
import os
import pathlib
import sys

import numpy as np

import isthmus as q

KERNEL_SRC = r"""
namespace ip = isthmus::plugin;

// lerp(a, b, c) = a c + b (1 - c), elementwise on RGB triples.
static inline ip::vec3 lerp(ip::vec3 a, ip::vec3 b, float c) { return a * c + b * (1 - c); }

ISTHMUS_PLUGIN(color_temperature, m) {
    m.kernel("color_temperature",
             [](ip::view<const float, 3> x, ip::view<float, 3> y, float temp, ip::vec3 cold,
                ip::vec3 hot, ip::ivec2 pos) {
                 const ip::vec3 input = x.load<3>(pos[0], pos[1], 0);
                 const ip::vec3 output = temp < 0 ? lerp(input, cold, -0.25f * temp)
                                                  : lerp(input, hot, 0.25f * temp);
                 y.store(output, pos[0], pos[1], 0);
             },
             {"x", "y", "temp", "cold", "hot"},
             "Shifts an RGB image towards cold (temp < 0) or hot (temp > 0) colors.");
}
"""


def write_and_check(path, img):
    """Writes img (values on 0..255) with q.imwrite, reads it back with q.imread and checks
    that the file holds img rounded and clipped to 8 bits (PNG is lossless)."""
    q.imwrite(path, img)
    back = q.imread(path)
    expected = np.clip(np.rint(np.asarray(img)), 0, 255)
    assert back.shape == expected.shape and back.dtype == np.float32, (back.shape, back.dtype)
    assert np.array_equal(np.asarray(back), expected), f"{path} does not read back as written"
    print("wrote", path)


def synthetic_image(h=240, w=320):
    """A synthetic RGB picture in [0, 255]: colour ramps with a disc."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    img = np.stack([255 * xx / (w - 1), 255 * yy / (h - 1),
                    128 + 100 * np.sin(xx / 17.0) * np.cos(yy / 23.0)], axis=-1)
    disc = (xx - w / 2) ** 2 + (yy - h / 2) ** 2 < (min(h, w) / 4) ** 2
    img[disc] = [230, 230, 210]
    return np.clip(img, 0, 255).astype(np.float32)


def apply(img_in, temp):
    hot = q.value([1, 0.2, 0]) * 255
    cold = q.value([0.3, 0.4, 1]) * 255
    img_out = q.zeros(q.size(img_in))
    q.parallel_do(q.size(img_out, [0, 1]), img_in, img_out, temp, cold, hot, q.color_temperature)
    return img_out


def reference(img, temp):
    hot = np.array([1, 0.2, 0], np.float32) * 255
    cold = np.array([0.3, 0.4, 1], np.float32) * 255
    c, target = (np.float32(-0.25 * temp), cold) if temp < 0 else (np.float32(0.25 * temp), hot)
    return img * c + target * (1 - c)


def main():
    out_dir = pathlib.Path(sys.argv[1] if len(sys.argv) > 1
                           else os.environ.get("ISTHMUS_EXAMPLES_OUT", "out"))
    out_dir.mkdir(parents=True, exist_ok=True)
    q.init("cpu")
    mod = q.compile_string("color_temperature", KERNEL_SRC)
    print("compiled:", mod.color_temperature.signature)
    in_path = out_dir / "color_temperature_in.png"
    write_and_check(in_path, synthetic_image())
    img_in = q.imread(in_path)  # the manual's img_in = q.imread("lena_big.tif"): float32, 0..255
    for temp in (1, -2):
        img_out = apply(img_in, temp)
        err = float(np.abs(np.asarray(img_out) - reference(np.asarray(img_in), temp)).max())
        print(f"temp={temp}: max |isthmus - numpy| = {err:.3g}")
        assert err < 1e-3, err
        write_and_check(out_dir / f"color_temperature_out_{'hot' if temp > 0 else 'cold'}.png",
                        img_out)
    print("color_temperature: OK")


if __name__ == "__main__":
    main()
