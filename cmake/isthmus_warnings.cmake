# Compiler warnings for isthmus's own targets: on, and treated as a contract (kept clean).
function(isthmus_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow=local -Wnon-virtual-dtor
        -Wno-unused-parameter>)
  endif()
endfunction()
