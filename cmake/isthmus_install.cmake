# Install rules and the exported CMake package: libisthmus, the public headers, and
# isthmusConfig.cmake so that outside projects do `find_package(isthmus)` and link
# `isthmus::isthmus`. Included at the end of the top-level CMakeLists.txt, after every layer.
include(CMakePackageConfigHelpers)

set(ISTHMUS_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/isthmus" CACHE STRING
    "Where isthmusConfig.cmake is installed, relative to the prefix")
mark_as_advanced(ISTHMUS_INSTALL_CMAKEDIR)

# Note [installed interface]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~
# In the build tree `isthmus` reaches the runtime through the static isthmus_core archive, linked
# whole-archive under $<BUILD_INTERFACE:...>; the installed target is the shared library alone, so
# isthmus_core never appears in the export set. What the archive brought to build-tree users must be
# restated for installed users here: the include directory and C++20 are on `isthmus` itself
# (core/CMakeLists.txt); the threads dependency of the public headers (std::mutex in storage.hpp) is
# added below, and isthmusConfig.cmake finds Threads before it loads the targets. OpenMP is a
# private dependency of the .so (libgomp is a DT_NEEDED entry) and is not part of the interface.
target_link_libraries(isthmus INTERFACE Threads::Threads)

# Note [libpython hook]
# ~~~~~~~~~~~~~~~~~~~~~
# A C++ host that embeds Python must link libpython itself, while the same libisthmus.so imported as
# a Python module must not carry it (DESIGN.md, "One library, two directions"). So libisthmus.so
# never links libpython; the exported isthmus::isthmus adds it for C++ hosts, the way
# pybind11::embed does. The Python layer (cpp_in_py/CMakeLists.txt, whose bindings leave Python
# symbols undefined in the library) turns this on by setting ISTHMUS_EXPORT_LIBPYTHON to ON and
# ISTHMUS_EXPORT_PYTHON_VERSION to the X.Y it was built against, before this file is included;
# isthmusConfig.cmake then finds that Python's Development.Embed component and appends
# Python::Python to isthmus::isthmus. (In the build tree, `isthmus` carries
# $<BUILD_INTERFACE:Python::Python> itself.)
if(NOT DEFINED ISTHMUS_EXPORT_LIBPYTHON)
  set(ISTHMUS_EXPORT_LIBPYTHON OFF)
endif()
if(NOT DEFINED ISTHMUS_EXPORT_PYTHON_VERSION)
  set(ISTHMUS_EXPORT_PYTHON_VERSION "")
endif()

install(TARGETS isthmus
  EXPORT isthmusTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT isthmus_runtime
    NAMELINK_COMPONENT isthmus_development
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT isthmus_development
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT isthmus_runtime
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# Public headers: every layer keeps its public headers in <layer>/include/isthmus/, all of
# which install into <prefix>/include/isthmus/. Layers that do not exist yet are skipped.
foreach(_layer core plugins py_boundary py_in_cpp cpp_in_py)
  if(IS_DIRECTORY "${PROJECT_SOURCE_DIR}/${_layer}/include/isthmus")
    install(DIRECTORY "${PROJECT_SOURCE_DIR}/${_layer}/include/isthmus"
      DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
      COMPONENT isthmus_development
      FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h")
  endif()
endforeach()

install(EXPORT isthmusTargets
  NAMESPACE isthmus::
  FILE isthmusTargets.cmake
  DESTINATION ${ISTHMUS_INSTALL_CMAKEDIR}
  COMPONENT isthmus_development)

configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/isthmusConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/isthmusConfig.cmake"
  INSTALL_DESTINATION ${ISTHMUS_INSTALL_CMAKEDIR})
# 0.x: a minor release may break the API, so only the same X.Y satisfies a request.
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/isthmusConfigVersion.cmake"
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  "${PROJECT_BINARY_DIR}/isthmusConfig.cmake"
  "${PROJECT_BINARY_DIR}/isthmusConfigVersion.cmake"
  DESTINATION ${ISTHMUS_INSTALL_CMAKEDIR}
  COMPONENT isthmus_development)
