"""Forward mode derived from generic plugin functions (Note [derived forward mode]): `<name>_jvp`
equals torch.func.jvp of the same math in float64 (math functions, a loop with data-dependent
branches, the PyQuasar manual's mapping layer, tuple results, a 0-d view and a number), strided
and broadcast tangents, the transpose identity with `<name>_vjp`, results equal to the
function's; bad tangents are typed errors. Kernels' forward mode: test_derived_kernel_forward.py."""
import numpy as np
import pytest

import isthmus as q

torch = pytest.importorskip("torch")

# The plugin of test_derived_backward.py registers its generic functions with ip::with_jvp.
from test_derived_backward import SRC, arr, branchy_reference, torch_math


@pytest.fixture(scope="module")
def mod(worker_cache):
    with worker_cache("derived_backward"):  # the same plugin: a cache hit after the other file
        yield q.compile_string("derived_tests", SRC)


def t64(v):
    return torch.tensor(v, dtype=torch.float64)


def test_the_math_functions_match_torch_jvp(mod):
    rng = np.random.default_rng(1)
    for n in (1, 7, 64):
        x, y, s = rng.uniform(-0.9, 0.9, n), rng.uniform(-3, 3, n), 1.3
        dx, dy, ds = rng.standard_normal(n), rng.standard_normal(n), 0.4
        r, dr = q.dv_math_jvp(x, y, s, dx, dy, ds)
        tr, tdr = torch.func.jvp(torch_math, (t64(x), t64(y), t64(s)),
                                 (t64(dx), t64(dy), t64(ds)))
        np.testing.assert_allclose(arr(r), arr(q.dv_math(x, y, s)), rtol=1e-14)
        np.testing.assert_allclose(arr(r), tr.numpy(), rtol=1e-12)
        np.testing.assert_allclose(arr(dr), tdr.numpy(), rtol=1e-10, atol=1e-12)


def test_a_loop_with_data_dependent_branches_matches_torch(mod):
    rng = np.random.default_rng(4)
    x, t = rng.uniform(-3, 3, 25), 0.25
    dx, dt = rng.standard_normal(25), -0.6
    r, dr = q.dv_branchy_jvp(x, t, dx, dt)
    tr, tdr = torch.func.jvp(branchy_reference, (t64(x), t64(t)), (t64(dx), t64(dt)))
    assert r == pytest.approx(q.dv_branchy(x, t), rel=1e-14)
    assert dr == pytest.approx(tdr.item(), rel=1e-12)
    # float32: the same path in single precision
    r32, dr32 = q.dv_branchy_jvp(x.astype(np.float32), np.float32(t), dx.astype(np.float32),
                                 np.float32(dt))
    assert dr32 == pytest.approx(tdr.item(), rel=1e-4)


def test_the_mapping_layer_moves_with_its_table(mod):
    rng = np.random.default_rng(2)
    a = rng.standard_normal(50)
    x = np.floor(rng.uniform(-10, 60, (3, 8)))  # some indices clamped onto the ends
    da = rng.standard_normal(50)
    y, dy = q.dv_lookup_jvp(a, x, da, rng.standard_normal((3, 8)))  # x's tangent: no effect
    idx = np.clip(x.astype(int), 0, 49)
    np.testing.assert_array_equal(arr(y), a[idx])
    np.testing.assert_array_equal(arr(dy), da[idx])


def test_the_transpose_identity_with_the_derived_backward(mod):
    rng = np.random.default_rng(6)
    w, x = rng.standard_normal(5), rng.standard_normal((4, 5))
    dw, dx = rng.standard_normal(5), rng.standard_normal((4, 5))
    gy, greg = rng.standard_normal(4), 0.3
    y, reg, ty, treg = q.dv_affine_jvp(w, x, 3, "plain", dw, dx)
    gw, gx, gp, gtag = q.dv_affine_vjp(w, x, 3, "plain", gy, greg)
    assert gp is None and gtag is None
    lhs = arr(ty) @ gy + treg * greg  # <J v, u>
    rhs = arr(gw) @ dw + np.sum(arr(gx) * dx)  # <v, J^T u>
    assert lhs == pytest.approx(rhs, rel=1e-12)
    np.testing.assert_allclose(arr(ty), x @ dw + dx @ w, rtol=1e-12)
    assert treg == pytest.approx(np.sum(3 * w ** 2 * dw), rel=1e-12)
    np.testing.assert_allclose(arr(y), x @ w, rtol=1e-12)
    assert reg == pytest.approx(np.sum(w ** 3), rel=1e-12)


def test_strided_broadcast_and_empty_tangents(mod):
    rng = np.random.default_rng(7)
    x = rng.uniform(-0.9, 0.9, 12)[::2]  # strided input
    y = rng.uniform(-3, 3, 6)
    dx = np.broadcast_to(np.float64(0.5), (6,))  # stride 0
    dy = rng.standard_normal(12)[::-2]  # negative stride
    r, dr = q.dv_math_jvp(x, y, 1.1, dx, dy, 0.0)
    _, tdr = torch.func.jvp(torch_math, (t64(x), t64(y), t64(1.1)),
                            (t64(np.array(dx)), t64(dy.copy()), t64(0.0)))
    np.testing.assert_allclose(arr(dr), tdr.numpy(), rtol=1e-10, atol=1e-12)
    r0, dr0 = q.dv_math_jvp(np.zeros(0), np.zeros(0), 1.0, np.zeros(0), np.zeros(0), 1.0)
    assert arr(r0).shape == (0,) and arr(dr0).shape == (0,)


def test_a_0d_view_and_a_number(mod):
    x, b, dx, db = 1.5, 0.7, -2.0, 0.25
    r, dr = q.dv_scalar_jvp(np.array(x), b, np.array(dx), db)
    assert r == pytest.approx(x * x * b + np.sin(b), rel=1e-15)
    assert dr == pytest.approx(2 * x * b * dx + (x * x + np.cos(b)) * db, rel=1e-13)
    assert q.dv_scalar.jvp.__name__ == "dv_scalar_jvp"
    assert "tangent_x" in q.dv_scalar_jvp.signature and "tangent_b" in q.dv_scalar_jvp.signature


def test_forward_mode_is_opt_in(mod):
    assert q.dv_branchy_reverse_only.vjp is not None
    assert q.dv_branchy_reverse_only.jvp is None
    assert not hasattr(mod, "dv_branchy_reverse_only_jvp")
    assert "tangent_x" in q.dv_branchy_jvp.signature and "tangent_t" in q.dv_branchy_jvp.signature


def test_bad_tangents_are_typed_errors(mod):
    x, y = np.full(3, 0.1), np.ones(3)
    with pytest.raises(ValueError, match="a tangent has size 2 along dimension 0 where its input "
                                         "has 3"):
        q.dv_math_jvp(x, y, 1.0, np.ones(2), np.ones(3), 0.0)
    with pytest.raises(TypeError, match="expected 6 argument"):
        q.dv_math_jvp(x, y, 1.0, np.ones(3), np.ones(3))
    with pytest.raises(TypeError):
        q.dv_math_jvp(x, y, 1.0, np.ones(3), "no", 0.0)
    assert (x == 0.1).all() and (y == 1).all()
