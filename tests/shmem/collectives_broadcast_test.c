/* shmem_broadcastmem and shmem_TYPENAME_broadcast for every standard RMA type: from every root
 * (team-relative, so root 1 of the strided half is world PE 2 or 3), on the world and on a
 * strided team, for 1, 7 and 3001 elements; in place (dest == source); the root's dest is
 * written too (team-based broadcast); invalid team and root give nonzero and touch nothing. */
#include <string.h>

#include "collectives_check.h"

#define SENTINEL 111

#define TEST_BROADCAST(NAME, TYPE)                                                                \
  static void broadcast_##NAME(void) {                                                            \
    TYPE* src = (TYPE*)shmem_malloc(COLLECTIVE_MAX_COUNT * sizeof(TYPE));                         \
    TYPE* dst = (TYPE*)shmem_malloc(COLLECTIVE_MAX_COUNT * sizeof(TYPE));                         \
    const int me = shmem_my_pe();                                                                 \
    for (int c = 0; c < 2; ++c) {                                                                 \
      shmem_team_t team = collective_teams[c];                                                    \
      begin_collective_case();                                                                    \
      const int size = shmem_team_n_pes(team);                                                    \
      for (int k = 0; k < COLLECTIVE_N_COUNTS; ++k) {                                             \
        const size_t n = collective_counts[k];                                                    \
        for (int root = 0; root < size; ++root) {                                                 \
          next_collective();                                                                      \
          const int salt = k * 7 + root;                                                          \
          for (size_t i = 0; i < n; ++i) {                                                        \
            src[i] = (TYPE)test_value(me, i, salt);                                               \
            dst[i] = (TYPE)SENTINEL;                                                              \
          }                                                                                       \
          const int rc = shmem_##NAME##_broadcast(team, dst, src, n, root);                       \
          check(rc == 0, "shmem_" #NAME "_broadcast on %s returned %d", collective_team_names[c], \
                rc);                                                                              \
          int bad = 0;                                                                            \
          for (size_t i = 0; i < n; ++i) {                                                        \
            if (dst[i] != (TYPE)test_value(world_of(team, root), i, salt) && bad++ == 0) {        \
              check(0, "shmem_" #NAME "_broadcast on %s, n %zu, root %d: dest[%zu] wrong",        \
                    collective_team_names[c], n, root, i);                                        \
            }                                                                                     \
          }                                                                                       \
        }                                                                                         \
      }                                                                                           \
      /* In place: dest == source; the root keeps its data, the others get it. */                 \
      next_collective();                                                                          \
      const int root = size - 1;                                                                  \
      for (size_t i = 0; i < 7; ++i) src[i] = (TYPE)test_value(me, i, 99);                        \
      check(shmem_##NAME##_broadcast(team, src, src, 7, root) == 0, "in-place broadcast failed"); \
      for (size_t i = 0; i < 7; ++i) {                                                            \
        check(src[i] == (TYPE)test_value(world_of(team, root), i, 99),                            \
              "shmem_" #NAME "_broadcast in place on %s: element %zu wrong",                      \
              collective_team_names[c], i);                                                       \
      }                                                                                           \
    }                                                                                             \
    shmem_free(dst);                                                                              \
    shmem_free(src);                                                                              \
  }
TESSERA_SHMEM_RMA_TYPES(TEST_BROADCAST)
#undef TEST_BROADCAST

/* The byte routine: nelems counts bytes, so an odd count cuts through the middle of words. */
static void broadcastmem(void) {
  begin_collective_case();
  unsigned char* src = (unsigned char*)shmem_malloc(4099);
  unsigned char* dst = (unsigned char*)shmem_malloc(4099);
  const int me = shmem_my_pe(), n = shmem_n_pes();
  for (size_t i = 0; i < 4099; ++i) {
    src[i] = (unsigned char)test_value(me, i, 3);
    dst[i] = SENTINEL;
  }
  check(shmem_broadcastmem(SHMEM_TEAM_WORLD, dst, src, 4097, n - 1) == 0, "broadcastmem failed");
  for (size_t i = 0; i < 4097; ++i) {
    if (dst[i] != (unsigned char)test_value(n - 1, i, 3)) {
      check(0, "shmem_broadcastmem: byte %zu is %u", i, dst[i]);
      break;
    }
  }
  check(dst[4097] == SENTINEL && dst[4098] == SENTINEL, "shmem_broadcastmem wrote past nelems");
  shmem_free(dst);
  shmem_free(src);
}

/* Invalid arguments: nonzero, no communication (a PE that waited would hang the job), dest
 * untouched. */
static void invalid_arguments(void) {
  int* buf = (int*)shmem_calloc(4, sizeof(int));
  int* src = (int*)shmem_calloc(4, sizeof(int));
  src[0] = 5;
  check(shmem_int_broadcast(SHMEM_TEAM_INVALID, buf, src, 4, 0) != 0,
        "broadcast on SHMEM_TEAM_INVALID returned 0");
  check(shmem_broadcastmem(SHMEM_TEAM_INVALID, buf, src, 4, 0) != 0,
        "broadcastmem on SHMEM_TEAM_INVALID returned 0");
  check(shmem_int_broadcast(SHMEM_TEAM_WORLD, buf, src, 4, shmem_n_pes()) != 0,
        "broadcast from root n_pes returned 0");
  check(shmem_int_broadcast(SHMEM_TEAM_WORLD, buf, src, 4, -1) != 0,
        "broadcast from root -1 returned 0");
  check(buf[0] == 0, "a failed broadcast wrote dest");
  shmem_free(src);
  shmem_free(buf);
}

int main(int argc, char** argv) {
  shmem_init();
  parse_collective_args(argc, argv);
  make_collective_teams();
#define RUN(NAME, TYPE) broadcast_##NAME();
  TESSERA_SHMEM_RMA_TYPES(RUN)
#undef RUN
  broadcastmem();
  invalid_arguments();
  destroy_collective_teams();
  const int status = finish("broadcast");
  shmem_finalize();
  return status;
}
