# reduce_scatter, all_to_all(_v) and broadcast (host calls and device building blocks) on teams,
# and the agreement check of teams that do not span the job.
tessera_add_gtest(ops_collectives_test SOURCES collectives_test.cpp LABELS "ops;unit")
