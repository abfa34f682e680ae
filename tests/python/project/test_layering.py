"""Include direction inside core: the op layer (core/src/ops) is device-agnostic and reaches a
backend only through the backend contract (isthmus/backend.hpp), so no file in core/src/ops
includes a header of a backend's folder (core/src/cpu, core/src/cuda); the result-dtype rules
of the ops live with the ops (ops/elementwise_types.hpp, ops/reduce_types.hpp), not in a backend;
and no backend defines a function of the op layer (the op layer reaches the CPU backend through the
backend registry, core/src/backend_registry.hpp).
"""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[3]
OPS = ROOT / "core" / "src" / "ops"
BACKENDS = [ROOT / "core" / "src" / "cpu", ROOT / "core" / "src" / "cuda"]
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"]+)[>"]', re.M)
OPS_NAMESPACE = re.compile(r"^\s*namespace\s+(?:isthmus::ops|ops)\b", re.M)
RESULT_RULE = re.compile(r"^\s*dtype\s+\w+_(?:result|work)_dtype\s*\(", re.M)


def backend_includes(text):
    """The includes in `text` that name a file of a backend's folder."""
    bad = []
    for name in INCLUDE.findall(text):
        rel = name
        while rel.startswith("../"):
            rel = rel[3:]
        if rel.startswith(("cpu/", "cuda/")) or "/src/cpu/" in name or "/src/cuda/" in name:
            bad.append(name)
    return bad


def sources(folder, suffixes):
    return sorted(p for p in folder.rglob("*") if p.suffix in suffixes and p.is_file())


def test_the_scanner_sees_backend_includes():
    sample = ('#include "cpu/backend.hpp"\n  #  include "../cuda/kernels.hpp"\n'
              '#include "../../core/src/cpu/reduce.hpp"\n#include "ops/dispatch.hpp"\n'
              '#include "isthmus/backend.hpp"\n#include <vector>\n// #include "cpu/x.hpp" said\n')
    assert backend_includes(sample) == ["cpu/backend.hpp", "../cuda/kernels.hpp",
                                        "../../core/src/cpu/reduce.hpp"]
    assert RESULT_RULE.search("dtype var_result_dtype(dtype dt) {")
    assert RESULT_RULE.search("\ndtype reduce_result_dtype(backend::reduce_kind kind, dtype dt);")
    assert not RESULT_RULE.search("    ISTHMUS_ASSERT(out.dtype() == ops::var_result_dtype(x));")


def test_ops_include_no_backend_header():
    files = sources(OPS, {".cpp", ".hpp"})
    assert len(files) > 10, f"expected the op layer's sources in {OPS}"
    bad = {}
    for path in files:
        found = backend_includes(path.read_text(encoding="utf-8"))
        if found:
            bad[str(path.relative_to(ROOT))] = found
    assert not bad, ("core/src/ops must not include backend headers (use the backend contract, "
                     f"isthmus/backend.hpp, or a core-level header): {bad}")


def test_result_dtype_rules_live_with_the_ops():
    defined_in_ops = [p for p in sources(OPS, {".cpp", ".hpp"})
                      if RESULT_RULE.search(p.read_text(encoding="utf-8"))]
    assert defined_in_ops, "expected the reduction dtype rules in core/src/ops"
    in_backends = [str(p.relative_to(ROOT)) for folder in BACKENDS
                   for p in sources(folder, {".cpp", ".hpp", ".cu", ".cuh"})
                   if RESULT_RULE.search(p.read_text(encoding="utf-8"))]
    assert not in_backends, f"result-dtype rules declared or defined in a backend: {in_backends}"


def test_no_backend_defines_a_function_of_the_op_layer():
    assert OPS_NAMESPACE.search("namespace isthmus::ops {") and OPS_NAMESPACE.search("namespace ops {")
    assert not OPS_NAMESPACE.search("namespace isthmus::opsx {")
    bad = [str(p.relative_to(ROOT)) for folder in BACKENDS
           for p in sources(folder, {".cpp", ".hpp", ".cu", ".cuh"})
           if OPS_NAMESPACE.search(p.read_text(encoding="utf-8"))]
    assert not bad, f"backend files that open the op layer's namespace: {bad}"
