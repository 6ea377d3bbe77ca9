# all_reduce (host call and device building blocks) and the Team it runs on.
tessera_add_gtest(ops_all_reduce_test SOURCES all_reduce_test.cpp LABELS "ops;unit")
# As processes: the example verifies every call against its reference.
if(TARGET all_reduce)
  tessera_add_mpi_test(ops-all-reduce-np4 all_reduce 4 LABELS ops)
endif()
