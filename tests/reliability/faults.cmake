# Injected faults (issue 8, items 1-2): fault_proc is one PE of a job with a fault; fault_test
# runs it under tessera-run, mpirun and the network proxy and times each job's end.
add_executable(fault_proc fault_proc.cpp)
target_link_libraries(fault_proc PRIVATE tessera::tessera)
tessera_warnings(fault_proc)
tessera_add_gtest(fault_test SOURCES fault_test.cpp LABELS reliability unit tcp mpi)
# tessera-run and fault_proc are found beside the test (harness/sibling_binary.hpp).
target_compile_definitions(fault_test PRIVATE
  $<$<BOOL:${TESSERA_HAVE_MPI}>:MPIEXEC_PATH="${MPIEXEC_EXECUTABLE}">
  $<$<BOOL:${TESSERA_HAVE_FABRIC}>:TESSERA_TEST_FABRIC=1>)
add_dependencies(fault_test fault_proc tessera-run)
