# The command line of a `cmake -P` test script (tests/shmem/expect_failure.cmake,
# tests/shmem/expect_status.cmake, tests/bench/check_json_fields.cmake): every argument after
# `--`, as a list in `command`; the script stops with "<script>: no command after --" when there
# is none.   include(.../command_after_dashes.cmake) in a script run as
#   cmake -D... -P <script> -- <command> <args>...
set(command)
set(in_command OFF)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last})
  if(in_command)
    list(APPEND command "${CMAKE_ARGV${i}}")
  elseif(CMAKE_ARGV${i} STREQUAL "--")
    set(in_command ON)
  endif()
endforeach()
if(NOT command)
  get_filename_component(script "${CMAKE_SCRIPT_MODE_FILE}" NAME_WE)
  message(FATAL_ERROR "${script}: no command after --")
endif()
