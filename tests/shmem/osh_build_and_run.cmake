# Builds SOURCE with the OpenSHMEM-named wrapper WRAPPER (oshcc, oshc++) into OUTPUT, then runs
# it with OSHRUN -np 4; PE 0 must report the verified count.
#   cmake -DWRAPPER=... -DSOURCE=... -DOUTPUT=... -DOSHRUN=... -P osh_build_and_run.cmake
execute_process(COMMAND ${WRAPPER} -O2 -o ${OUTPUT} ${SOURCE}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${WRAPPER} failed (${rc}):\n${out}\n${err}")
endif()
execute_process(COMMAND ${OSHRUN} -np 4 ${OUTPUT}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "osh_counter: 4 increments from 4 PEs: verified")
  message(FATAL_ERROR "${OUTPUT} under ${OSHRUN} -np 4 failed (${rc}):\n${out}\n${err}")
endif()
message(STATUS "${WRAPPER} + oshrun: built and ran ${OUTPUT} on 4 PEs")
