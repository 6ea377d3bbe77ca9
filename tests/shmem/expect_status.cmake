# Runs a command that must exit with STATUS, its output (stdout or stderr) matching EXPECT when
# given.   cmake -DSTATUS=<n> [-DEXPECT=<regex>] -P expect_status.cmake -- <command> <args>...
include(${CMAKE_CURRENT_LIST_DIR}/../command_after_dashes.cmake)
execute_process(COMMAND ${command} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL STATUS)
  message(FATAL_ERROR "expected exit status ${STATUS}, got ${rc}: ${command}\n"
                      "stdout:\n${out}\nstderr:\n${err}")
endif()
if(DEFINED EXPECT AND NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "the output lacks '${EXPECT}'\nstdout:\n${out}\nstderr:\n${err}")
endif()
message(STATUS "exited ${rc} as expected")
