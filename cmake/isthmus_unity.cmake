# isthmus_unity_batches(): sources that share heavy headers compiled in unity batches.

# Note [unity batches]
# ~~~~~~~~~~~~~~~~~~~~
# CI builds everything twice (normal and sanitizer builds) on two cores, and most of a source's
# compile time is the headers it shares with its neighbours, parsed and partly instantiated again
# in each: pybind11's (about 10 s of g++ -O3 per source, half parsing and half the ~550 inline
# functions each object emits again), the runtime's own (core/src, core/src/ops, plugins/src: 4-8
# s each, most of it <isthmus/...>, Boost and the standard library) and doctest's with the host's
# in the plugin and embedding suites. A precompiled header saves only the parse; unity batches pay
# the headers once per batch. Measured for pybind11: 213 s of a build -> 190 s with a precompiled
# header, 72 s in batches of six; the runtime's 51 sources 227 s -> 60 s in batches of eight, the
# plugin host's 103 s -> 44 s (g++ -O3; docs/testing.md, "Time in CI"). The CPU kernels
# (core/src/cpu) stay one per object: each is minutes of template instantiation that two cores
# build best side by side; so does the core suite (tests/core), whose files bring helpers of the
# same names into file scope. The sources keep their own includes and keep file-local names
# distinct, so they still compile alone (ISTHMUS_UNITY=OFF, which a developer editing one file may
# prefer: a batch recompiles together). Sources with their own compile options or definitions, and
# the suites' main.cpp (doctest's implementation, which must see its define before the header),
# are compiled alone.
option(ISTHMUS_UNITY "Compile sources that share heavy headers in unity batches" ON)

# isthmus_unity_batches(target size): compiles the target's sources in unity batches of `size`
# (See Note [unity batches]).
function(isthmus_unity_batches target size)
  if(ISTHMUS_UNITY)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${size})
  endif()
endfunction()
