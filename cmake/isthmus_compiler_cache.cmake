# cmake/isthmus_compiler_cache.cmake: compiles through ccache into one folder, so a second build of the same sources reuses the first one's objects.

# Note [one object for two builds]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The packaging test builds the wheel with pip (tests/python/project/test_install.py): the same
# library sources again, in a second CMake folder. From a clean clone that was about 750 s of
# compiler CPU beside the rest of the suite on CI's two cores, for objects the build under test
# had just made. With ISTHMUS_CCACHE_DIR set (scripts/build sets it to <build>/ccache when ccache
# is installed) every compile goes through ccache into that folder, and the wheel's build names
# the same folder: a source compiled with the same command in both builds is compiled once.
# What makes the commands the same: ccache rewrites absolute paths under the source tree relative
# to the compiling folder (CCACHE_BASEDIR), so both build folders sit directly under the source
# tree; the wheel is built with the same compiler and build type; and no definition that differs
# between the two (the CUDA module's path) is set on a whole target, only on the one source that
# reads it. Depend mode (CCACHE_DEPEND) hashes the sources and the headers the compiler's own
# dependency file lists, so a miss costs no extra preprocessor run. Without ccache, or with the
# variable empty, nothing changes.
set(ISTHMUS_CCACHE_DIR "" CACHE PATH
  "Compile through ccache into this folder (empty: no compiler cache); See Note [one object for two builds]")
if(ISTHMUS_CCACHE_DIR)
  find_program(ISTHMUS_CCACHE_PROGRAM ccache)
  if(ISTHMUS_CCACHE_PROGRAM)
    set(_isthmus_ccache ${CMAKE_COMMAND} -E env "CCACHE_DIR=${ISTHMUS_CCACHE_DIR}"
      "CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}" CCACHE_DEPEND=1 CCACHE_NOHASHDIR=1
      CCACHE_MAXSIZE=4G ${ISTHMUS_CCACHE_PROGRAM})
    set(CMAKE_C_COMPILER_LAUNCHER ${_isthmus_ccache})
    set(CMAKE_CXX_COMPILER_LAUNCHER ${_isthmus_ccache})
  else()
    message(STATUS "isthmus: ISTHMUS_CCACHE_DIR is set but ccache is not installed; compiling without it")
  endif()
endif()
