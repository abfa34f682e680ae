# Wheel layout (pip install ., scikit-build-core sets SKBUILD): the package directory `isthmus/`
# in site-packages holds the library itself under the extension-module name, the Python files,
# the stubs and the public headers. Included by the top-level CMakeLists.txt right after it
# defines the library (cpp_in_py/ then stages no package).

# Note [wheel library name]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# In a wheel the one library *is* the extension module, so it is built under that name (no lib
# prefix) and installed once. It has no VERSION or SOVERSION (the top level sets them only outside
# a wheel): even set to "", they made CMake install a second copy named `<module>.so.` with the
# module a link to it. C++ hosts use the CMake install (cmake --install, find_package(isthmus))
# rather than the wheel.
set_target_properties(isthmus PROPERTIES
  OUTPUT_NAME "_isthmus"
  PREFIX ""
  SUFFIX "${ISTHMUS_PYTHON_EXT_SUFFIX}")
# The library finds libgomp on the system path, scipy-openblas32 loaded by the package (Note [BLAS
# through its package]; else in its sibling package folder, cmake/isthmus_blas.cmake), and
# anything installed beside it (the CUDA backend module, SLEEF) in its own directory.
set_property(TARGET isthmus APPEND PROPERTY INSTALL_RPATH "$ORIGIN")

install(TARGETS isthmus LIBRARY DESTINATION isthmus COMPONENT isthmus_python)
# The CUDA backend module beside it, where isthmus::cuda::init looks first (docs/cuda.md).
if(TARGET isthmus_cuda)
  install(TARGETS isthmus_cuda LIBRARY DESTINATION isthmus COMPONENT isthmus_python)
endif()

# Note [SLEEF in the wheel]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# Debian ships SLEEF only as a shared library (libsleef-dev has no libsleef.a) and pip cannot
# install it, so a wheel that named it as an outside dependency ran only where libsleef3 was
# installed. The wheel carries the copy the build linked, under its SONAME in the package folder,
# where the module's $ORIGIN RUNPATH finds it before any system copy: `pip install .` gives a
# package that needs nothing pip cannot install but glibc's libmvec and GCC's libgomp (what every
# GCC-built OpenMP program needs; auditwheel repair copies libgomp in for other machines). SLEEF's
# licence (Boost Software License 1.0) allows redistributing it in binary form. A static SLEEF
# (built by hand) is linked in and has nothing to copy.
get_property(_isthmus_sleef GLOBAL PROPERTY ISTHMUS_SLEEF_LINKED)
if(_isthmus_sleef MATCHES "\\.so(\\.[0-9.]+)?$")
  get_filename_component(_isthmus_sleef_file "${_isthmus_sleef}" REALPATH)
  execute_process(COMMAND "${CMAKE_OBJDUMP}" -p "${_isthmus_sleef_file}"
    OUTPUT_VARIABLE _isthmus_sleef_dynamic ERROR_QUIET)
  if(_isthmus_sleef_dynamic MATCHES "SONAME +([^ \r\n]+)")
    set(_isthmus_sleef_soname "${CMAKE_MATCH_1}")
  else()
    get_filename_component(_isthmus_sleef_soname "${_isthmus_sleef}" NAME)
  endif()
  install(FILES "${_isthmus_sleef_file}" DESTINATION isthmus RENAME "${_isthmus_sleef_soname}"
    COMPONENT isthmus_python)
endif()

file(GLOB _isthmus_wheel_py CONFIGURE_DEPENDS
  "${PROJECT_SOURCE_DIR}/cpp_in_py/isthmus/*.py" "${PROJECT_SOURCE_DIR}/cpp_in_py/isthmus/*.pyi")
file(WRITE "${PROJECT_BINARY_DIR}/py.typed" "")
install(FILES ${_isthmus_wheel_py} "${PROJECT_BINARY_DIR}/py.typed"
  DESTINATION isthmus COMPONENT isthmus_python)
# Subpackages (isthmus/array_api/): their Python files, in their own folders.
file(GLOB _isthmus_wheel_subpackages CONFIGURE_DEPENDS
  "${PROJECT_SOURCE_DIR}/cpp_in_py/isthmus/*/__init__.py")
foreach(_init IN LISTS _isthmus_wheel_subpackages)
  get_filename_component(_dir "${_init}" DIRECTORY)
  install(DIRECTORY "${_dir}" DESTINATION isthmus COMPONENT isthmus_python
    FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
endforeach()
foreach(_layer core plugins py_boundary py_in_cpp cpp_in_py)
  if(IS_DIRECTORY "${PROJECT_SOURCE_DIR}/${_layer}/include/isthmus")
    install(DIRECTORY "${PROJECT_SOURCE_DIR}/${_layer}/include/isthmus"
      DESTINATION isthmus/include COMPONENT isthmus_python
      FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h")
  endif()
endforeach()
