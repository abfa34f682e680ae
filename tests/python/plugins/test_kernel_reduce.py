"""ip::row_sum in kernel bodies (Note [row sums in kernels], isthmus/plugin/reduce.hpp): the sum
along a view's last dimension in a fixed order, the same bits for every stride and thread count,
checked against that order written in NumPy and against a float64 reference; its loop is
vectorised without fast math; a derived kernel differentiates through it."""
import os
import re
import shutil

import numpy as np
import pytest

import isthmus as q
from cuda_helpers import HAVE_CUDA, cuda_session, on_gpu
from object_code import functions

SRC = """
namespace ip = isthmus::plugin;
template <typename T>
void row_sums(ip::view<const T, 2> x, ip::view<T, 1> out, int64_t i) {
    out(i) = ip::row_sum(x, i);
}
template <typename T>
struct scaled_row_sums {
    void operator()(ip::view<const T, 2> x, ip::view<T, 1> out, T s, int64_t i) const {
        out(i) = s * ip::row_sum(x, i);
    }
};
ISTHMUS_PLUGIN(reduce_kernels, m) {
    m.kernel("rs_f32", &row_sums<float>, {"x", "out"}).at_position({"out"});
    m.kernel("rs_f64", &row_sums<double>, {"x", "out"}).at_position({"out"});
    m.kernel("rs_i64",
             [](ip::view<const int64_t, 2> x, ip::view<int64_t, 1> out, int64_t i) {
                 out(i) = ip::row_sum(x, i);
             },
             {"x", "out"})
        .at_position({"out"});
    // a 3-d view, and the leading index through the 'clamped map (rows past the end repeat
    // the last one)
    m.kernel("rs_cube",
             [](ip::view<const float, 3> x, ip::view<float, 2> out, ip::ivec2 p) {
                 out(p[0], p[1]) = ip::row_sum(x, p[0], p[1]);
             },
             {"x", "out"});
    m.kernel("rs_clamped",
             [](ip::view<const float, 2, ip::access::clamped> x, ip::view<float, 1> out,
                int64_t i) { out(i) = ip::row_sum(x, i + 2); },
             {"x", "out"});
    // a generic kernel: its derived kernel differentiates through the sum
    m.kernel("rs_scaled", ip::generic<double>([]<typename T>() { return scaled_row_sums<T>{}; }),
             {"x", "out", "s"});
}
"""


@pytest.fixture(scope="module")
def mod(worker_cache):
    with worker_cache("kernel_reduce"):
        yield q.compile_string("reduce_kernels", SRC)


def block_sum(v):
    """The order of detail::block_sum, in v's dtype (len(v) <= 128)."""
    t = v.dtype.type
    if len(v) < 8:
        r = t(0)
        for e in v:
            r = t(r + e)
        return r
    acc = [t(e) for e in v[:8]]
    j = 8
    while j + 8 <= len(v):
        for k in range(8):
            acc[k] = t(acc[k] + v[j + k])
        j += 8
    r = t(t(t(acc[0] + acc[1]) + t(acc[2] + acc[3])) + t(t(acc[4] + acc[5]) + t(acc[6] + acc[7])))
    for e in v[j:]:
        r = t(r + e)
    return r


def pairwise_sum(v):
    """The order of detail::pairwise_sum: blocks of 128 merged as a binary counter."""
    t = v.dtype.type
    if len(v) <= 128:
        return block_sum(v)
    stack, count, j = [], 0, 0
    while j + 128 <= len(v):
        s = block_sum(v[j:j + 128])
        c = count
        while c & 1:
            s = t(stack.pop() + s)
            c >>= 1
        stack.append(s)
        count += 1
        j += 128
    r = block_sum(v[j:]) if j < len(v) else stack.pop()
    while stack:
        r = t(stack.pop() + r)
    return r


LENGTHS = [0, 1, 7, 8, 9, 127, 128, 129, 255, 256, 257, 1000, 4096, 4101]


@pytest.mark.parametrize("dt,kernel", [(np.float32, "rs_f32"), (np.float64, "rs_f64")])
@pytest.mark.parametrize("n", LENGTHS)
def test_the_order_is_the_documented_one_for_every_length(mod, dt, kernel, n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal((5, n)).astype(dt)
    out = np.full(5, np.nan, dt)
    q.parallel_do(5, x, out, getattr(mod, kernel))
    expected = np.array([pairwise_sum(row) for row in x], dt)
    np.testing.assert_array_equal(out, expected)
    # and close to the exact sum (pairwise: the error grows with log n)
    ref = x.astype(np.float64).sum(axis=1)
    tol = 1e-5 if dt == np.float32 else 1e-13
    np.testing.assert_allclose(out, ref, rtol=tol, atol=tol * (1 + np.sqrt(n)))


def test_strided_rows_give_the_same_bits_as_contiguous_ones(mod):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 1001)).astype(np.float32)
    out = np.zeros(64, np.float32)
    q.parallel_do(64, x, out, mod.rs_f32)
    for strided in (np.asfortranarray(x),                # column-major: stride 64 along a row
                    np.repeat(x, 3, axis=1)[:, ::3],     # stride 3
                    np.ascontiguousarray(x[:, ::-1])[:, ::-1]):  # stride -1
        o = np.zeros(64, np.float32)
        q.parallel_do(64, strided, o, mod.rs_f32)
        np.testing.assert_array_equal(o, out)


def test_the_same_bits_on_one_thread_and_many(mod):
    x = np.random.default_rng(2).standard_normal((3000, 300)).astype(np.float32)
    out = np.zeros(3000, np.float32)
    q.parallel_do(3000, x, out, mod.rs_f32)
    with q.deterministic():  # one thread
        one = np.zeros(3000, np.float32)
        q.parallel_do(3000, x, one, mod.rs_f32)
    np.testing.assert_array_equal(one, out)


def test_integers_nan_inf_and_empty_rows(mod):
    x = np.arange(3 * 300, dtype=np.int64).reshape(3, 300)
    out = np.zeros(3, np.int64)
    q.parallel_do(3, x, out, mod.rs_i64)
    np.testing.assert_array_equal(out, x.sum(axis=1))
    f = np.ones((4, 500))
    f[1, 333] = np.nan
    f[2, 7] = np.inf
    f[3, 7], f[3, 400] = np.inf, -np.inf
    o = np.zeros(4)
    q.parallel_do(4, f, o, mod.rs_f64)
    assert o[0] == 500 and np.isnan(o[1]) and o[2] == np.inf and np.isnan(o[3])
    e = np.zeros((3, 0))
    oe = np.full(3, 7.0)
    q.parallel_do(3, e, oe, mod.rs_f64)
    np.testing.assert_array_equal(oe, 0.0)


def test_leading_indices_go_through_the_view(mod):
    x = np.random.default_rng(4).standard_normal((2, 3, 50)).astype(np.float32)
    out = np.zeros((2, 3), np.float32)
    q.parallel_do((2, 3), x, out, mod.rs_cube)
    np.testing.assert_array_equal(
        out, np.array([[pairwise_sum(x[a, b]) for b in range(3)] for a in range(2)], np.float32))
    m = np.random.default_rng(5).standard_normal((4, 300)).astype(np.float32)
    o = np.zeros(4, np.float32)
    q.parallel_do(4, m, o, mod.rs_clamped)  # rows 2, 3, then 3 again (clamped)
    np.testing.assert_array_equal(o, [pairwise_sum(m[r]) for r in (2, 3, 3, 3)])


def test_a_bad_leading_index_is_an_index_error_in_checked_mode(mod):
    x = np.ones((3, 10), np.float32)
    out = np.full(4, -1.0, np.float32)  # one position more than x has rows
    with q.checked(), pytest.raises(IndexError, match=r"index 3 is out of bounds for dimension 0 "
                                                      r"with size 3"):
        q.parallel_do(4, x, out, mod.rs_f32)
    np.testing.assert_array_equal(out[:3], 10.0)  # the rows before the bad one ran
    assert out[3] == -1.0


def test_a_row_sum_with_the_wrong_index_count_is_a_compile_error(worker_cache):
    bad = SRC.replace("out(i) = ip::row_sum(x, i);\n}", "out(i) = ip::row_sum(x, i, i);\n}", 1)
    assert bad != SRC
    bad = bad.replace("reduce_kernels", "reduce_kernels_bad")
    with worker_cache("kernel_reduce_bad"):
        with pytest.raises(q.CompileError, match="row_sum: one index per leading dimension"):
            q.compile_string("reduce_kernels_bad", bad)


def test_the_derived_kernel_differentiates_through_the_sum(mod):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((6, 200))
    s = 1.5
    out = np.zeros(6)
    q.parallel_do(6, x, out, s, mod.rs_scaled)
    np.testing.assert_allclose(out, s * x.sum(axis=1), rtol=1e-13)
    gy = rng.standard_normal(6)
    gx = np.zeros_like(x)
    gs = np.zeros(())
    q.parallel_do(6, x, out, s, gy, gx, gs, mod.rs_scaled_vjp)
    np.testing.assert_allclose(gx, s * np.repeat(gy[:, None], 200, axis=1), rtol=1e-13)
    np.testing.assert_allclose(gs, (gy * x.sum(axis=1)).sum(), rtol=1e-12)


@pytest.mark.skipif(shutil.which("objdump") is None, reason="needs binutils' objdump")
@pytest.mark.skipif("asan" in os.environ.get("LD_PRELOAD", ""),
                    reason="under the sanitizer gate plugins are compiled instrumented by clang")
def test_the_row_sum_is_vectorised_without_fast_math(mod):
    funcs = functions(mod.rs_f32.plugin_path)
    loops = [body for n, body in funcs.items()
             if "fast_kernel_loop<" in n and "float const, 2" in n]
    assert loops, sorted(funcs)[:20]
    # packed single-precision adds (addps or vaddps): the eight partial sums in one register
    assert any(re.search(r"\bv?addps\b", ln) for body in loops for ln in body), \
        "the row sum's partial sums are not one vector add"


CUDA_SRC = r"""namespace ip = isthmus::plugin;
ISTHMUS_KERNEL(rs_cuda, ip::view<const float, 2> x, ip::view<float, 1> out, int64_t i) {
    out(i) = ip::row_sum(x, i);
}
ISTHMUS_PLUGIN(reduce_cuda, m) {
    m.kernel("rs_cuda", rs_cuda{}, {"x", "out"});
}
"""


@pytest.mark.skipif(q.nvrtc_library() is None, reason="no NVRTC (pip install nvidia-cuda-nvrtc)")
def test_the_row_sum_compiles_for_the_gpu_and_gives_the_cpu_bits(worker_cache):
    # NVRTC compiles the device code (no GPU needed); the CPU launcher runs here, and on a GPU
    # the same order gives the same bits
    with worker_cache("kernel_reduce_cuda"):
        mod = q.compile_string("reduce_cuda", CUDA_SRC, lang="cuda")
    x = np.random.default_rng(7).standard_normal((9, 700)).astype(np.float32)
    out = np.zeros(9, np.float32)
    assert mod.rs_cuda.devices == ("cpu", "cuda")
    q.parallel_do(9, x, out, mod.rs_cuda)
    np.testing.assert_array_equal(out, [pairwise_sum(r) for r in x])
    if HAVE_CUDA:
        with cuda_session():
            od = q.zeros(9)
            q.parallel_do(9, on_gpu(x), od, mod.rs_cuda)
            assert od.device.startswith("cuda")
            np.testing.assert_array_equal(np.asarray(od), out)
