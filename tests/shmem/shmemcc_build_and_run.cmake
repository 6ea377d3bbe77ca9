# Builds SOURCE with a compiler wrapper (WRAPPER) into OUTPUT, then runs it as 2 PEs under
# MPIEXEC; both PEs must report success.
#   cmake -DWRAPPER=... -DSOURCE=... -DOUTPUT=... -DMPIEXEC=... -P shmemcc_build_and_run.cmake
execute_process(COMMAND ${WRAPPER} -O2 -o ${OUTPUT} ${SOURCE}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${WRAPPER} failed (${rc}):\n${out}\n${err}")
endif()
execute_process(COMMAND ${MPIEXEC} -n 2 --oversubscribe ${OUTPUT}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${OUTPUT} under mpirun failed (${rc}):\n${out}\n${err}")
endif()
string(REGEX MATCHALL "hello_shmem: PE [01] of 2: verified" lines "${out}")
list(LENGTH lines n)
if(NOT n EQUAL 2)
  message(FATAL_ERROR "expected 2 PEs to verify, saw ${n}:\n${out}\n${err}")
endif()
message(STATUS "${WRAPPER}: built and ran ${OUTPUT} on 2 PEs")
