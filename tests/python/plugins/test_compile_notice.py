"""A slow compile says what it compiles and where it caches (Note [compile notices])."""
import fcntl
import logging
import os
import threading

import pytest

import isthmus as q

SOURCE = """
ISTHMUS_PLUGIN({name}, m) {{
    m.def("{fn}", [](double x) {{ return x + {k}; }}, {{"x"}});
}}
"""


@pytest.fixture
def cache(plugin_cache, monkeypatch):
    monkeypatch.setenv("ISTHMUS_COMPILE_NOTICE_SECONDS", "0")  # every cold compile reports
    return plugin_cache


def notices(caplog):
    return [r for r in caplog.records if r.name == "isthmus.compile"]


def test_a_cold_compile_logs_once_and_a_cached_load_never(cache, caplog):
    caplog.set_level(logging.INFO, logger="isthmus.compile")
    src = SOURCE.format(name="cn_logged", fn="cn_plus1", k=1)
    mod = q.compile_string("cn_logged", src)
    assert mod.cn_plus1(1.0) == 2.0
    [rec] = notices(caplog)
    assert rec.levelno == logging.INFO
    assert rec.plugin == "cn_logged" and rec.language == "C++" and rec.waiting is False
    assert os.path.dirname(rec.library) == str(cache) and os.path.isfile(rec.library)
    assert "compiling plugin 'cn_logged'" in rec.getMessage() and rec.library in rec.getMessage()
    caplog.clear()
    assert q.compile_string("cn_logged", src) is mod  # the cache: no word
    assert notices(caplog) == []


def test_a_quick_compile_below_the_threshold_says_nothing(cache, caplog, monkeypatch):
    monkeypatch.setenv("ISTHMUS_COMPILE_NOTICE_SECONDS", "600")
    caplog.set_level(logging.INFO, logger="isthmus.compile")
    q.compile_string("cn_quiet", SOURCE.format(name="cn_quiet", fn="cn_plus2", k=2))
    assert notices(caplog) == []


def test_waiting_for_another_process_lock_is_reported(cache, caplog):
    caplog.set_level(logging.INFO, logger="isthmus.compile")
    src = SOURCE.format(name="cn_waits", fn="cn_plus3", k=3)
    mod = q.compile_string("cn_waits", src)
    [rec] = notices(caplog)
    so = rec.library
    caplog.clear()
    # Remove the entry and hold its lock as a compiling process would: the next compile waits.
    stem = so[: -len(".so")]
    os.remove(so)
    os.remove(stem + ".meta")
    fd = os.open(stem + ".lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    done = threading.Event()
    result = {}

    def compile_it():
        try:
            result["mod"] = q.compile_string("cn_waits", src)
        finally:
            done.set()

    t = threading.Thread(target=compile_it)
    t.start()
    try:
        for _ in range(500):  # the notice comes from the wait loop, within 10 ms steps
            if notices(caplog) or done.is_set():
                break
            threading.Event().wait(0.01)
        waits = [r for r in notices(caplog) if r.waiting]
        assert len(waits) == 1 and "waiting for another process" in waits[0].getMessage()
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
        t.join(120)
    assert done.is_set() and result["mod"].cn_plus3(1.0) == 4.0
    assert len(notices(caplog)) == 1  # one word per compile: the wait, not the compile after
    assert mod is not None


def notices_in_fresh_process(run_python, tmp_path, name, setup):
    """Compiles plugin `name` cold in a fresh process after the lines `setup`; returns the
    stderr lines that announce its compile."""
    code = f"""
import logging, os
os.environ["ISTHMUS_CACHE_DIR"] = {str(tmp_path / "cache")!r}
os.environ["ISTHMUS_COMPILE_NOTICE_SECONDS"] = "0"
{setup}
import isthmus as q
q.init("cpu")
q.compile_string({name!r}, {SOURCE.format(name=name, fn=name + "_plus4", k=4)!r})
print(q.{name}_plus4(1.0))
"""
    res = run_python(code)
    assert res.stdout.strip() == "5.0"
    return [line for line in res.stderr.splitlines() if f"compiling plugin '{name}'" in line]


@pytest.mark.parametrize("verbose", ["1", "0"])
def test_without_logging_configured_the_word_goes_to_stderr(run_python, tmp_path, verbose):
    said = notices_in_fresh_process(run_python, tmp_path, "cn_stderr",
                                    f'os.environ["ISTHMUS_VERBOSE"] = {verbose!r}')
    assert len(said) == (1 if verbose == "1" else 0), said


@pytest.mark.parametrize("setup, where", [
    ("logging.basicConfig()", "stderr"),  # WARNING: an INFO record would vanish
    ("logging.basicConfig(level=logging.INFO, format='LOG %(name)s %(message)s')", "log"),
    ("logging.basicConfig(level=logging.INFO); "
     "logging.getLogger('isthmus.compile').setLevel(logging.ERROR)", "stderr"),
    ("logging.getLogger().addHandler(logging.NullHandler())", "stderr"),
])
def test_the_notice_reaches_the_user_whatever_logging_says(run_python, tmp_path, setup, where):
    said = notices_in_fresh_process(run_python, tmp_path, "cn_cfg", setup)
    assert len(said) == 1, said  # once, by the record or by the direct line
    assert said[0].startswith("LOG isthmus.compile") == (where == "log"), said
