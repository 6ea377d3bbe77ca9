# all_gather (host call and device building blocks) and the gemm_tile engine.
tessera_add_gtest(ops_all_gather_test SOURCES all_gather_test.cpp LABELS "ops;unit")
tessera_add_gtest(ops_gemm_tile_test SOURCES gemm_tile_test.cpp LABELS "ops;unit")
# As processes: the example verifies every call against its reference.
if(TARGET all_gather)
  tessera_add_mpi_test(ops-all-gather-np4 all_gather 4 LABELS ops)
endif()
