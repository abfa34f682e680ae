"""Runs the Python examples under examples/ as smoke tests and checks what they print."""
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[3]


def run_example(name, *args):
    """Runs examples/<name> with the built package; checks that it succeeds, returns its stdout."""
    env = dict(os.environ)
    build = pathlib.Path(os.environ.get("ISTHMUS_BUILD_DIR", ROOT / "build"))
    if not build.is_absolute():
        build = ROOT / build
    env["PYTHONPATH"] = os.pathsep.join(
        [str(build / "python")] + [p for p in [env.get("PYTHONPATH")] if p])
    r = subprocess.run([sys.executable, str(ROOT / "examples" / name), *args], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_python_tour_runs_and_shares_memory():
    out = run_example("python_tour.py")
    assert "= [7. 6. 5. 4. 3.]" in out
    assert "same memory: True" in out
    assert "q.from_py shares memory: C[1, 2] = -1.0" in out
    assert "ValueError:" in out


def test_ecosystem_tour_shows_numpy_functions_pickling_and_processes():
    out = run_example("ecosystem_tour.py")
    assert "np.sum(a, axis=0) -> qvalue of shape (256,)" in out
    assert "b shares a's memory: True" in out
    assert "a[0, 0] = 100" not in out and "c[0, 0] = 100.0" in out
    assert "4 chunks blurred in 2 processes -> qvalue (512, 254), equal to NumPy's" in out


def test_color_temperature_matches_numpy_and_writes_pngs(tmp_path, monkeypatch):
    import pytest
    pytest.importorskip("PIL")  # q.imwrite / q.imread (scripts/deps installs Pillow)
    monkeypatch.setenv("ISTHMUS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ISTHMUS_EXAMPLES_OUT", str(tmp_path / "out"))
    out = run_example("color_temperature.py")
    assert "color_temperature: OK" in out
    for name in ("in", "out_hot", "out_cold"):
        png = (tmp_path / "out" / f"color_temperature_{name}.png").read_bytes()
        assert png.startswith(b"\x89PNG\r\n\x1a\n") and b"IEND" in png


def test_stencil_blur_declared_and_mapped_agree_with_numpy(tmp_path, monkeypatch):
    monkeypatch.setenv("ISTHMUS_CACHE_DIR", str(tmp_path / "cache"))
    out = run_example("stencil_blur.py", "67", "131")
    assert "67x131 image: max |isthmus - numpy|" in out
    assert "stencil_blur: OK" in out


def test_row_sums_running_and_pairwise_agree_with_numpy(tmp_path, monkeypatch):
    monkeypatch.setenv("ISTHMUS_CACHE_DIR", str(tmp_path / "cache"))
    out = run_example("row_sums.py", "37", "1001")
    assert "pairwise_sum" in out and "largest relative error" in out
    assert "row_sums: OK" in out


def test_mapping_layer_gradcheck_and_training(tmp_path, monkeypatch):
    import pytest
    pytest.importorskip("torch")
    monkeypatch.setenv("ISTHMUS_CACHE_DIR", str(tmp_path / "cache"))
    # Under the sanitizer gate inductor has no usable compiler (tests/sanitizer/asan_pytest.py,
    # INDUCTOR); the custom op and the compiled graph are the same with aot_eager.
    backend = "aot_eager" if "asan" in os.environ.get("LD_PRELOAD", "") else "inductor"
    out = run_example("mapping_layer.py", "--backend", backend)
    assert "gradcheck (float64): passed" in out
    assert "forward mode (mapping_forward_jvp): dy = dw[x], as expected" in out
    assert "opcheck layer::mapping_forward: passed" in out
    assert f"torch.compile(backend='{backend}', fullgraph=True): loss" in out
    assert "mapping_layer: OK" in out


def test_autograd_training_follows_the_norch_article():
    out = run_example("autograd_training.py")
    assert "Linear(in_features=1, out_features=10, bias=True)" in out
    losses = [float(line.rsplit(" ", 1)[1]) for line in out.splitlines() if "Loss:" in line]
    assert len(losses) == 10 and losses[-1] < losses[0]
