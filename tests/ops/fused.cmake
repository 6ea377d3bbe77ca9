# The fused ops in every overlap pattern (ag_gemm, gemm_rs, gemm_ar, gemm_as,
# all_reduce_rmsnorm), Stream::wait_for and the taxonomy's names (issue 16, H-fused).
tessera_add_gtest(ops_fused_test SOURCES fused_test.cpp LABELS "ops;unit" LIBS tessera_internal)
# As processes: the example verifies every call against its reference.
if(TARGET gemm_ar)
  tessera_add_mpi_test(ops-gemm-ar-np4 gemm_ar 4 LABELS ops)
endif()
