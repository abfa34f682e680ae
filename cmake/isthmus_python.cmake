# Python and pybind11 for the three Python layers (py_boundary, py_in_cpp, cpp_in_py), found once
# at the top level so that their imported targets are visible in every layer's directory.

# Note [one library, no libpython]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The Python layers are object files added to the shared library `isthmus`; nothing links libpython.
# They see the Python headers through pybind11::module (Python::Module, which on Linux carries
# include directories only), and libisthmus.so keeps its Python symbols undefined: the python3
# process that imports the module supplies them. C++ programs that link `isthmus` get libpython from
# the target's interface instead (top-level CMakeLists.txt), the way pybind11::embed does.
# `-Wl,--no-undefined` must therefore never be set on `isthmus`.
find_package(Python 3.11 REQUIRED COMPONENTS Interpreter Development)
# Linked (through `isthmus`) by targets in other directories: examples/, tests/.
set_property(TARGET Python::Python PROPERTY IMPORTED_GLOBAL TRUE)

if(NOT DEFINED pybind11_DIR AND NOT DEFINED CACHE{pybind11_DIR})
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -m pybind11 --cmakedir
    OUTPUT_VARIABLE _isthmus_pybind11_dir
    OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _isthmus_pybind11_rc)
  if(_isthmus_pybind11_rc EQUAL 0)
    set(pybind11_DIR "${_isthmus_pybind11_dir}" CACHE PATH "pybind11's CMake package directory")
  endif()
endif()
find_package(pybind11 2.12 CONFIG REQUIRED)

execute_process(
  COMMAND "${Python_EXECUTABLE}" -c
    "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))"
  OUTPUT_VARIABLE ISTHMUS_PYTHON_EXT_SUFFIX
  OUTPUT_STRIP_TRAILING_WHITESPACE)
message(STATUS "isthmus: Python module for ${Python_EXECUTABLE} (${Python_VERSION}), "
  "extension suffix ${ISTHMUS_PYTHON_EXT_SUFFIX}, pybind11 ${pybind11_VERSION}")
