# The type stubs cover the whole module, and every public function and method has a docstring.
import ast
import inspect
import pathlib

import isthmus as q

STUB = pathlib.Path(q.__file__).with_name("__init__.pyi")


def stub_names():
    tree = ast.parse(STUB.read_text())
    top, classes = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            top.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            top.add(node.target.id)
        elif isinstance(node, ast.Assign):
            top.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            top.update((a.asname or a.name).split(".")[0] for a in node.names)
        if isinstance(node, ast.ClassDef):
            members = set()
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    members.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    members.add(item.target.id)
            classes[node.name] = members
    return top, classes


def test_every_public_name_has_a_stub():
    top, _ = stub_names()
    missing = sorted(set(q.__all__) - top)
    assert not missing, f"names without a stub in {STUB.name}: {missing}"


def test_every_qvalue_member_has_a_stub():
    _, classes = stub_names()
    members = {n for n in dir(q.qvalue) if not n.startswith("_")}
    missing = sorted(members - classes["qvalue"])
    assert not missing, f"qvalue members without a stub: {missing}"


def test_every_public_callable_has_a_docstring():
    undocumented = []
    for name in q.__all__:
        obj = getattr(q, name)
        if inspect.isclass(obj) and inspect.isdatadescriptor(obj.__dict__.get("__doc__")):
            continue  # per-instance docs (native_function, native_kernel: the plugin's text)
        if callable(obj) and not inspect.getdoc(obj):
            undocumented.append(name)
    for name in dir(q.qvalue):
        if name.startswith("_"):
            continue
        attr = getattr(q.qvalue, name)
        if callable(attr) and not inspect.getdoc(attr):
            undocumented.append(f"qvalue.{name}")
    assert not undocumented, f"no docstring: {undocumented}"
