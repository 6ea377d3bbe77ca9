/* Setup and queries: shmem_init/finalize (and starting again), my_pe/n_pes, thread level,
 * library version and name, PE accessibility. Run with the expected number of PEs as argv[1]. */
#include <stdlib.h>
#include <string.h>

#include "shmem_check.h"

static void check_queries(int expected_pes) {
  const int me = shmem_my_pe();
  const int n = shmem_n_pes();
  check(n == expected_pes, "shmem_n_pes() is %d, expected %d", n, expected_pes);
  check(me >= 0 && me < n, "shmem_my_pe() is %d, outside [0, %d)", me, n);
  check(shmem_team_my_pe(SHMEM_TEAM_WORLD) == me, "team_my_pe(WORLD) is %d, expected %d",
        shmem_team_my_pe(SHMEM_TEAM_WORLD), me);
  check(shmem_team_n_pes(SHMEM_TEAM_WORLD) == n, "team_n_pes(WORLD) is %d, expected %d",
        shmem_team_n_pes(SHMEM_TEAM_WORLD), n);
  for (int pe = 0; pe < n; ++pe)
    check(shmem_pe_accessible(pe) == 1, "shmem_pe_accessible(%d) is 0", pe);
  check(shmem_pe_accessible(-1) == 0, "shmem_pe_accessible(-1) is not 0");
  check(shmem_pe_accessible(n) == 0, "shmem_pe_accessible(n_pes) is not 0");
}

int main(int argc, char** argv) {
  const int expected_pes = argc > 1 ? atoi(argv[1]) : 1;
  int provided = -1;
  char name[SHMEM_MAX_NAME_LEN];
  int major = 0, minor = 0;
  int status;

  check(shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) == 0, "shmem_init_thread failed");
  check(provided == SHMEM_THREAD_MULTIPLE, "provided thread level %d, expected MULTIPLE", provided);
  shmem_init(); /* a second call before shmem_finalize changes nothing */
  provided = -1;
  shmem_query_thread(&provided);
  check(provided == SHMEM_THREAD_MULTIPLE, "shmem_query_thread gave %d", provided);
  check_queries(expected_pes);

  shmem_info_get_version(&major, &minor);
  check(major == 1 && minor == 5, "version %d.%d, expected 1.5", major, minor);
  check(SHMEM_MAJOR_VERSION == 1 && SHMEM_MINOR_VERSION == 5, "version macros are not 1.5");
  shmem_info_get_name(name);
  check(strcmp(name, SHMEM_VENDOR_STRING) == 0, "vendor name '%s', expected '%s'", name,
        SHMEM_VENDOR_STRING);
  shmem_barrier_all();
  shmem_finalize();

  /* The runtime may start again after shmem_finalize, with the same job. */
  shmem_init();
  check_queries(expected_pes);
  status = finish("setup");
  shmem_finalize();
  return status;
}
