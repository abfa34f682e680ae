# Finds the BLAS behind the CPU matmul (ISTHMUS_BLAS = AUTO|SCIPY|SYSTEM) as the INTERFACE
# target isthmus_blas: cblas.h's directory, the library, and the symbol prefix and name that
# core/src/cpu/matmul_blas.hpp uses. Also sets ISTHMUS_BLAS_RPATH: where an installed
# libisthmus finds the library at run time (empty for a library on the system path).
#
# Note [which blas]
# ~~~~~~~~~~~~~~~~~
# The CPU matmul links scipy-openblas32, the OpenBLAS build that NumPy and SciPy ship on PyPI
# (DYNAMIC_ARCH: kernels for every x86 generation, chosen at load time from CPUID; 32-bit integers;
# every symbol prefixed `scipy_`). A distribution's OpenBLAS is only as new as the distribution:
# Debian 12's 0.3.21 has fallen back to its generic "Prescott" kernels on a Zen 4 host, 4.6x slower
# than NumPy on a 2048 float32 matmul (docs/threads.md). The pip package is asked for its paths
# through the configured Python, installed by scripts/deps and listed as a dependency of the wheel
# (pyproject.toml), so a newer CPU needs only a newer wheel. AUTO takes it when it is installed and
# otherwise falls back, with a warning, to the system OpenBLAS (find_package(BLAS), BLA_VENDOR
# OpenBLAS); SCIPY requires it; SYSTEM never looks for it.
set(ISTHMUS_BLAS "AUTO" CACHE STRING
  "BLAS for the CPU matmul: AUTO (scipy-openblas32 when its Python package is installed, else the system OpenBLAS), SCIPY or SYSTEM")
set_property(CACHE ISTHMUS_BLAS PROPERTY STRINGS AUTO SCIPY SYSTEM)
if(NOT ISTHMUS_BLAS MATCHES "^(AUTO|SCIPY|SYSTEM)$")
  message(FATAL_ERROR "ISTHMUS_BLAS must be AUTO, SCIPY or SYSTEM, not '${ISTHMUS_BLAS}'")
endif()

add_library(isthmus_blas INTERFACE)
set(ISTHMUS_BLAS_RPATH "")
set(_isthmus_blas_rc 1)
if(NOT ISTHMUS_BLAS STREQUAL "SYSTEM")
  find_package(Python 3 COMPONENTS Interpreter QUIET)
  if(Python_EXECUTABLE)
    execute_process(COMMAND "${Python_EXECUTABLE}" -c
      "import scipy_openblas32 as b; print(b.get_include_dir()); print(b.get_lib_dir()); print(b.get_library(fullname=True)); print(b.__version__)"
      OUTPUT_VARIABLE _isthmus_blas_out ERROR_VARIABLE _isthmus_blas_err
      RESULT_VARIABLE _isthmus_blas_rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  endif()
  if(NOT _isthmus_blas_rc EQUAL 0 AND ISTHMUS_BLAS STREQUAL "SCIPY")
    string(STRIP "${_isthmus_blas_err}" _isthmus_blas_err)
    string(REGEX MATCH "[^\n]*$" _isthmus_blas_err "${_isthmus_blas_err}") # the error line
    message(FATAL_ERROR "ISTHMUS_BLAS=SCIPY but the Python package scipy-openblas32 cannot be "
      "imported by '${Python_EXECUTABLE}' (${_isthmus_blas_err}); install it with scripts/deps "
      "or `python3 -m pip install scipy-openblas32`")
  endif()
endif()

if(_isthmus_blas_rc EQUAL 0)
  string(REPLACE "\n" ";" _isthmus_blas_out "${_isthmus_blas_out}")
  list(GET _isthmus_blas_out 0 _isthmus_blas_include)
  list(GET _isthmus_blas_out 1 _isthmus_blas_libdir)
  list(GET _isthmus_blas_out 2 _isthmus_blas_libname)
  list(GET _isthmus_blas_out 3 _isthmus_blas_version)
  target_include_directories(isthmus_blas INTERFACE "${_isthmus_blas_include}")
  target_link_libraries(isthmus_blas INTERFACE "${_isthmus_blas_libdir}/${_isthmus_blas_libname}")
  target_compile_definitions(isthmus_blas INTERFACE ISTHMUS_BLAS_PREFIX=scipy_
    "ISTHMUS_BLAS_NAME=\"scipy-openblas32\"")
  # Note [BLAS jobs on the OpenMP pool] (core/src/cpu/matmul_blas.cpp) needs 0.3.28.
  if(_isthmus_blas_version VERSION_GREATER_EQUAL 0.3.28)
    target_compile_definitions(isthmus_blas INTERFACE ISTHMUS_BLAS_THREADS_CALLBACK=1)
  else()
    message(WARNING "isthmus: scipy-openblas32 ${_isthmus_blas_version} is older than 0.3.28; "
      "OpenBLAS keeps its own thread pool (docs/threads.md)")
  endif()
  # A wheel's package loads the library through scipy_openblas32 before the extension (Note [BLAS
  # through its package] in cpp_in_py/isthmus/__init__.py); its RUNPATH to the sibling folder in
  # site-packages is only the fallback. A build tree or CMake install, used from C++ without
  # Python, keeps using the package it was built against (docs/building.md, "Install layouts").
  if(SKBUILD)
    set(ISTHMUS_BLAS_RPATH "$ORIGIN/../scipy_openblas32/lib")
  else()
    set(ISTHMUS_BLAS_RPATH "${_isthmus_blas_libdir}")
  endif()
  message(STATUS "isthmus: BLAS scipy-openblas32 ${_isthmus_blas_version} (${_isthmus_blas_libdir})")
else()
  if(ISTHMUS_BLAS STREQUAL "AUTO")
    message(WARNING "isthmus: the Python package scipy-openblas32 is not installed for "
      "'${Python_EXECUTABLE}'; the CPU matmul falls back to the system OpenBLAS, which may not "
      "know this CPU and run its generic kernels (several times slower; docs/threads.md). "
      "Install it with scripts/deps or `python3 -m pip install scipy-openblas32` and "
      "reconfigure, or pass -DISTHMUS_BLAS=SYSTEM to silence this.")
  endif()
  set(BLA_VENDOR OpenBLAS)
  find_package(BLAS REQUIRED)
  find_path(ISTHMUS_CBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas REQUIRED)
  target_include_directories(isthmus_blas INTERFACE "${ISTHMUS_CBLAS_INCLUDE_DIR}")
  target_link_libraries(isthmus_blas INTERFACE BLAS::BLAS)
  target_compile_definitions(isthmus_blas INTERFACE "ISTHMUS_BLAS_NAME=\"OpenBLAS (system)\"")
  message(STATUS "isthmus: BLAS the system OpenBLAS (${BLAS_LIBRARIES})")
endif()
