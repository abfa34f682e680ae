# help() and inspect.signature on the module's functions: every public function has a real
# signature (See Note [module functions as builtins]) that agrees with the stub, and a docstring;
# the native ones are plain builtins of isthmus (no pybind11 class in help()), and still behave
# as before (keywords, errors, pickling).
import ast
import inspect
import pathlib
import pickle
import pydoc
import re
import types

import numpy as np
import pytest

import isthmus as q

STUB = pathlib.Path(q.__file__).with_name("__init__.pyi")
GENERIC = "(*args, **kwargs)"


def public_functions():
    out = []
    for name in q.__all__:
        obj = getattr(q, name)
        if isinstance(obj, (types.BuiltinFunctionType, types.FunctionType)):
            out.append(name)
    return out


def test_there_are_many_public_functions():
    names = public_functions()
    assert len(names) > 150, names
    assert {"parallel_do", "compile_string", "compile_file", "import_native", "zeros", "init",
            "sqrt", "add", "imread", "imshow"} <= set(names)


@pytest.mark.parametrize("name", public_functions())
def test_every_public_function_has_a_signature_and_a_doc(name):
    fn = getattr(q, name)
    sig = inspect.signature(fn)  # ValueError when there is none
    assert str(sig) != GENERIC, f"{name}{sig}"
    doc = inspect.getdoc(fn)
    assert doc and doc.strip(), name
    # no pybind11 rendering left at its head ("zeros(*args, dtype: object = None) -> ...")
    assert not re.match(r"\w+\(.*\) -> ", doc), f"{name}: {doc!r}"
    assert "isthmus._isthmus" not in doc and "pybind11" not in doc, f"{name}: {doc!r}"
    if isinstance(fn, types.BuiltinFunctionType):
        assert fn.__module__ in ("isthmus", "isthmus._isthmus"), name
        # a builtin of the module (or of none), not a method of pybind11's function record
        assert fn.__self__ is q._isthmus or fn.__self__ is None, name


def _stub_functions():
    """{name: [(parameter names, kinds)]} of the stub's module-level defs (one per overload)."""
    tree = ast.parse(STUB.read_text())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            a = node.args
            params = [(p.arg, "POSITIONAL_ONLY") for p in a.posonlyargs]
            params += [(p.arg, "POSITIONAL_OR_KEYWORD") for p in a.args]
            if a.vararg:
                params.append((a.vararg.arg, "VAR_POSITIONAL"))
            params += [(p.arg, "KEYWORD_ONLY") for p in a.kwonlyargs]
            if a.kwarg:
                params.append((a.kwarg.arg, "VAR_KEYWORD"))
            out.setdefault(node.name, []).append(params)
    return out


def _runtime_params(fn):
    return [(p.name, p.kind.name) for p in inspect.signature(fn).parameters.values()]


def _callable_the_same_way(stub, runtime):
    """The stub's parameters are the runtime's, or the runtime's with positional-only ones the
    stub left positional-or-keyword (a stub may promise less, never more)."""
    if [n for n, _ in stub] != [n for n, _ in runtime]:
        return False
    for (_, sk), (_, rk) in zip(stub, runtime):
        if sk != rk and not (sk == "POSITIONAL_ONLY" and rk == "POSITIONAL_OR_KEYWORD"):
            return False
    return True


@pytest.mark.parametrize("name", [n for n in public_functions()
                                  if isinstance(getattr(q, n), types.BuiltinFunctionType)])
def test_native_signatures_agree_with_the_stub(name):
    stub = _stub_functions().get(name)
    assert stub, f"{name} has no def in {STUB.name}"
    runtime = _runtime_params(getattr(q, name))
    if len(stub) == 1:
        assert _callable_the_same_way(stub[0], runtime), (name, stub[0], runtime)
    else:  # overloads: together they take what the function takes, and each is a subset
        assert any(len(s) == len(runtime) for s in stub), (name, stub, runtime)


def test_parallel_do_help():
    assert str(inspect.signature(q.parallel_do)) == "(dims, /, *args)"
    text = pydoc.render_doc(q.parallel_do, renderer=pydoc.plaintext)
    assert "parallel_do(dims, /, *args)" in text
    assert "pybind11" not in text and "method of" not in text, text
    assert "in module isthmus" in text, text
    doc = q.parallel_do.__doc__
    for word in ("dims", "kernel", "Returns", "Raises", "TypeError"):
        assert word in doc, word


def test_compile_string_help_says_kernels_become_attributes():
    sig = inspect.signature(q.compile_string)
    assert list(sig.parameters) == ["name", "source", "flags", "lang", "cuda_compiler", "tiered"]
    assert sig.parameters["flags"].default == []
    assert sig.parameters["lang"].kind is inspect.Parameter.KEYWORD_ONLY
    assert sig.parameters["lang"].default is None
    assert sig.parameters["tiered"].kind is inspect.Parameter.KEYWORD_ONLY
    assert sig.parameters["tiered"].default is True
    doc = q.compile_string.__doc__
    assert "attribute of isthmus" in doc and "q.addk" in doc, doc
    assert "CompileError" in doc and "ValueError" in doc and "Returns" in doc
    text = pydoc.render_doc(q.compile_string, renderer=pydoc.plaintext)
    assert ("compile_string(name, source, flags=[], *, lang=None, cuda_compiler=None, "
            "tiered=True)") in text
    assert "pybind11" not in text
    for fn in (q.import_native, q.compile_file):
        assert "attribute" in fn.__doc__, fn


def test_signatures_of_functions_taking_sizes():
    assert str(inspect.signature(q.zeros)) == "(*sizes, dtype=None)"
    assert str(inspect.signature(q.rand)) == "(*sizes, size=None, dtype=None)"
    assert str(inspect.signature(q.print)) == "(*values, **kwargs)"
    assert str(inspect.signature(q.placement)) == "(*values)"
    assert str(inspect.signature(q.sqrt)) == "(x)"
    assert str(inspect.signature(q.init)) == (
        "(device='cpu', precision='float32', load_compiler=False, *, loadCompiler=None)")


def test_calls_behave_as_before():
    q.init("cpu")
    np.testing.assert_array_equal(np.asarray(q.zeros(2, 3, dtype="float64")), np.zeros((2, 3)))
    np.testing.assert_array_equal(np.asarray(q.zeros([2, 3], dtype="int32")),
                                  np.zeros((2, 3), np.int32))
    a = np.random.default_rng(0).standard_normal((4, 5))
    np.testing.assert_allclose(np.asarray(q.add(a, 1.0)), a + 1)
    np.testing.assert_allclose(np.asarray(q.sum(a, axis=1, keepdims=True)),
                               a.sum(axis=1, keepdims=True))
    np.testing.assert_allclose(np.asarray(q.sum(a[:, ::2], axis=0)), a[:, ::2].sum(axis=0))
    assert q.sum(np.zeros((0,))).item() == 0
    # keyword errors and pybind11's argument errors come through unchanged
    with pytest.raises(TypeError, match="incompatible function arguments"):
        q.sum(a, axis=0, nonsense=1)
    with pytest.raises(TypeError, match="expected at least dims and a kernel"):
        q.parallel_do()
    with pytest.raises(TypeError, match="the last argument must be a native kernel"):
        q.parallel_do(3, q.zeros(3), 1.0)
    x = q.value([1.0, 2.0])
    with pytest.raises(TypeError):
        q.parallel_do(2, x, "not a kernel")
    np.testing.assert_array_equal(np.asarray(x), [1.0, 2.0])  # unchanged


def test_functions_pickle_as_module_globals():
    for fn in (q.sqrt, q.zeros, q.parallel_do, q.compile_string):
        assert pickle.loads(pickle.dumps(fn)) is fn


def test_helpers_still_read_docs():
    # The op table's docs are the functions' docs after the signature line.
    row = q._op_table()[0]
    fn = getattr(q, row["python"][0])
    assert fn.__doc__.startswith(row["doc"].rstrip(".")), fn.__doc__
    assert fn.__text_signature__ == "(x)"


def test_the_checked_class_has_a_signature():
    import inspect
    assert str(inspect.signature(q.checked)) == "(enabled: bool = True)"
    with q.checked(enabled=False):
        assert not q.checked.active()
