# Runs a command that must fail: a non-zero exit status and output (stdout or stderr) matching
# EXPECT.   cmake -DEXPECT=<regex> -P expect_failure.cmake -- <command> <args>...
include(${CMAKE_CURRENT_LIST_DIR}/../command_after_dashes.cmake)
execute_process(COMMAND ${command} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(rc EQUAL 0)
  message(FATAL_ERROR "expected a failure, but the command exited 0: ${command}\n"
                      "stdout:\n${out}\nstderr:\n${err}")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "the output lacks '${EXPECT}' (exit status ${rc})\n"
                      "stdout:\n${out}\nstderr:\n${err}")
endif()
message(STATUS "failed as expected (exit status ${rc}) with: ${CMAKE_MATCH_0}")
