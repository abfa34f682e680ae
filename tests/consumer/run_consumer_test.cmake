# The CTest test `consumer_install`, run as `cmake -P`: installs the isthmus build tree into a
# scratch prefix, configures and builds tests/consumer against that prefix with the same
# generator and compiler, and runs the result. Everything it writes stays under WORK_DIR (in
# the build tree); the source tree is never touched.
#
# Inputs (-D): ISTHMUS_BUILD_DIR, ISTHMUS_SOURCE_DIR, CONSUMER_SOURCE_DIR, WORK_DIR, GENERATOR,
# and optionally MAKE_PROGRAM, GENERATOR_PLATFORM, GENERATOR_TOOLSET, CXX_COMPILER, BUILD_TYPE.
cmake_minimum_required(VERSION 3.24)

foreach(_var ISTHMUS_BUILD_DIR ISTHMUS_SOURCE_DIR CONSUMER_SOURCE_DIR WORK_DIR GENERATOR)
  if(NOT DEFINED ${_var} OR "${${_var}}" STREQUAL "")
    message(FATAL_ERROR "run_consumer_test.cmake: -D${_var}=... is required")
  endif()
endforeach()
if(NOT BUILD_TYPE)
  set(BUILD_TYPE Release)
endif()

set(_prefix "${WORK_DIR}/prefix")
set(_build "${WORK_DIR}/build")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
# A DESTDIR from the caller's environment would send the install somewhere else.
unset(ENV{DESTDIR})

function(run_step name)
  message(STATUS "consumer_install: ${name}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  if(NOT _rc EQUAL 0)
    message("${_out}")
    message(FATAL_ERROR "consumer_install: ${name} failed (${_rc})")
  endif()
  set(_step_output "${_out}" PARENT_SCOPE)
endfunction()

# 1. Install the build tree into the scratch prefix.
run_step("install into ${_prefix}"
  "${CMAKE_COMMAND}" --install "${ISTHMUS_BUILD_DIR}" --prefix "${_prefix}" --config "${BUILD_TYPE}")

# The installed package must stand on its own: no path into the source or build tree.
file(GLOB_RECURSE _cmake_files "${_prefix}/*.cmake")
if(NOT _cmake_files)
  message(FATAL_ERROR "consumer_install: no CMake package files were installed under ${_prefix}")
endif()
foreach(_f IN LISTS _cmake_files)
  file(READ "${_f}" _text)
  foreach(_tree ISTHMUS_SOURCE_DIR ISTHMUS_BUILD_DIR)
    string(FIND "${_text}" "${${_tree}}" _at)
    if(NOT _at EQUAL -1)
      message(FATAL_ERROR "consumer_install: ${_f} refers to the ${_tree} (${${_tree}})")
    endif()
  endforeach()
  if(_text MATCHES "isthmus_core")
    message(FATAL_ERROR "consumer_install: ${_f} mentions isthmus_core, which is not installed")
  endif()
endforeach()

# 1b. The Python package beside the headers (Note [installed Python package]), when the build
# has the Python layers (PYTHON_EXECUTABLE and PYTHON_PACKAGE_DIR given): its stubs, its marker,
# the module link, and an import from the prefix alone that runs a computation and a plugin-free
# check of the module's signatures.
if(PYTHON_EXECUTABLE AND PYTHON_PACKAGE_DIR)
  set(_pydir "${_prefix}/${PYTHON_PACKAGE_DIR}")
  if(IS_ABSOLUTE "${PYTHON_PACKAGE_DIR}")
    message(STATUS "consumer_install: the Python package goes to an absolute folder; not checked")
  else()
    foreach(_f __init__.py __init__.pyi py.typed stubgen.py array_api/__init__.py)
      if(NOT EXISTS "${_pydir}/isthmus/${_f}")
        message(FATAL_ERROR "consumer_install: ${_pydir}/isthmus/${_f} was not installed")
      endif()
    endforeach()
    file(GLOB _module_link "${_pydir}/isthmus/_isthmus*")
    list(LENGTH _module_link _n)
    if(NOT _n EQUAL 1 OR NOT IS_SYMLINK "${_module_link}")
      message(FATAL_ERROR "consumer_install: expected one link _isthmus<suffix> in "
        "${_pydir}/isthmus, found '${_module_link}'")
    endif()
    file(REAL_PATH "${_module_link}" _module_real)
    file(REAL_PATH "${_prefix}" _prefix_real)
    string(FIND "${_module_real}" "${_prefix_real}/" _at)
    if(NOT _at EQUAL 0 OR NOT _module_real MATCHES "/libisthmus[^/]*$")
      message(FATAL_ERROR "consumer_install: ${_module_link} leads to ${_module_real}, not to the "
        "installed libisthmus under ${_prefix}")
    endif()
    set(_check [=[
import inspect, pathlib, sys
import isthmus as q
prefix = pathlib.Path(sys.argv[1]).resolve()
assert prefix in pathlib.Path(q.__file__).resolve().parents, q.__file__
assert prefix in pathlib.Path(q._isthmus.__file__).resolve().parents, q._isthmus.__file__
q.init()
assert q.sum(q.value([1.0, 2.0, 3.0])).item() == 6.0
assert str(inspect.signature(q.parallel_do)) == "(dims, /, *args)", inspect.signature(q.parallel_do)
print("installed isthmus", q.__version__, "imports from", pathlib.Path(q.__file__).parent)
]=])
    file(WRITE "${WORK_DIR}/check_python.py" "${_check}")
    # PYTHON_PRELOAD: the ASan runtime in the sanitizer build, whose installed package is the
    # instrumented library (See Note [Python under ASan])
    set(_preload)
    if(PYTHON_PRELOAD)
      set(_preload "LD_PRELOAD=${PYTHON_PRELOAD}" "ASAN_OPTIONS=detect_leaks=0" "PYTHONMALLOC=malloc")
    endif()
    run_step("import the installed Python package"
      "${CMAKE_COMMAND}" -E env --unset=PYTHONHOME "PYTHONPATH=${_pydir}" ${_preload}
      "${PYTHON_EXECUTABLE}" -s "${WORK_DIR}/check_python.py" "${_prefix}")
    message("${_step_output}")
  endif()
endif()

# 2. Configure the consumer against the prefix, as a user would (CMAKE_PREFIX_PATH).
set(_configure "${CMAKE_COMMAND}" -S "${CONSUMER_SOURCE_DIR}" -B "${_build}" -G "${GENERATOR}"
  "-DCMAKE_PREFIX_PATH=${_prefix}"
  "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}"
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
if(MAKE_PROGRAM)
  list(APPEND _configure "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(GENERATOR_PLATFORM)
  list(APPEND _configure -A "${GENERATOR_PLATFORM}")
endif()
if(GENERATOR_TOOLSET)
  list(APPEND _configure -T "${GENERATOR_TOOLSET}")
endif()
if(CXX_COMPILER)
  list(APPEND _configure "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
run_step("configure tests/consumer" ${_configure})

# The package must have come from the scratch prefix, not from some other installation.
file(STRINGS "${_build}/CMakeCache.txt" _dir_line REGEX "^isthmus_DIR:")
string(REGEX REPLACE "^isthmus_DIR:[A-Z]+=" "" _found_dir "${_dir_line}")
file(REAL_PATH "${_prefix}" _real_prefix)
if(_found_dir STREQUAL "")
  message(FATAL_ERROR "consumer_install: isthmus_DIR not set after configuring the consumer")
endif()
file(REAL_PATH "${_found_dir}" _real_found)
string(FIND "${_real_found}" "${_real_prefix}/" _at)
if(NOT _at EQUAL 0)
  message(FATAL_ERROR "consumer_install: found isthmus in ${_found_dir}, not under ${_prefix}")
endif()

# 3. Build it.
run_step("build tests/consumer" "${CMAKE_COMMAND}" --build "${_build}" --config "${BUILD_TYPE}")

# 4. Run it. Single-config generators put it at the top of the build dir, multi-config ones
# in a folder named after the configuration.
set(_exe "${_build}/consumer${CMAKE_EXECUTABLE_SUFFIX}")
if(NOT EXISTS "${_exe}")
  set(_exe "${_build}/${BUILD_TYPE}/consumer${CMAKE_EXECUTABLE_SUFFIX}")
endif()
run_step("run ${_exe}" "${_exe}")
message("${_step_output}")
message(STATUS "consumer_install: passed")
