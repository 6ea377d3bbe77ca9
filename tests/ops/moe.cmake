# MoE dispatch/combine (host call and device building blocks).
tessera_add_gtest(ops_moe_test SOURCES moe_test.cpp LABELS "ops;unit")
# The example verifies dispatch -> per-expert linear layer -> combine as 4 processes.
if(TARGET moe)
  tessera_add_mpi_test(ops-moe-np4 moe 4 LABELS "ops;unit")
endif()
