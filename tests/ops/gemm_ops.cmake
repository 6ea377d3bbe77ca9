# ag_gemm and gemm_rs: host calls and device building blocks, as threads and as processes.
tessera_add_gtest(ops_gemm_test SOURCES gemm_ops_test.cpp LABELS "ops;unit")
add_executable(gemm_ops_proc gemm_ops_proc.cpp)
target_link_libraries(gemm_ops_proc PRIVATE tessera::tessera)
tessera_warnings(gemm_ops_proc)
tessera_add_mpi_test(ops-gemm-np4 gemm_ops_proc 4 LABELS ops)
