# cmake -DCOMPILER=<c++> -DINCLUDE_DIRS=<dirs> -DALLOWED=<headers> -DFORBIDDEN_ROOT=<dir>
#       -DWORK_DIR=<dir> -P include_boundary.cmake
# Compiles one probe per header, `#include "<header>"` alone, with -I for each of INCLUDE_DIRS (a
# layer's include path): each ALLOWED header must compile; every header under FORBIDDEN_ROOT (a
# layer above), named relative to that folder and relative to its parent, must fail because it is
# not found. Any other outcome fails the test and says which header and why.
foreach(var COMPILER WORK_DIR FORBIDDEN_ROOT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "include_boundary.cmake: -D${var}=... is required")
  endif()
endforeach()
set(flags -std=c++20)
foreach(dir IN LISTS INCLUDE_DIRS)
  list(APPEND flags "-I${dir}")
endforeach()
file(MAKE_DIRECTORY "${WORK_DIR}")
get_filename_component(forbidden_name "${FORBIDDEN_ROOT}" NAME)
file(GLOB_RECURSE forbidden_files RELATIVE "${FORBIDDEN_ROOT}" "${FORBIDDEN_ROOT}/*.hpp"
     "${FORBIDDEN_ROOT}/*.h")
if(NOT forbidden_files)
  message(FATAL_ERROR "no headers under ${FORBIDDEN_ROOT}: the check would prove nothing")
endif()
set(FORBIDDEN "")
foreach(file IN LISTS forbidden_files)
  list(APPEND FORBIDDEN "${file}" "${forbidden_name}/${file}")
endforeach()

# mode: -fsyntax-only (compile), or -E (preprocess: enough to see whether the header is found).
function(compile_probe header mode out_result out_log)
  string(MAKE_C_IDENTIFIER "${header}" name)
  set(probe "${WORK_DIR}/${name}.cpp")
  file(WRITE "${probe}" "#include \"${header}\"\n")
  execute_process(COMMAND ${COMPILER} ${flags} ${mode} "${probe}" -o "${WORK_DIR}/${name}.out"
                  RESULT_VARIABLE result OUTPUT_VARIABLE log ERROR_VARIABLE log)
  set(${out_result} "${result}" PARENT_SCOPE)
  set(${out_log} "${log}" PARENT_SCOPE)
endfunction()

set(failures 0)
set(refused 0)
foreach(header IN LISTS ALLOWED)
  compile_probe("${header}" -fsyntax-only result log)
  if(result EQUAL 0)
    message(STATUS "allowed:   \"${header}\" compiles")
  else()
    message(SEND_ERROR "\"${header}\" should compile with this include path but does not:\n${log}")
    math(EXPR failures "${failures} + 1")
  endif()
endforeach()
foreach(header IN LISTS FORBIDDEN)
  compile_probe("${header}" -E result log)
  # The probe's own include must be the one not found (gcc: "<h>: No such file", clang: "'<h>'
  # file not found"), not a header that one includes.
  string(REGEX REPLACE "([.+])" "\\\\\\1" pattern "${header}")
  if(NOT result EQUAL 0 AND log MATCHES "(^|[ '])${pattern}('? file not found|: No such file)")
    math(EXPR refused "${refused} + 1")
  elseif(result EQUAL 0)
    message(SEND_ERROR "\"${header}\" is reachable from this include path (${INCLUDE_DIRS}): "
                       "the layer can include a header of a layer above it")
    math(EXPR failures "${failures} + 1")
  else()
    message(SEND_ERROR "\"${header}\" failed to compile for another reason than not being found "
                       "(the check proves nothing):\n${log}")
    math(EXPR failures "${failures} + 1")
  endif()
endforeach()
list(LENGTH FORBIDDEN forbidden_count)
message(STATUS "forbidden: ${refused} of ${forbidden_count} names of ${FORBIDDEN_ROOT}'s headers "
               "not found, as they must not be")
if(failures GREATER 0)
  message(FATAL_ERROR "${failures} include-boundary check(s) failed")
endif()
