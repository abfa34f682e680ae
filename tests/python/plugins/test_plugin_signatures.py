"""Plugin signatures (inspect, help) and python -m isthmus.stubgen on one compiled plugin."""
import ast
import inspect
import io
import os
import pathlib
import pydoc
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import isthmus as q
from isthmus import signatures as sg
from isthmus import stubgen

SOURCE = """
namespace ip = isthmus::plugin;
struct sig_button {
    explicit sig_button(std::string l) : label(std::move(l)) {}
    std::string label;
    ip::event<int64_t> onclick;
    void click() { onclick.fire(1); }
    double twice(double v) const { return 2 * v; }
};
ISTHMUS_PLUGIN(sig_probe, m) {
    m.type<sig_button>("sig_button").ctor<std::string>({"label"})
        .field("label", &sig_button::label).method("click", &sig_button::click)
        .method("twice", &sig_button::twice, {"v"}).event("onclick", &sig_button::onclick);
    m.def("sig_plus", [](double a, double b) { return a + b; }, {"a", "b"}, "Adds a and b.");
    m.def("sig_plus", [](std::complex<double> a, std::complex<double> b) { return a + b; },
          {"a", "b"});
    m.def("sig_mixed", [](ip::vec3 v, int32_t n, std::string s, ip::view<const double, 2> x,
                          bool flag, ip::callback f) { return v; },
          {"v", "lambda", "s", "x", "flag", "f"});
    m.def("sig_unnamed", [](double a, int64_t b) { return a * b; });
    m.def("sig_arity", [](double a) { return a; }, {"a"});
    m.def("sig_arity", [](double a, double b) { return a * b; }, {"a", "b"});
    m.def("sig_label", [](std::shared_ptr<sig_button> b) { return b->label; }, {"b"});
    m.kernel("sig_scale", [](ip::view<const float, 1> x, ip::view<float, 1> y, float s,
                             int64_t i) { y(i) = s * x(i); }, {"x", "y", "s"}, "y = s * x");
}
"""

TENSOR = q.qvalue | np.ndarray
NUMBER = int | float | complex
POS = inspect.Parameter.POSITIONAL_ONLY


@pytest.fixture(scope="module")
def plugin(worker_cache):
    with worker_cache("sig_cache"):
        return q.compile_string("sig_probe", SOURCE, ["-O0"])


def params(fn):
    return [(p.name, p.kind, p.annotation) for p in inspect.signature(fn).parameters.values()]


def test_signature_of_a_function_with_overloads(plugin):
    s = inspect.signature(plugin.sig_plus)
    assert params(plugin.sig_plus) == [("a", POS, float | complex), ("b", POS, float | complex)]
    assert s.return_annotation == NUMBER
    assert plugin.sig_plus.__text_signature__ == "(a, b, /)"
    assert plugin.sig_plus(1.5, 2.25) == 3.75  # positional, as the signature says
    with pytest.raises(TypeError, match="positional"):
        plugin.sig_plus(a=1.0, b=2.0)


def test_signature_maps_every_parameter_type(plugin):
    assert params(plugin.sig_mixed) == [
        ("v", POS, TENSOR | Sequence[float]), ("lambda_", POS, int), ("s", POS, str),
        ("x", POS, TENSOR), ("flag", POS, bool), ("f", POS, Callable[..., Any])]
    # no name list: arg0, arg1, ... (a list of another length fails to load: test_edit_loop.py)
    assert params(plugin.sig_unnamed) == [("arg0", POS, float), ("arg1", POS, int)]
    assert inspect.signature(plugin.sig_mixed).return_annotation is q.qvalue
    assert params(plugin.sig_label) == [("b", POS, q.native_object)]
    assert inspect.signature(plugin.sig_label).return_annotation is str
    assert inspect.signature(plugin.sig_button).return_annotation is q.native_object
    # arguments of the annotated types are accepted
    x = np.random.default_rng(1).standard_normal((3, 4))[:, ::2]
    r = plugin.sig_mixed([1.0, 2.0, 3.0], 7, "s", x, True, lambda: None)
    np.testing.assert_array_equal(np.asarray(r), np.array([1, 2, 3], np.float32))
    assert plugin.sig_label(plugin.sig_button("ok")) == "ok"


def test_overloads_of_different_arity_take_args(plugin):
    s = inspect.signature(plugin.sig_arity)
    assert [(p.name, p.kind) for p in s.parameters.values()] == [
        ("args", inspect.Parameter.VAR_POSITIONAL)]
    assert plugin.sig_arity.__text_signature__ == "(*args)"
    doc = plugin.sig_arity.__doc__
    assert "sig_arity(a: float, /)" in doc and "sig_arity(a: float, b: float, /)" in doc


def test_kernel_signature_leaves_out_the_position(plugin):
    k = plugin.sig_scale
    assert params(k) == [("x", POS, TENSOR), ("y", POS, TENSOR), ("s", POS, float)]
    assert inspect.signature(k).return_annotation is None
    assert k.__text_signature__ == "(x, y, s, /)"
    assert "y = s * x" in k.__doc__ and "q.parallel_do(dims, x, y, s, sig_scale)" in k.__doc__
    x = np.random.default_rng(2).standard_normal(33).astype(np.float32)
    y = np.zeros(33, np.float32)
    q.parallel_do(33, x, y, 1.5, k)
    np.testing.assert_array_equal(y, np.float32(1.5) * x)


def test_text_signature_parses_as_python(plugin):
    for fn in (plugin.sig_plus, plugin.sig_mixed, plugin.sig_scale, plugin.sig_button):
        tree = ast.parse(f"def f{fn.__text_signature__}: pass")
        assert [a.arg for a in tree.body[0].args.posonlyargs] == list(
            inspect.signature(fn).parameters)


def test_doc_and_help_show_both_signatures_and_the_doc(plugin):
    doc = plugin.sig_plus.__doc__
    lines = doc.splitlines()
    assert lines[0] == "sig_plus(a: float, b: float, /) -> int | float | complex"
    assert "    sig_plus(a: float64, b: float64) -> scalar" in lines
    assert lines[-1] == "Adds a and b."
    text = pydoc.render_doc(plugin.sig_plus, renderer=pydoc.plaintext)
    assert "sig_plus(a: float, b: float, /)" in text and "Adds a and b." in text
    text = pydoc.render_doc(plugin.sig_scale, renderer=pydoc.plaintext)
    assert "sig_scale(x: qvalue | np.ndarray" in text
    assert "not an attribute" not in repr(plugin.sig_plus)


def test_other_attributes_still_raise(plugin):
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        plugin.sig_plus.nope
    with pytest.raises(AttributeError, match="nope"):
        plugin.sig_scale.nope
    assert plugin.sig_scale.devices == ("cpu",)


def test_the_proposed_metadata_accessor_is_used_when_present():
    class fake:  # the documented `overloads` accessor (docs/plugins.md, "Tooling")
        signature = "f(x: scalar, n: int) -> tensor"
        overloads = ({"name": "f", "signature": signature, "doc": "from metadata",
                      "result": "tensor",
                      "params": ({"name": "x", "kind": "tensor", "dtype": "float32", "ndim": 0,
                                  "type_name": "scalar"},
                                 {"name": "n", "kind": "int", "dtype": "int32",
                                  "type_name": "int"})},)

    s = sg.signature(fake())
    assert [(p.name, p.annotation) for p in s.parameters.values()] == [("x", TENSOR), ("n", int)]
    assert s.return_annotation is q.qvalue and "from metadata" in sg.docstring(fake())


@pytest.mark.parametrize("text", ["", "f", "f(x)", "f(x: int", "(x: int)"])
def test_parse_signature_rejects_other_text(text):
    with pytest.raises(ValueError, match="not a plugin signature"):
        sg.parse_signature(text)


def test_python_name():
    assert [sg.python_name(n) for n in ["x", "class", "match", "2d", "a b", "", "self"]] == [
        "x", "class_", "match_", "_2d", "a_b", "arg", "self_"]
    assert sg.python_name("x", ["x", "x_2"]) == "x_3"


# ---- stubgen ----------------------------------------------------------------------------------

def stub_tree(plugin):
    text = stubgen.stub_text(plugin)
    return text, ast.parse(text)


def test_stub_matches_the_module(plugin):
    text, tree = stub_tree(plugin)
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    annotated = {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign)}
    public = set(plugin.functions) | set(plugin.kernels)
    assert set(defs) | annotated == public | {"functions", "kernels"}
    assert set(plugin.kernels) <= annotated and isinstance(defs["sig_button"], ast.ClassDef)
    obj = plugin.sig_button("x")
    members = {n.target.id if isinstance(n, ast.AnnAssign) else n.name
               for n in defs["sig_button"].body if isinstance(n, (ast.AnnAssign, ast.FunctionDef))}
    assert members == set(dir(obj)) | {"__init__"}
    for name in set(plugin.functions) - {"sig_button", "sig_arity"}:
        fn = defs[name]
        assert [a.arg for a in fn.args.posonlyargs] == list(
            inspect.signature(getattr(plugin, name)).parameters)
    arity = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "sig_arity"]
    assert [len(n.args.posonlyargs) for n in arity] == [1, 2]
    assert all(ast.unparse(n.decorator_list[0]) == "overload" for n in arity)
    plus = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "sig_plus"]
    assert [ast.get_docstring(n) for n in plus] == ["Adds a and b.", None]
    assert "y = s * x" in text


def test_stubgen_main_writes_the_file(plugin, tmp_path):
    out = tmp_path / "sig_probe.pyi"
    so = plugin.__file__
    o, e = io.StringIO(), io.StringIO()
    assert stubgen.main([so, "-o", str(out)], stdout=o, stderr=e) == 0
    assert out.read_text() == stubgen.stub_text(plugin) and e.getvalue() == ""
    src = tmp_path / "sig_probe.cpp"  # a source file: compile_file, a cache hit here
    src.write_text(SOURCE)
    os.environ["ISTHMUS_CACHE_DIR"], old = str(pathlib.Path(so).parent), os.environ.get(
        "ISTHMUS_CACHE_DIR")
    try:
        o = io.StringIO()
        assert stubgen.main([str(src), "--flag=-O0", "-o", "-"], stdout=o) == 0
    finally:
        if old is None:
            del os.environ["ISTHMUS_CACHE_DIR"]
        else:
            os.environ["ISTHMUS_CACHE_DIR"] = old
    assert o.getvalue() == stubgen.stub_text(plugin)


@pytest.mark.parametrize("argv, message", [
    (["missing.cpp"], "no such source file"),
    (["/nonexistent/libx.so"], "no such shared object"),
    (["no_such_plugin_name"], "cannot load plugin 'no_such_plugin_name'"),
    ([], "required"),
    (["x", "--lang", "fortran"], "invalid choice"),
])
def test_stubgen_errors(argv, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    o, e = io.StringIO(), io.StringIO()
    assert stubgen.main(argv, stdout=o, stderr=e) == 2
    assert message in e.getvalue() and e.getvalue().startswith("isthmus.stubgen: error:")
    assert list(tmp_path.iterdir()) == []


def test_stubgen_python_dash_m_and_mypy(plugin, tmp_path, monkeypatch):
    env = dict(os.environ, PYTHONPATH=str(pathlib.Path(q.__file__).parent.parent))
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    r = subprocess.run([sys.executable, "-m", "isthmus.stubgen", plugin.__file__, "-o",
                        str(stubs / "sig_probe.pyi")], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    ast.parse((stubs / "sig_probe.pyi").read_text())
    api = pytest.importorskip("mypy.api")
    user = tmp_path / "user.py"
    user.write_text("import sig_probe\n"
                    "b = sig_probe.sig_button('x')\n"
                    "s: str = b.label\n"
                    "r = sig_probe.sig_plus(1.0, 2.0)\n"
                    "sig_probe.sig_plus('a', 2.0)\n")
    monkeypatch.setenv("MYPYPATH", os.pathsep.join([str(stubs), env["PYTHONPATH"]]))
    out, err, rc = api.run([str(user), "--no-incremental", "--cache-dir", os.devnull,
                            "--python-executable", sys.executable])
    lines = [ln for ln in out.splitlines() if ": error:" in ln]
    assert len(lines) == 1 and "user.py:5:" in lines[0] and "sig_plus" in lines[0], out


def test_overloads_give_the_descriptor_records(plugin):
    plus = plugin.sig_plus.overloads
    assert [o["signature"] for o in plus] == plugin.sig_plus.signature.splitlines()
    assert plus[0]["doc"] == "Adds a and b." and plus[0]["result"] == "scalar"
    a = plus[0]["params"][0]
    assert (a["name"], a["kind"], a["dtype"], a["type"]) == ("a", "float", "float64", None)
    assert plus[1]["params"][0]["kind"] == "complex"
    mixed = {p["name"]: p for p in plugin.sig_mixed.overloads[0]["params"]}
    assert mixed["v"]["kind"] == "vec" and mixed["v"]["vec_len"] == 3
    assert mixed["lambda"]["kind"] == "int" and mixed["lambda"]["dtype"] == "int32"
    assert mixed["x"]["kind"] == "tensor" and mixed["x"]["ndim"] == 2
    assert mixed["x"]["dtype"] == "float64" and "read" in mixed["x"]["flags"]
    assert mixed["f"]["kind"] == "callback"
    assert plugin.sig_label.overloads[0]["params"][0]["type"] == "sig_button"
    [k] = plugin.sig_scale.overloads
    assert [p["name"] for p in k["params"]] == ["x", "y", "s"] and k["pos_ndim"] == 1
    assert "write" in k["params"][1]["flags"] and k["params"][1]["dtype"] == "float32"
