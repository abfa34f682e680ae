# ISTHMUS_SANITIZE: AddressSanitizer + UndefinedBehaviorSanitizer build, also fit for libFuzzer.
#
# Note [sanitizer build]
# ~~~~~~~~~~~~~~~~~~~~~~
# With ISTHMUS_SANITIZE=ON every target of this project (the core and plugin archives,
# libisthmus.so, the test executables, the test plugins, the fuzz targets) is compiled with
# ASan and UBSan, and the first UBSan report aborts (-fno-sanitize-recover=all), so a test that
# triggers one fails. Clang only (16 or newer: the tests capture structured bindings in lambdas,
# which clang 14 refuses): it is also compiled with -fsanitize=fuzzer-no-link (coverage
# counters and comparison tracing, whose callbacks the ASan runtime stubs out), so the same
# build links the libFuzzer targets under tests/fuzz (ISTHMUS_FUZZ, on by default here) and
# CI compiles the library once for both gates. scripts/sanitize configures it (RelWithDebInfo
# at -O1 with line tables, CUDA, benchmarks and examples off) and runs the suites in it.
#
# Note [one ASan runtime]
# ~~~~~~~~~~~~~~~~~~~~~~~
# libisthmus.so leaves its __asan_* symbols to the process. python3 is not built with ASan, so
# it gets the shared runtime preloaded (LD_PRELOAD, ISTHMUS_ASAN_RUNTIME below). Executables
# link that same shared runtime (-shared-libasan, found through their rpath), so every process
# has one and the same: a sanitized C++ host started from the sanitized python3
# (tests/py_in_cpp_venv) inherits the LD_PRELOAD, which next to a static copy would abort
# ("incompatible ASan runtimes"). The libFuzzer targets keep the static runtime (target property
# ISTHMUS_STATIC_ASAN), since libFuzzer wants the runtime first in the link order.
#
# Note [Python under ASan]
# ~~~~~~~~~~~~~~~~~~~~~~~~
# Leak detection is off in Python processes: CPython, NumPy and torch keep interned objects,
# module state and caches alive until exit on purpose, which LeakSanitizer reports by the
# thousand. Leaks are caught by the C++ suites (LSan on) and by tests/python/core/test_stress.py
# (memory over 1e5 create/export cycles, normal build). PYTHONMALLOC=malloc sends Python's own
# objects through ASan's allocator, so a use-after-free of a PyObject is caught as well.
option(ISTHMUS_SANITIZE "Build with AddressSanitizer + UBSan (clang; also enables the fuzz targets)" OFF)
cmake_dependent_option(ISTHMUS_FUZZ "Build the libFuzzer targets in tests/fuzz" ON
  "ISTHMUS_SANITIZE" OFF)

if(ISTHMUS_SANITIZE)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang" OR NOT CMAKE_C_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "ISTHMUS_SANITIZE needs clang for C and C++ (libFuzzer, the shared ASan "
      "runtime): configure with -DCMAKE_C_COMPILER=clang-16 -DCMAKE_CXX_COMPILER=clang++-16")
  endif()
  if(CMAKE_CXX_COMPILER_VERSION VERSION_LESS 16)
    message(FATAL_ERROR "ISTHMUS_SANITIZE needs clang 16 or newer (found "
      "${CMAKE_CXX_COMPILER_VERSION}): the tests capture structured bindings in lambdas")
  endif()
  execute_process(
    COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libclang_rt.asan-${CMAKE_SYSTEM_PROCESSOR}.so
    OUTPUT_VARIABLE _rt OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT IS_ABSOLUTE "${_rt}" OR NOT EXISTS "${_rt}")
    message(FATAL_ERROR "ISTHMUS_SANITIZE: the shared ASan runtime was not found (${_rt}); on "
      "Debian install libclang-rt-16-dev")
  endif()
  get_filename_component(_rtdir "${_rt}" DIRECTORY)
  set(ISTHMUS_ASAN_RUNTIME "${_rt}" CACHE INTERNAL "the shared ASan runtime python3 preloads")
  # The symbolizer of the same LLVM, for file:line in reports (scripts/sanitize and scripts/fuzz
  # export it as ASAN_SYMBOLIZER_PATH).
  get_filename_component(_cxx "${CMAKE_CXX_COMPILER}" REALPATH)
  get_filename_component(_cxxdir "${_cxx}" DIRECTORY)
  find_program(ISTHMUS_LLVM_SYMBOLIZER llvm-symbolizer HINTS "${_cxxdir}" NO_CACHE)
  set(ISTHMUS_LLVM_SYMBOLIZER "${ISTHMUS_LLVM_SYMBOLIZER}" CACHE INTERNAL "llvm-symbolizer")

  set(ISTHMUS_SANITIZE_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all
    -fno-omit-frame-pointer)
  # -Wno-unknown-warning-option: isthmus_warnings() spells GCC's -Wshadow=local.
  add_compile_options(${ISTHMUS_SANITIZE_FLAGS} -fsanitize=fuzzer-no-link
    $<$<COMPILE_LANGUAGE:C,CXX>:-Wno-unknown-warning-option>)
  # See Note [one ASan runtime]: the shared runtime for executables but the fuzz targets.
  set(_exe "$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>")
  set(_static "$<BOOL:$<TARGET_PROPERTY:ISTHMUS_STATIC_ASAN>>")
  add_link_options(${ISTHMUS_SANITIZE_FLAGS}
    "$<$<AND:${_exe},$<NOT:${_static}>>:-shared-libasan;-Wl,-rpath,${_rtdir}>")

  message(STATUS "isthmus: sanitizer build (ASan + UBSan, fuzzer coverage), runtime ${_rt}")
endif()

# isthmus_sanitize_python_test(<test> [PRELOAD]): in the sanitizer build, runs a CTest test
# whose process hosts Python (python3 itself, or a C++ program embedding it) the way
# Note [Python under ASan] says: leak detection off, Python's objects through ASan's allocator,
# and with PRELOAD (python3, not built with ASan) the shared runtime preloaded. Elsewhere it
# does nothing. scripts/sanitize and scripts/fuzz set up pytest the same way.
function(isthmus_sanitize_python_test test)
  if(NOT ISTHMUS_SANITIZE)
    return()
  endif()
  set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT_MODIFICATION
    "ASAN_OPTIONS=string_append::detect_leaks=0" "PYTHONMALLOC=set:malloc")
  if("PRELOAD" IN_LIST ARGN)
    set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT_MODIFICATION
      "LD_PRELOAD=set:${ISTHMUS_ASAN_RUNTIME}")
  endif()
endfunction()

# Note [sanitizer bindings at -O0]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The Python layers (py_boundary, cpp_in_py, py_in_cpp) are pybind11 templates instantiated for
# every binding; under ASan at -O1 their unity files took 218 s of clang, two fifths of the
# sanitizer build, and 2.2x less at -O0. ASan and UBSan check every access and operation at any
# optimisation level, and the Python suites' time is in the interpreter and the kernels, not in the
# binding glue, so in that build they compile at -O0 (as the CPU kernels do:
# Note [sanitizer kernels at -O0] in core/CMakeLists.txt).
function(isthmus_sanitize_at_o0 target)
  if(ISTHMUS_SANITIZE)
    target_compile_options(${target} PRIVATE -O0)
  endif()
endfunction()
