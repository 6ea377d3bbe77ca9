/* shmem_alltoall / shmem_alltoalls (typed, every standard RMA type), shmem_alltoallmem and
 * shmem_alltoallsmem: block l of team PE k's source lands in block k of team PE l's dest, on the
 * world and on a strided team, for 1, 7 and 3001 elements per block; strided forms with dst 2,
 * sst 3 leave the gaps of dest untouched; in place (dest == source); strides below 1 and an
 * invalid team give nonzero. */
#include "collectives_check.h"

#define SENTINEL 111

/* The value team PE `from` (world PE `from_pe`) sends to team PE `to` at element j. */
static int sent(int from_pe, int to, size_t j, int salt) {
  return test_value(from_pe, (size_t)to * 1000 + j, salt);
}

#define TEST_ALLTOALL(NAME, TYPE)                                                           \
  static void alltoall_##NAME(void) {                                                       \
    const int me = shmem_my_pe(), npes = shmem_n_pes();                                     \
    const size_t cap = (size_t)npes * COLLECTIVE_MAX_COUNT * 3;                             \
    TYPE* src = (TYPE*)shmem_malloc(cap * sizeof(TYPE));                                    \
    TYPE* dst = (TYPE*)shmem_malloc(cap * sizeof(TYPE));                                    \
    for (int c = 0; c < 2; ++c) {                                                           \
      shmem_team_t team = collective_teams[c];                                              \
      begin_collective_case();                                                              \
      const int size = shmem_team_n_pes(team), rank = shmem_team_my_pe(team);               \
      for (int k = 0; k < COLLECTIVE_N_COUNTS; ++k) {                                       \
        for (int strided = 0; strided < 2; ++strided) {                                     \
          next_collective();                                                                \
          const size_t n = collective_counts[k];                                            \
          const ptrdiff_t ds = strided ? 2 : 1, ss = strided ? 3 : 1;                       \
          for (size_t i = 0; i < cap; ++i) {                                                \
            src[i] = (TYPE)SENTINEL;                                                        \
            dst[i] = (TYPE)SENTINEL;                                                        \
          }                                                                                 \
          for (int l = 0; l < size; ++l) {                                                  \
            for (size_t j = 0; j < n; ++j) {                                                \
              src[(size_t)ss * ((size_t)l * n + j)] = (TYPE)sent(me, l, j, k);              \
            }                                                                               \
          }                                                                                 \
          const int rc = strided ? shmem_##NAME##_alltoalls(team, dst, src, ds, ss, n)      \
                                 : shmem_##NAME##_alltoall(team, dst, src, n);              \
          check(rc == 0, "shmem_" #NAME "_alltoall%s returned %d", strided ? "s" : "", rc); \
          int bad = 0;                                                                      \
          for (size_t e = 0; e < (size_t)size * n * (size_t)ds; ++e) {                      \
            const size_t index = e / (size_t)ds;                                            \
            const int from = (int)(index / n);                                              \
            const TYPE want = e % (size_t)ds != 0                                           \
                                  ? (TYPE)SENTINEL                                          \
                                  : (TYPE)sent(world_of(team, from), rank, index % n, k);   \
            if (dst[e] != want && bad++ == 0) {                                             \
              check(0, "shmem_" #NAME "_alltoall%s on %s, n %zu: dest element %zu wrong",   \
                    strided ? "s" : "", collective_team_names[c], n, e);                    \
            }                                                                               \
          }                                                                                 \
        }                                                                                   \
      }                                                                                     \
      /* In place: dest == source. */                                                       \
      next_collective();                                                                    \
      for (int l = 0; l < size; ++l) {                                                      \
        for (size_t j = 0; j < 7; ++j) src[(size_t)l * 7 + j] = (TYPE)sent(me, l, j, 60);   \
      }                                                                                     \
      check(shmem_##NAME##_alltoall(team, src, src, 7) == 0, "in-place alltoall failed");   \
      for (int l = 0; l < size; ++l) {                                                      \
        for (size_t j = 0; j < 7; ++j) {                                                    \
          check(src[(size_t)l * 7 + j] == (TYPE)sent(world_of(team, l), rank, j, 60),       \
                "shmem_" #NAME "_alltoall in place on %s: block %d element %zu wrong",      \
                collective_team_names[c], l, j);                                            \
        }                                                                                   \
      }                                                                                     \
    }                                                                                       \
    shmem_free(dst);                                                                        \
    shmem_free(src);                                                                        \
  }
TESSERA_SHMEM_RMA_TYPES(TEST_ALLTOALL)
#undef TEST_ALLTOALL

/* The byte routines, and the invalid arguments. */
static void alltoallmem(void) {
  begin_collective_case();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  unsigned char* src = (unsigned char*)shmem_malloc(3 * 3 * (size_t)n);
  unsigned char* dst = (unsigned char*)shmem_malloc(3 * 2 * (size_t)n);
  for (int l = 0; l < n; ++l) {
    for (size_t j = 0; j < 3; ++j) src[(size_t)l * 3 + j] = (unsigned char)sent(me, l, j, 1);
  }
  check(shmem_alltoallmem(SHMEM_TEAM_WORLD, dst, src, 3) == 0, "alltoallmem failed");
  for (int l = 0; l < n; ++l) {
    for (size_t j = 0; j < 3; ++j) {
      check(dst[(size_t)l * 3 + j] == (unsigned char)sent(l, me, j, 1),
            "shmem_alltoallmem: byte %zu from PE %d", j, l);
    }
  }
  for (size_t i = 0; i < 3 * 2 * (size_t)n; ++i) dst[i] = SENTINEL;
  for (int l = 0; l < n; ++l) {
    for (size_t j = 0; j < 3; ++j) src[3 * ((size_t)l * 3 + j)] = (unsigned char)sent(me, l, j, 2);
  }
  check(shmem_alltoallsmem(SHMEM_TEAM_WORLD, dst, src, 2, 3, 3) == 0, "alltoallsmem failed");
  for (int l = 0; l < n; ++l) {
    for (size_t j = 0; j < 3; ++j) {
      check(dst[2 * ((size_t)l * 3 + j)] == (unsigned char)sent(l, me, j, 2),
            "shmem_alltoallsmem: byte %zu from PE %d", j, l);
      check(dst[2 * ((size_t)l * 3 + j) + 1] == SENTINEL, "shmem_alltoallsmem wrote a gap");
    }
  }
  check(shmem_alltoallmem(SHMEM_TEAM_INVALID, dst, src, 1) != 0,
        "alltoallmem on SHMEM_TEAM_INVALID returned 0");
  check(shmem_int_alltoalls(SHMEM_TEAM_WORLD, (int*)dst, (int*)src, 0, 1, 1) != 0,
        "alltoalls with dst 0 returned 0");
  check(shmem_alltoallsmem(SHMEM_TEAM_WORLD, dst, src, 1, -2, 1) != 0,
        "alltoallsmem with sst -2 returned 0");
  shmem_free(dst);
  shmem_free(src);
}

int main(int argc, char** argv) {
  shmem_init();
  parse_collective_args(argc, argv);
  make_collective_teams();
#define RUN(NAME, TYPE) alltoall_##NAME();
  TESSERA_SHMEM_RMA_TYPES(RUN)
#undef RUN
  alltoallmem();
  destroy_collective_teams();
  const int status = finish("alltoall and alltoalls");
  shmem_finalize();
  return status;
}
