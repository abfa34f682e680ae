# Compiler warnings for isthmus's own targets: on, and treated as a contract (kept clean).
function(isthmus_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow=local -Wnon-virtual-dtor
        -Wno-unused-parameter>)
    # Note [GCC 12 -Wrestrict]
    # ~~~~~~~~~~~~~~~~~~~~~~~~
    # GCC 12 at -O3 warns falsely inside std::string's operator+ (GCC bug 105329); the warning is
    # silenced for that compiler only.
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
    endif()
  endif()
endfunction()
