# reduce_scatter, all_to_all(_v) and broadcast (host calls and device building blocks) on teams,
# and the agreement check of teams that do not span the job.
tessera_add_gtest(ops_collectives_test SOURCES collectives_test.cpp LABELS "ops;unit")
# As processes: every call of each collective verified on 4 PEs, world and stride-2 teams.
add_executable(collectives_proc collectives_proc.cpp)
target_link_libraries(collectives_proc PRIVATE tessera::tessera)
tessera_warnings(collectives_proc)
tessera_add_mpi_test(ops-collectives-np4 collectives_proc 4 LABELS ops)
