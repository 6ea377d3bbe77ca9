# The fused GEMM ops (ag_gemm, gemm_rs, gemm_ar, gemm_as) in every pattern, captured once and
# replayed 1,000 times with fresh inputs (fused_cases.hpp), PEs as threads.
tessera_add_gtest(graphs_fused_test SOURCES fused_graphs_test.cpp LABELS "graphs" LIBS tessera_internal)
