# Resource hygiene over init/finalize cycles and the tessera-stress soak (issue 8 items 7, 8),
# label `reliability`. The fuzz targets' corpus replays are in ../fuzz.

# Threads jobs: fds, threads and mappings after 20 init/finalize cycles.
tessera_add_gtest(hygiene_test SOURCES hygiene_test.cpp LABELS reliability)
target_include_directories(hygiene_test PRIVATE ${PROJECT_SOURCE_DIR}/tests)

# The same over processes, under each launcher.
add_executable(hygiene_proc hygiene_proc.cpp)
target_include_directories(hygiene_proc PRIVATE ${PROJECT_SOURCE_DIR}/tests)
target_link_libraries(hygiene_proc PRIVATE tessera::tessera)
tessera_warnings(hygiene_proc)
tessera_add_tcp_test(reliability.hygiene.tcp.np2 hygiene_proc 2 LABELS reliability)
tessera_add_mpi_test(reliability.hygiene.mpi.np2 hygiene_proc 2 LABELS reliability)

# tessera-stress for a few seconds: 4 PEs as threads, as tcp processes and as MPI processes.
add_test(NAME reliability.stress.threads.np4 COMMAND tessera-stress --np 4 --seconds 3)
set_tests_properties(reliability.stress.threads.np4 PROPERTIES LABELS reliability TIMEOUT 120)
tessera_add_tcp_test(reliability.stress.tcp.np4 tessera-stress 4 LABELS reliability
                     ARGS --seconds 3)
tessera_add_mpi_test(reliability.stress.mpi.np4 tessera-stress 4 LABELS reliability
                     ARGS --seconds 3)
add_dependencies(tessera-tests-reliability tessera-stress)
