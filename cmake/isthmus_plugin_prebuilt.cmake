# The prebuilt plugin author layer: the precompiled header and support object a plain
# compile_string uses, built with the library and installed beside it (Note [prebuilt plugin
# layer] in plugins/src/precompiled_header.cpp). Included from plugins/CMakeLists.txt.
option(ISTHMUS_PREBUILT_PLUGIN_LAYER
  "Build the plugin author layer with the library, so the first compile_string has it" ON)

# The compiler command plugins will compile with ($CXX when they do): the layer is built for it, as
# compile_string would build it. Empty: $CXX at build time, else g++ (compile_string's default).
# The sanitizer build names its instrumented plugin compiler (scripts/sanitize).
set(ISTHMUS_PLUGIN_LAYER_CXX "" CACHE STRING
  "The C++ compiler command the prebuilt plugin layer is for (default: $CXX, else g++)")

if(ISTHMUS_PREBUILT_PLUGIN_LAYER)
  set(_isthmus_layer_dir "${CMAKE_CURRENT_BINARY_DIR}/isthmus-plugin-layer")
  # The build-time step: the same code computes the request of compile_string and of this tool.
  add_executable(isthmus_plugin_layer "${CMAKE_CURRENT_SOURCE_DIR}/prebuilt/isthmus_plugin_layer.cpp")
  target_include_directories(isthmus_plugin_layer PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}/src")
  target_link_libraries(isthmus_plugin_layer PRIVATE isthmus_plugins)
  isthmus_warnings(isthmus_plugin_layer)
  # Where a build-tree library looks for it (an installed one looks beside itself).
  set_property(SOURCE "${CMAKE_CURRENT_SOURCE_DIR}/src/precompiled_header.cpp" APPEND PROPERTY
    COMPILE_DEFINITIONS "ISTHMUS_PLUGIN_PREBUILT_DIR=\"${_isthmus_layer_dir}\"")

  set(_isthmus_layer_env "")
  if(ISTHMUS_PLUGIN_LAYER_CXX)
    set(_isthmus_layer_env ${CMAKE_COMMAND} -E env "CXX=${ISTHMUS_PLUGIN_LAYER_CXX}")
  endif()
  file(GLOB _isthmus_layer_headers CONFIGURE_DEPENDS
    "${CMAKE_CURRENT_SOURCE_DIR}/include/isthmus/plugin*.h*"
    "${CMAKE_CURRENT_SOURCE_DIR}/include/isthmus/plugin/*.hpp")
  add_custom_command(
    OUTPUT "${CMAKE_CURRENT_BINARY_DIR}/isthmus-plugin-layer.stamp"
    COMMAND ${_isthmus_layer_env} $<TARGET_FILE:isthmus_plugin_layer> "${_isthmus_layer_dir}"
    COMMAND ${CMAKE_COMMAND} -E touch "${CMAKE_CURRENT_BINARY_DIR}/isthmus-plugin-layer.stamp"
    DEPENDS isthmus_plugin_layer ${_isthmus_layer_headers}
    COMMENT "Prebuilding the plugin author layer (precompiled header, support object)"
    VERBATIM)
  add_custom_target(isthmus_plugin_layer_prebuilt ALL
    DEPENDS "${CMAKE_CURRENT_BINARY_DIR}/isthmus-plugin-layer.stamp")

  # Installed beside the library: <libdir>/isthmus-plugin-layer/, or isthmus/isthmus-plugin-layer/
  # in a wheel (whose library is isthmus/_isthmus*.so).
  if(SKBUILD)
    set(_isthmus_layer_destination isthmus/isthmus-plugin-layer)
    set(_isthmus_layer_component isthmus_python)
  else()
    set(_isthmus_layer_destination ${CMAKE_INSTALL_LIBDIR}/isthmus-plugin-layer)
    set(_isthmus_layer_component isthmus_runtime)
  endif()
  # (OPTIONAL: a build of other targets alone has not run the step; the lazy layer serves then)
  install(DIRECTORY "${_isthmus_layer_dir}/" DESTINATION ${_isthmus_layer_destination}
    COMPONENT ${_isthmus_layer_component} OPTIONAL FILE_PERMISSIONS OWNER_READ OWNER_WRITE
    GROUP_READ WORLD_READ)
endif()
