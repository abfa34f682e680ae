# Ctrl-C and other signal handlers stop long native operations (Note [interrupting long operations]).
import os
import select
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import isthmus as q

PACKAGE_PARENT = os.path.dirname(os.path.dirname(q.__file__))


class Stop(Exception):
    pass


# A child whose parent ignores SIGINT (a background job of a non-interactive shell, as a CI
# runner may be) inherits that, and Python then installs no KeyboardInterrupt handler: the
# children below put Python's handler back so that SIGINT means Ctrl-C whatever started them.
DEFAULT_SIGINT = "signal.signal(signal.SIGINT, signal.default_int_handler)"
# The start of every child program below: Ctrl-C as above, this build's isthmus, initialised.
CHILD_START = textwrap.dedent(f"""\
    import os, signal, sys, time
    {DEFAULT_SIGINT}
    sys.path.insert(0, {PACKAGE_PARENT!r})
    import numpy as np
    import isthmus as q
    q.init("cpu")
    """)


def read_line(p, timeout):
    """The child's next stdout line, stripped; AssertionError after `timeout` s without one."""
    ready, _, _ = select.select([p.stdout], [], [], timeout)
    assert ready, f"no output from the child within {timeout} s"
    return p.stdout.readline().strip()


def interrupt(p, started=None):
    """Sends SIGINT to the child p once it has printed "ready" and `started()` (if given) has
    returned, then checks that it prints "interrupted" within STOP_WITHIN seconds. The caller
    kills p when this fails."""
    assert read_line(p, 120) == "ready"
    if started is not None:
        started()
    t0 = time.perf_counter()
    p.send_signal(signal.SIGINT)
    line = read_line(p, 60)
    delay = time.perf_counter() - t0
    assert line == "interrupted", (line, p.stderr.read() if p.poll() is not None else "")
    assert delay < STOP_WITHIN, f"KeyboardInterrupt came {delay:.2f} s after SIGINT"


@pytest.fixture
def sigusr1_raises_stop():
    """SIGUSR1 raises Stop in the main thread; the previous handler comes back afterwards."""
    def handler(signum, frame):
        raise Stop("stopped by SIGUSR1")
    previous = signal.signal(signal.SIGUSR1, handler)
    yield
    signal.signal(signal.SIGUSR1, previous)


# How soon a stop must come. A 6144^3 product is about 2^38 multiply-adds (over 10 s on two
# idle cores) and runs in panels of 2^32 with a poll between them (see Note
# [interruptible products]: about a second each); on a quiet machine a stop comes within one panel. 6 s leaves
# room for a parallel test run (a pytest worker per core, Note [parallel pytest]) and for ASan,
# and is still well inside one product.
STOP_WITHIN = 6.0


def signal_later(delay, sig=signal.SIGUSR1):
    """Sends `sig` to this process after `delay` seconds; returns a list that gets the time."""
    sent = []

    def fire():
        sent.append(time.perf_counter())
        os.kill(os.getpid(), sig)
    threading.Timer(delay, fire).start()
    return sent


def test_interrupted_maps_to_keyboard_interrupt():
    with pytest.raises(KeyboardInterrupt, match="stop"):
        q._isthmus._raise_error("interrupted", "stop")


def test_a_signal_handler_stops_a_long_matmul(sigusr1_raises_stop):
    # 6144^3 float64: seconds on a few cores; the handler's exception comes out of the call
    a = q.value(np.random.default_rng(0).standard_normal((6144, 6144)))
    before = np.asarray(a).copy()
    sent = signal_later(0.3)
    with pytest.raises(Stop, match="SIGUSR1"):
        for _ in range(50):  # a fast machine may finish one product before the signal
            q.matmul(a, a)
    delay = time.perf_counter() - sent[0]
    assert delay < STOP_WITHIN, f"the product stopped {delay:.2f} s after the signal"
    np.testing.assert_array_equal(np.asarray(a), before)
    np.testing.assert_allclose(np.asarray(q.matmul(a[:3, :4], a[:4, :2])),
                               before[:3, :4] @ before[:4, :2])


def test_a_handler_that_does_not_raise_lets_the_operation_finish():
    hits = []
    previous = signal.signal(signal.SIGUSR1, lambda s, f: hits.append(s))
    try:
        a = q.value(np.random.default_rng(1).standard_normal((3072, 3072)).astype(np.float32))
        signal_later(0.05)
        c = q.matmul(a, a)
        for _ in range(100):  # the handler runs by the time the product or Python polls
            if hits:
                break
            time.sleep(0.01)
        assert hits == [signal.SIGUSR1]
        ref = np.asarray(a, dtype=np.float64) @ np.asarray(a, dtype=np.float64)
        np.testing.assert_allclose(np.asarray(c), ref, rtol=1e-3, atol=1e-2)
    finally:
        signal.signal(signal.SIGUSR1, previous)


def test_a_signal_handler_stops_a_long_kernel_launch(tmp_path, monkeypatch, sigusr1_raises_stop):
    monkeypatch.setenv("ISTHMUS_CACHE_DIR", str(tmp_path / "cache"))
    q.compile_string("interrupt_kernels", """
    #include <cmath>
    namespace ip = isthmus::plugin;
    ISTHMUS_PLUGIN(interrupt_kernels, m) {
        m.kernel("slow_sum", [](ip::view<const float, 1> x, ip::view<float, 1> y, int64_t i) {
            float acc = 0;
            for (int j = 0; j < 4000; ++j) acc += std::sin(x(i) + float(j));
            y(i) = acc;
        }, {"x", "y"});
    }
    """)
    n = 20_000_000  # 8e10 sines: minutes if nothing stops it
    x = np.linspace(0, 1, n, dtype=np.float32)
    y = q.zeros(n)
    sent = signal_later(0.3)
    with pytest.raises(Stop):
        q.parallel_do(n, x, y, q.slow_sum)
    delay = time.perf_counter() - sent[0]
    assert delay < STOP_WITHIN, f"the launch stopped {delay:.2f} s after the signal"
    np.testing.assert_array_equal(x, np.linspace(0, 1, n, dtype=np.float32))  # input unchanged
    small = q.zeros(8)
    q.parallel_do(8, x[:8], small, q.slow_sum)  # the runtime and the plugin still work
    want = [sum(np.sin(np.float32(v) + np.float32(j)) for j in range(4000)) for v in x[:2]]
    np.testing.assert_allclose(np.asarray(small)[:2], want, rtol=1e-3)


def test_ctrl_c_in_a_child_process_raises_keyboard_interrupt():
    # The scenario: a process doing a long product gets SIGINT (what Ctrl-C sends)
    code = CHILD_START + textwrap.dedent(f"""
        a = q.value(np.random.default_rng(2).standard_normal((6144, 6144)))
        before = np.asarray(a).copy()
        print("ready", flush=True)
        try:
            for _ in range(50):
                q.matmul(a, a)
            print("finished", flush=True)
        except KeyboardInterrupt:
            assert (np.asarray(a) == before).all()
            assert float(np.asarray(q.value([1.0, 2.0]).sum())) == 3.0
            print("interrupted", flush=True)
    """)
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        interrupt(p, started=lambda: time.sleep(0.5))
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, err


def test_ctrl_c_stops_a_compile_and_leaves_the_cache_usable(tmp_path):
    # See Note [interruptible compiles]: SIGINT during a cold compile_string stops the compiler (a
    # stand-in that would take a minute), raises KeyboardInterrupt within about a second, leaves
    # no partial entry behind, and the same entry then compiles with the real compiler.
    slow = tmp_path / "slow-cxx"
    pidfile = tmp_path / "compiler.pid"
    slow.write_text(f"#!/bin/sh\necho $$ > {pidfile}\nexec sleep 60\n")
    slow.chmod(0o755)
    cache = tmp_path / "cache"
    code = CHILD_START + textwrap.dedent(f"""
        src = '''
        ISTHMUS_PLUGIN(interrupted_compile, m) {{
            m.def("twice", [](double x) {{ return 2 * x; }}, {{"x"}});
        }}
        '''
        os.environ["CXX"] = {str(slow)!r}
        print("ready", flush=True)
        try:
            q.compile_string("interrupted_compile", src)
            print("finished", flush=True)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
        os.environ["CXX"] = "g++"
        lib = q.compile_string("interrupted_compile", src)
        print("compiled", lib.twice(21.0), flush=True)
    """)
    env = dict(os.environ, ISTHMUS_CACHE_DIR=str(cache))
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    def compiler_started():
        deadline = time.perf_counter() + 30
        while not pidfile.exists() and time.perf_counter() < deadline:
            time.sleep(0.05)
        assert pidfile.exists(), "the stand-in compiler never started"

    try:
        interrupt(p, started=compiler_started)
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    compiler_pid = int(pidfile.read_text())
    with pytest.raises(ProcessLookupError):  # the stand-in was stopped and reaped
        os.kill(compiler_pid, 0)
    assert out.strip() == "compiled 42.0", (out, err)
    assert p.returncode == 0, err
    leftovers = [f.name for f in cache.rglob("*") if ".tmp." in f.name or ".log." in f.name]
    assert leftovers == []


@pytest.mark.skipif(shutil.which("g++") is None, reason="the precompiled layer is built by GCC")
def test_ctrl_c_while_the_precompiled_layer_builds(tmp_path):
    # See Note [precompiled plugin header]: the second cold compile builds the header and the
    # support object at once (two compilers). SIGINT then stops both (stand-ins that would take a
    # minute), raises KeyboardInterrupt, and leaves neither half of the layer nor the plugin's entry
    # behind; the next cold compile builds the layer for real and uses it.
    slow_flag = tmp_path / "slow"
    slow_flag.write_text("")
    pidfile = tmp_path / "layer.pids"
    cxx = tmp_path / "gxx-slow-layer"
    cxx.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        if [ -e {slow_flag} ]; then
          for a in "$@"; do
            case "$a" in
              c++-header|*.support.cpp) echo $$ >> {pidfile}; exec sleep 60;;
            esac
          done
        fi
        exec {shutil.which("g++")} "$@"
        """))
    cxx.chmod(0o755)
    cache = tmp_path / "cache"
    code = CHILD_START + textwrap.dedent(f"""
        src = '''
        ISTHMUS_PLUGIN(NAME, m) {{
            m.def("NAME_twice", [](double x) {{ return 2 * x; }}, {{"x"}});
        }}
        '''
        def compile(name):
            return getattr(q.compile_string(name, src.replace("NAME", name)), name + "_twice")
        assert compile("layer_a")(1.0) == 2.0  # the first cold compile: marks the key
        print("ready", flush=True)
        try:
            compile("layer_b")  # builds the layer: both builds sleep
            print("finished", flush=True)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
        sys.stdin.readline()  # the parent looks at the cache, then lets the builds run for real
        print("compiled", compile("layer_c")(21.0), flush=True)
    """)
    env = dict(os.environ, ISTHMUS_CACHE_DIR=str(cache), CXX=str(cxx))
    env.pop("ISTHMUS_PLUGIN_PCH", None)
    p = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    def both_builds_started():
        deadline = time.perf_counter() + 60
        while time.perf_counter() < deadline and (
                not pidfile.exists() or len(pidfile.read_text().split()) < 3):
            time.sleep(0.05)
        # the full header, the kernel half's and the support object
        assert len(pidfile.read_text().split()) == 3, "the three layer builds never started"

    try:
        interrupt(p, started=both_builds_started)
        for pid in map(int, pidfile.read_text().split()):  # every stand-in stopped and reaped
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
        parts = sorted(f.name.split(".", 1)[1] for f in cache.glob("isthmus-pch-*"))
        assert parts == ["lock", "seen"], parts
        assert not list(cache.glob("layer_b-*.cpp")) and not list(cache.glob("layer_b-*.so"))
        assert [f.name for f in cache.iterdir() if ".tmp." in f.name or ".log." in f.name] == []
        slow_flag.unlink()
        out, err = p.communicate("go\n", timeout=300)
    finally:
        if p.poll() is None:
            p.kill()
    assert out.strip() == "compiled 42.0", (out, err)
    assert p.returncode == 0, err
    assert len(list(cache.glob("isthmus-pch-*.o"))) == 1  # built by layer_c's compile
