# The OpenSHMEM 1.5 collectives (issue 16 item 5): one program per function family, run as
# processes under mpirun (labels mpi, shmem), on 2, 3 and 4 PEs (oversubscribed above the
# cores). Included from tests/shmem/CMakeLists.txt after tessera_add_shmem_test is defined.
foreach(_family sync broadcast collect alltoall reduce generic)
  tessera_add_shmem_test(collectives_${_family} collectives_${_family}_test.c 4)
endforeach()
# The same programs on other PE counts: 5 (halves of 3 and 2 PEs: the two-phase reduction on a
# strided team), 3 (halves of 2 and 1) and 2.
foreach(_run reduce:5 reduce:3 reduce:2 broadcast:3 alltoall:3 collect:2 sync:3)
  string(REPLACE ":" ";" _parts "${_run}")
  list(GET _parts 0 _family)
  list(GET _parts 1 _np)
  tessera_add_mpi_test(shmem.collectives_${_family}.np${_np} shmem_collectives_${_family} ${_np}
                       LABELS shmem ENV ${TESSERA_SHMEM_TEST_ENV})
endforeach()
# One PE, no launcher: every collective over a team of one.
foreach(_family broadcast collect alltoall reduce sync)
  add_test(NAME shmem.collectives_${_family}.single COMMAND shmem_collectives_${_family})
  set_tests_properties(shmem.collectives_${_family}.single PROPERTIES LABELS shmem TIMEOUT 120
                       ENVIRONMENT "${TESSERA_SHMEM_TEST_ENV}")
endforeach()

# Delay mode: the last PE enters every collective late, so the others must wait for its data.
foreach(_family broadcast collect alltoall reduce)
  tessera_add_mpi_test(shmem.collectives_${_family}.delay shmem_collectives_${_family} 4
                       LABELS shmem ENV ${TESSERA_SHMEM_TEST_ENV} ARGS delay)
endforeach()
tessera_add_shmem_test(collectives_cxx collectives_cxx_test.cpp 4)

# The declarations compile as strict C99 with every warning.
add_library(shmem_collectives_header_c99 OBJECT collectives_header_c99.c)
target_include_directories(shmem_collectives_header_c99 PRIVATE ${PROJECT_SOURCE_DIR}/include)
set_target_properties(shmem_collectives_header_c99 PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON
                                                              C_EXTENSIONS OFF)
target_compile_options(shmem_collectives_header_c99 PRIVATE -Wall -Wextra -Wpedantic -Werror)

# Misuse ends the job with the routine's "tessera shmem:" message.
add_executable(shmem_collectives_error_proc collectives_error_proc.c)
target_link_libraries(shmem_collectives_error_proc PRIVATE tessera::shmem)
set_target_properties(shmem_collectives_error_proc PROPERTIES C_STANDARD 11 C_EXTENSIONS OFF)
target_compile_options(shmem_collectives_error_proc PRIVATE -Wall -Wextra -Wpedantic
                       $<$<BOOL:${TESSERA_WERROR}>:-Werror>)
if(TESSERA_HAVE_MPI)
  set(_shmem_collective_errors
      "broadcast-stack|shmem_long_broadcast: destination 0x[0-9a-f]+ is not a symmetric address"
      "reduce-stack-source|shmem_long_sum_reduce: source 0x[0-9a-f]+ is not a symmetric address"
      "alltoall-past-heap|shmem_long_alltoall: destination 0x[0-9a-f]+ \\+ [0-9]+ bytes runs past the end of the symmetric heap"
      "sync-outside-set|shmem_sync: active set PE_start 2, logPE_stride 0, PE_size 1 ends at PE 2, outside .0, 2."
      "barrier-bad-stride|shmem_barrier: active set PE_start 0, logPE_stride -1, PE_size 2 is invalid"
      "sync-not-member|shmem_sync: this PE is not in the active set PE_start 1, logPE_stride 0, PE_size 1")
  foreach(_case IN LISTS _shmem_collective_errors)
    string(REPLACE "|" ";" _parts "${_case}")
    list(GET _parts 0 _mode)
    list(GET _parts 1 _expect)
    add_test(NAME shmem.collectives.error.${_mode}
             COMMAND ${CMAKE_COMMAND} "-DEXPECT=tessera shmem: PE 0: ${_expect}"
                     -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_failure.cmake --
                     ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 --oversubscribe
                     $<TARGET_FILE:shmem_collectives_error_proc> ${_mode})
    set_tests_properties(shmem.collectives.error.${_mode} PROPERTIES LABELS "mpi;shmem"
                         TIMEOUT 120
                         ENVIRONMENT "${TESSERA_MPI_TEST_ENV};${TESSERA_SHMEM_TEST_ENV}")
  endforeach()
endif()

# The collectives across two pretend nodes: members reached through the libfabric proxy take
# the get path instead of load/store.
if(TESSERA_HAVE_FABRIC)
  foreach(_family broadcast reduce alltoall)
    add_test(NAME shmem.collectives_${_family}.two_nodes
             COMMAND tessera-run -np 4 --node-ids a,a,b,b --timeout 280
                     $<TARGET_FILE:shmem_collectives_${_family}>)
    set_tests_properties(shmem.collectives_${_family}.two_nodes PROPERTIES LABELS "fabric;shmem"
                         TIMEOUT 300
                         ENVIRONMENT "${TESSERA_SHMEM_TEST_ENV};TESSERA_FABRIC_PROVIDER=tcp\\;ofi_rxm;FI_TCP_IFACE=lo;TESSERA_FABRIC=on")
  endforeach()
endif()
