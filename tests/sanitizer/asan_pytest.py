"""pytest plugin for the sanitizer gate (scripts/sanitize loads it with -p asan_pytest): skips the
few tests that cannot run under AddressSanitizer, and a few compile-heavy ones whose native code
other tests already take through ASan, each with its reason. Nothing else changes.

Only limits of the sanitizer and of CI's time belong here, never a bug: a test that fails under
ASan because isthmus misbehaves is a finding to fix (docs/testing.md).
"""

import pytest

# Why torch.compile's inductor backend cannot run here (tests/python/project/test_examples.py uses
# aot_eager for the same reason).
INDUCTOR = ("inductor compiles the C++ it generates with $CXX, which scripts/sanitize sets to "
            "the instrumented plugin compiler (tests/sanitizer/cxx), whose objects inductor's "
            "own subprocesses cannot load; the custom ops run under ASan with the eager and "
            "aot_eager backends")

# test id (path relative to the repository root, "::", the test name with its parameters, or
# without them for every parametrisation; in RUN_IN_THE_NORMAL_SUITE also a whole file) -> why it
# cannot run under ASan, or why it runs in the normal suite only.
CANNOT_RUN = {
    "tests/python/py_boundary/test_bad_input_regressions.py::test_too_big_cell_raises":
        "asks for a 96 TiB cell to get MemoryError from std::bad_alloc; ASan's operator new "
        "aborts the process instead of throwing, whatever allocator_may_return_null says",
    "tests/python/cpp_in_py/test_torch_ops.py::test_compile_fullgraph_same_results_as_eager[inductor]":
        INDUCTOR,
}

# Note [sanitizer time budget]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The sanitizer run leaves out tests that spend their time in compilers (NVRTC and the
# instrumented g++ stand-in, a minute under ASan) or in a training loop, where the native code
# they reach runs under ASan in other tests; the normal suite runs them (docs/testing.md, "Time
# in CI").
NVRTC_ELSEWHERE = ("compiles its own NVRTC plugins (tens of seconds under ASan); NVRTC's compile "
                   "path runs under ASan in this file's shared module (rt_image) and in ctest")
RUN_IN_THE_NORMAL_SUITE = {
    "tests/python/plugins/test_compile_nvrtc.py::test_damaged_device_code_is_rebuilt": NVRTC_ELSEWHERE,
    "tests/python/plugins/test_compile_nvrtc.py::test_unfenced_host_code_gets_a_hint": NVRTC_ELSEWHERE,
    "tests/python/plugins/test_compile_nvrtc.py::test_two_processes_compiling_the_same_cuda_source_both_"
    "succeed": NVRTC_ELSEWHERE,
    "tests/python/plugins/test_compile_nvrtc.py::test_nvrtc_kernels_run_on_the_cpu_and_the_gpu":
        NVRTC_ELSEWHERE,
    "tests/python/plugins/test_compile_nvrtc.py::test_flags_reach_both_passes": NVRTC_ELSEWHERE,
    "tests/python/plugins/test_compile_notice.py":
        "checks where the compile notice is printed or logged in fresh processes (nine plugin "
        "compiles); the notice's native code runs under ASan in every other compile",
    "tests/python/plugins/test_plugin_signatures.py::test_stubgen_python_dash_m_and_mypy":
        "runs mypy (pure Python) over a generated stub; the stub generator's native calls run "
        "under ASan in the other tests of the file",
    "tests/python/plugins/test_edit_loop.py::test_a_parameter_name_list_of_the_wrong_length_is_refused":
        "two compiles of plugins that fail to define themselves; that path runs under ASan in "
        "test_plugin_checks.py::test_a_plugin_that_fails_to_define_itself_is_refused",
    "tests/python/cpp_in_py/test_array_api_jacobi.py":
        "242 eliminations composed of the array API namespace's functions, pure Python over ops "
        "that the other array API files and the core suites run under ASan (80 s of worker time "
        "there)",
    "tests/python/plugins/test_compile_pch_clang.py":
        "Clang's precompiled layer in fresh caches (compiles that parse the layer inline, 4 s "
        "each under ASan); every other compile under ASan uses the layer prebuilt for the "
        "gate's Clang, and the retry's native path is the normal compile's",
    "tests/python/cpp_in_py/test_processes.py::test_pool_workers_compute[spawn]":
        "the same pool work as [fork] in fresh interpreters (17 s each under ASan); a fresh "
        "interpreter's import and init run under ASan in many other tests",
    "tests/python/cpp_in_py/test_processes.py::test_pool_workers_compute[forkserver]":
        "as [spawn]",
    "tests/python/project/test_examples.py::test_mapping_layer_gradcheck_and_training":
        "trains a torch model for seconds under ASan; the plugin custom ops and autograd it "
        "uses run under ASan in test_torch_ops.py",
    "tests/python/cpp_in_py/test_interrupt.py::test_ctrl_c_while_the_precompiled_layer_builds":
        "two compilers building the precompiled layer (35 s under ASan); the interrupt's native "
        "path runs under ASan in test_ctrl_c_stops_a_compile_and_leaves_the_cache_usable",
}
# The trust check refuses a planted library for four reasons, one plugin compile each (10-15 s
# under ASan); the symlink case runs under ASan, the others in the normal suite.
TRUST = ("tests/python/plugins/test_cache_trust.py::"
         "test_a_foreign_so_with_a_matching_meta_is_rebuilt_not_loaded")
for _case in ("hard link-.so has 2 hard links", "writable-.so is writable by group or others",
              "foreign owner-.so has a foreign owner (uid 65534)"):
    RUN_IN_THE_NORMAL_SUITE[f"{TRUST}[{_case}]"] = (
        "the same trust check as the [symlink] case, on another of its four refusals")

# Whole files that cannot run under ASan, with the reason.
CANNOT_RUN_FILES = {
    "tests/python/cpp_in_py/test_scale_out.py":
        "starts Dask and Ray clusters: their worker processes and Ray's own C++ servers (raylet, "
        "GCS) inherit LD_PRELOAD of the ASan runtime, which is meant for instrumented programs; "
        "the isthmus code these tests reach (pickling) runs under ASan in test_pickle.py",
    "tests/python/project/test_doc_snippets.py":
        "runs the documentation's snippets in fresh interpreters and compiles its C++ programs "
        "against the normal build's library; its Dask and Ray page starts clusters (as "
        "test_scale_out.py); the code the snippets reach runs under ASan in the other tests",
    "tests/python/cpp_in_py/test_stub_typing.py":
        "runs mypy, a pure-Python type checker, over the stub and small source texts: no native "
        "isthmus code runs, and mypy under the preloaded ASan runtime only costs CI time",
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        key = item.nodeid.split("[", 1)[0]
        reason = (CANNOT_RUN.get(item.nodeid) or CANNOT_RUN.get(key)
                  or CANNOT_RUN_FILES.get(key.split("::", 1)[0])
                  or RUN_IN_THE_NORMAL_SUITE.get(item.nodeid)
                  or RUN_IN_THE_NORMAL_SUITE.get(key)
                  or RUN_IN_THE_NORMAL_SUITE.get(key.split("::", 1)[0]))
        if reason:
            item.add_marker(pytest.mark.skip(reason="under ASan: " + reason))
