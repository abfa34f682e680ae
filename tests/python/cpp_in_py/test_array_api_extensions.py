# The array API namespace: the linalg and fft extensions against array-api-strict.
import math

import numpy as np
import pytest


from array_api_helpers import FLOATS, RNG, both, check, sample, xp, xps

# ---- the linalg and fft extensions ----

def spd(n, dt):
    """A batch of symmetric positive-definite matrices."""
    a = RNG.standard_normal((2, n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dt)


@pytest.mark.parametrize("dt", FLOATS)
def test_linalg(dt):
    la, las = xp.linalg, xps.linalg
    a = sample((2, 4, 4), dt, special=False)
    x, s = both(a)
    p, ps = both(spd(4, dt))
    v, vs = both(sample((2, 4), dt, special=False))
    rtol = 1e-4 if dt == "float32" else 1e-9
    for off in (-1, 0, 2, 5):
        check(la.diagonal(x, offset=off), las.diagonal(s, offset=off))
        check(la.trace(x, offset=off), las.trace(s, offset=off), rtol=rtol)
    check(la.outer(v[0], v[1]), las.outer(vs[0, ...], vs[1, ...]))
    c, cs = both(sample((5, 3), dt, special=False))
    check(la.cross(c, c[::-1]), las.cross(cs, cs[::-1, ...]), rtol=rtol)
    for n in (0, 1, 3, -2):
        check(la.matrix_power(p, n), las.matrix_power(ps, n), rtol=1e-3 if n < 0 else rtol,
              atol=1e-6)
    for ord_ in (2, 1, math.inf, -math.inf, 0, 3):
        check(la.vector_norm(x, axis=-1, ord=ord_), las.vector_norm(s, axis=-1, ord=ord_), rtol)
    check(la.vector_norm(x, keepdims=True), las.vector_norm(s, keepdims=True), rtol=rtol)
    for ord_ in ("fro", 1, -1, math.inf, -math.inf, 2, -2, "nuc"):
        check(la.matrix_norm(x, ord=ord_), las.matrix_norm(s, ord=ord_), rtol=rtol)
    check(la.cholesky(p), las.cholesky(ps), rtol=rtol)
    check(la.cholesky(p, upper=True), las.cholesky(ps, upper=True), rtol=rtol)
    check(la.det(p), las.det(ps), rtol=rtol)
    check(la.inv(p), las.inv(ps), rtol=rtol, atol=1e-6)
    check(la.eigvalsh(p), las.eigvalsh(ps), rtol=rtol)
    check(la.eigh(p).eigenvalues, las.eigh(ps).eigenvalues, rtol=rtol)
    check(la.svdvals(x), las.svdvals(s), rtol=rtol)
    u, sv, vh = la.svd(x, full_matrices=False)
    np.testing.assert_allclose(np.asarray(u * sv[..., None, :] @ vh), a, rtol=1e-3, atol=1e-4)
    qq, rr = la.qr(x)
    np.testing.assert_allclose(np.asarray(qq @ rr), a, rtol=1e-3, atol=1e-4)
    check(la.slogdet(p).logabsdet, las.slogdet(ps).logabsdet, rtol=rtol)
    check(la.solve(p, v[0]), las.solve(ps, vs[0, ...]), rtol=1e-3, atol=1e-6)
    check(la.solve(p, x), las.solve(ps, s), rtol=1e-3, atol=1e-6)
    check(la.matrix_rank(x), las.matrix_rank(s))
    check(la.pinv(x), las.pinv(s), rtol=1e-3, atol=1e-5)
    check(la.matmul(x, x), las.matmul(s, s), rtol=rtol)
    check(la.vecdot(x, x), las.vecdot(s, s), rtol=rtol)
    with pytest.raises(ValueError):
        la.inv(xp.ones((2, 3), dtype=xp.float64))
    with pytest.raises(TypeError):
        la.det(xp.ones((2, 2), dtype=xp.int32))
    with pytest.raises(ValueError):
        la.matrix_norm(x, ord="max")


def test_fft():
    f, fs = xp.fft, xps.fft
    z, zs = both(sample((4, 6), "complex128", special=False))
    r, rs = both(sample((4, 6), "float32", special=False))
    for name in ("fft", "ifft", "hfft", "irfft"):
        for norm in ("backward", "ortho", "forward"):
            check(getattr(f, name)(z, n=5, axis=0, norm=norm),
                  getattr(fs, name)(zs, n=5, axis=0, norm=norm), rtol=1e-9)
    for name in ("rfft", "ihfft"):
        check(getattr(f, name)(r), getattr(fs, name)(rs))
    for name in ("fftn", "ifftn", "irfftn"):
        check(getattr(f, name)(z, axes=(0, 1)), getattr(fs, name)(zs, axes=(0, 1)), rtol=1e-9)
    check(f.rfftn(r), fs.rfftn(rs))
    for n in (1, 6, 7):
        check(f.fftfreq(n, d=0.5), fs.fftfreq(n, d=0.5), exact=True)
        check(f.rfftfreq(n, dtype=xp.float32), fs.rfftfreq(n, dtype=xps.float32), exact=True)
    for axes in (None, 0, (1,)):
        check(f.fftshift(r, axes=axes), fs.fftshift(rs, axes=axes))
        check(f.ifftshift(z, axes=axes), fs.ifftshift(zs, axes=axes))
    with pytest.raises(TypeError):
        f.fft(r)  # real input: the standard's fft takes complex arrays
    with pytest.raises(ValueError):
        f.fft(z, norm="none")


