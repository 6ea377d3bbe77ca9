# Runs a tessera-bench command given --graph --json and checks the replay rows: every ordinary row
# of a variant that has a "<variant>/graph" row is matched, and every graph row carries
# ordinary_us and replay_speedup besides the report contract (FIELDS). At least MIN_GRAPH_ROWS
# graph rows. A functional check; it asserts no timing.
#   cmake -DFIELDS=a,b -DBENCH=name -DMIN_GRAPH_ROWS=n -P check_graph_rows.cmake -- <command>...
include(${CMAKE_CURRENT_LIST_DIR}/../command_after_dashes.cmake)

execute_process(COMMAND ${command} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "command failed (${rc}): ${command}\nstdout:\n${out}\nstderr:\n${err}")
endif()

string(REPLACE "," ";" fields "${FIELDS}")
list(APPEND fields ordinary_us replay_speedup)
string(REGEX MATCHALL "{[^\n]*}" lines "${out}")
set(graph_rows 0)
foreach(line IN LISTS lines)
  if(NOT line MATCHES "\"variant\": \"([^\"]*)/graph\"")
    continue()
  endif()
  set(variant "${CMAKE_MATCH_1}")
  math(EXPR graph_rows "${graph_rows} + 1")
  foreach(field IN LISTS fields)
    if(NOT line MATCHES "\"${field}\": ")
      message(FATAL_ERROR "graph row lacks \"${field}\": ${line}")
    endif()
  endforeach()
  if(NOT line MATCHES "\"bench\": \"${BENCH}\"")
    message(FATAL_ERROR "JSON line is not from benchmark '${BENCH}': ${line}")
  endif()
  if(NOT line MATCHES "\"replay_speedup\": [0-9]+\\.[0-9]+" OR
     line MATCHES "\"replay_speedup\": 0\\.0000[,}]")
    message(FATAL_ERROR "replay_speedup is not a positive number: ${line}")
  endif()
  if(NOT out MATCHES "\"variant\": \"${variant}\"")
    message(FATAL_ERROR "graph row of '${variant}' without its ordinary row:\n${out}")
  endif()
endforeach()
if(graph_rows LESS MIN_GRAPH_ROWS)
  message(FATAL_ERROR "${graph_rows} graph rows, expected at least ${MIN_GRAPH_ROWS}:\n${out}")
endif()
message(STATUS "${graph_rows} graph rows, each with ordinary_us and replay_speedup")
