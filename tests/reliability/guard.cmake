# Guard pages and the fault reporter (issue 17, items 1-2): guard_proc is one PE of a job whose
# PE 0 writes outside PE 1's heap; guard_test runs it under tessera-run and reads what each
# process and the launcher said.
add_executable(guard_proc guard_proc.cpp)
target_link_libraries(guard_proc PRIVATE tessera::tessera)
tessera_warnings(guard_proc)
tessera_add_gtest(guard_test SOURCES guard_test.cpp LABELS reliability unit tcp)
# tessera-run and guard_proc are found beside the test (harness/sibling_binary.hpp).
target_compile_definitions(guard_test PRIVATE
  $<$<BOOL:${TESSERA_HAVE_FABRIC}>:TESSERA_TEST_FABRIC=1>)
add_dependencies(guard_test guard_proc tessera-run)
