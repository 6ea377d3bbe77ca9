/* The rest of the 1.5 names: the C11 _vector generics of the test and wait families,
 * shmem_team_split_2d, shmem_team_ptr, shmem_pcontrol, shmem_info_get_version/name and
 * shmem_malloc_with_hints. */
#include <string.h>

#include "shmem_check.h"

int main(void) {
  shmem_init();
  const int me = shmem_my_pe();
  const int n = shmem_n_pes();
  shmem_pcontrol(0);
  shmem_pcontrol(1);
  shmem_pcontrol(2, "ignored");

  int major = 0, minor = 0;
  char name[SHMEM_MAX_NAME_LEN];
  shmem_info_get_version(&major, &minor);
  shmem_info_get_name(name);
  check(major == 1 && minor == 5, "version %d.%d, expected 1.5", major, minor);
  check(strcmp(name, SHMEM_VENDOR_STRING) == 0, "name '%s'", name);

  /* _vector generics: ivars[i] compared with cmp_values[i]. PE (me + 1) sets ivars[i] = i + 1
   * on this PE for even i only. */
  long* ivars = (long*)shmem_malloc_with_hints(
      4 * sizeof(long), SHMEM_MALLOC_ATOMICS_REMOTE | SHMEM_MALLOC_SIGNAL_REMOTE);
  check(ivars != NULL, "malloc_with_hints returned NULL");
  for (int i = 0; i < 4; ++i) ivars[i] = 0;
  shmem_barrier_all();
  long want[4] = {1, 2, 3, 4};
  for (int i = 0; i < 4; i += 2) shmem_long_atomic_set(&ivars[i], i + 1, (me + 1) % n);
  int status_mask[4] = {0, 1, 0, 1}; /* skip the odd ones, which nobody sets */
  shmem_wait_until_all_vector(ivars, 4, status_mask, SHMEM_CMP_EQ, want);
  check(shmem_test_all_vector(ivars, 4, status_mask, SHMEM_CMP_EQ, want) == 1,
        "test_all_vector after wait_until_all_vector is 0");
  check(shmem_test_all_vector(ivars, 4, NULL, SHMEM_CMP_EQ, want) == 0,
        "test_all_vector over unset elements is 1");
  size_t any = shmem_wait_until_any_vector(ivars, 4, NULL, SHMEM_CMP_EQ, want);
  check(any == 0 || any == 2, "wait_until_any_vector gave %zu", any);
  any = shmem_test_any_vector(ivars, 4, status_mask, SHMEM_CMP_EQ, want);
  check(any == 0 || any == 2, "test_any_vector gave %zu", any);
  size_t idx[4] = {9, 9, 9, 9};
  size_t some = shmem_wait_until_some_vector(ivars, 4, idx, NULL, SHMEM_CMP_EQ, want);
  check(some == 2 && idx[0] == 0 && idx[1] == 2, "wait_until_some_vector gave %zu: %zu %zu", some,
        idx[0], idx[1]);
  long lower[4] = {0, 0, 0, 0};
  some = shmem_test_some_vector(ivars, 4, idx, NULL, SHMEM_CMP_GT, lower);
  check(some == 2, "test_some_vector (GT 0) gave %zu", some);
  shmem_barrier_all();

  /* split_2d with xrange 2: rows {0,1}, {2,3}, ...; columns {0,2,..}, {1,3,..}. */
  shmem_team_t xteam = SHMEM_TEAM_INVALID, yteam = SHMEM_TEAM_INVALID;
  check(shmem_team_split_2d(SHMEM_TEAM_WORLD, 2, NULL, 0, &xteam, NULL, 0, &yteam) == 0,
        "split_2d failed");
  check(shmem_team_my_pe(xteam) == me % 2, "x team rank %d", shmem_team_my_pe(xteam));
  check(shmem_team_my_pe(yteam) == me / 2, "y team rank %d", shmem_team_my_pe(yteam));
  const int row_size = (me - me % 2) + 2 > n ? 1 : 2;
  check(shmem_team_n_pes(xteam) == row_size, "x team size %d, expected %d", shmem_team_n_pes(xteam),
        row_size);
  check(shmem_team_n_pes(yteam) == (n - me % 2 + 1) / 2, "y team size %d", shmem_team_n_pes(yteam));
  check(shmem_team_translate_pe(yteam, 0, SHMEM_TEAM_WORLD) == me % 2, "y team PE 0 is world PE %d",
        shmem_team_translate_pe(yteam, 0, SHMEM_TEAM_WORLD));
  /* xrange above the parent's size: one row of every PE, columns of one PE. */
  shmem_team_t wide = SHMEM_TEAM_INVALID, single = SHMEM_TEAM_INVALID;
  check(shmem_team_split_2d(SHMEM_TEAM_WORLD, n + 3, NULL, 0, &wide, NULL, 0, &single) == 0 &&
            shmem_team_n_pes(wide) == n && shmem_team_n_pes(single) == 1,
        "split_2d with xrange > n: sizes %d and %d", shmem_team_n_pes(wide),
        shmem_team_n_pes(single));
  shmem_team_t none1 = SHMEM_TEAM_WORLD, none2 = SHMEM_TEAM_WORLD;
  check(shmem_team_split_2d(SHMEM_TEAM_WORLD, 0, NULL, 0, &none1, NULL, 0, &none2) != 0 &&
            none1 == SHMEM_TEAM_INVALID && none2 == SHMEM_TEAM_INVALID,
        "split_2d with xrange 0 did not fail");

  /* team_ptr: the y team's PE k is world PE me % 2 + 2k, reachable by load/store here. */
  long* seen = (long*)shmem_team_ptr(yteam, ivars, 0);
  check(seen == shmem_ptr(ivars, me % 2), "team_ptr differs from shmem_ptr of world PE %d", me % 2);
  if (seen != NULL) check(seen[0] == 1, "team_ptr load gave %ld", seen[0]);
  check(shmem_team_ptr(yteam, ivars, shmem_team_n_pes(yteam)) == NULL,
        "team_ptr past the team is not NULL");
  check(shmem_team_ptr(SHMEM_TEAM_INVALID, ivars, 0) == NULL, "team_ptr on no team is not NULL");

  shmem_team_destroy(single);
  shmem_team_destroy(wide);
  shmem_team_destroy(yteam);
  shmem_team_destroy(xteam);
  shmem_barrier_all();
  const int status = finish("names");
  shmem_free(ivars);
  shmem_finalize();
  return status;
}
