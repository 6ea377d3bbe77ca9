# Runs a tessera-bench command and checks its --json output: at least one JSON line, and every
# line carries every field of the report contract. A functional check; it asserts no timing.
#   cmake -DFIELDS=a,b,c -DBENCH=name -P check_json_fields.cmake -- <command> <args>...
include(${CMAKE_CURRENT_LIST_DIR}/../command_after_dashes.cmake)

execute_process(COMMAND ${command} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "command failed (${rc}): ${command}\nstdout:\n${out}\nstderr:\n${err}")
endif()

string(REPLACE "," ";" fields "${FIELDS}")
string(REGEX MATCHALL "{[^\n]*}" lines "${out}")
list(LENGTH lines n_lines)
if(n_lines EQUAL 0)
  message(FATAL_ERROR "no JSON lines in the output:\n${out}\nstderr:\n${err}")
endif()
foreach(line IN LISTS lines)
  foreach(field IN LISTS fields)
    if(NOT line MATCHES "\"${field}\": ")
      message(FATAL_ERROR "JSON line lacks \"${field}\": ${line}")
    endif()
  endforeach()
  if(NOT line MATCHES "\"bench\": \"${BENCH}\"")
    message(FATAL_ERROR "JSON line is not from benchmark '${BENCH}': ${line}")
  endif()
  # Tessera's time is always measured: a positive number, never null.
  if(NOT line MATCHES "\"time_us\": [0-9]+\\.[0-9]+" OR line MATCHES "\"time_us\": 0\\.0000,")
    message(FATAL_ERROR "time_us is not a positive number: ${line}")
  endif()
endforeach()
message(STATUS "${n_lines} JSON lines, each with ${FIELDS}")
