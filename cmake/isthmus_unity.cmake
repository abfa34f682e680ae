# isthmus_python_sources_batched(): the Python-boundary sources compiled in unity batches.

# Note [pybind11 batches]
# ~~~~~~~~~~~~~~~~~~~~~~~
# pybind11's headers cost about 10 s of g++ -O3 in every source that includes them, half of it
# parsing and half generating the ~550 inline functions each object emits again (the dispatcher,
# initialize_generic, the error fetchers). py_boundary/, cpp_in_py/ and py_in_cpp/ have 32 such
# sources, built twice in CI (normal and sanitizer builds) on two cores: 213 s of a build. A
# precompiled header saved only the parse (190 s); unity batches of six sources pay the headers once
# per batch (72 s). The sources keep their own includes and keep file-local names in distinct
# namespaces, so they still compile alone (ISTHMUS_UNITY=OFF, which a developer editing one file may
# prefer: a batch recompiles together).
option(ISTHMUS_UNITY "Compile the Python-boundary sources in unity batches" ON)

# isthmus_python_sources_batched(target): compiles a target whose sources include pybind11 as
# unity batches of six sources (Note [pybind11 batches]).
function(isthmus_python_sources_batched target)
  if(ISTHMUS_UNITY)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 6)
  endif()
endfunction()
