# MoE dispatch/combine, all_reduce_rmsnorm and all_gather captured once and replayed.
tessera_add_gtest(graphs_moe_test SOURCES moe_graphs_test.cpp LABELS "graphs" LIBS tessera_internal)
