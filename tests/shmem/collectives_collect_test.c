/* shmem_collect / shmem_fcollect (typed, every standard RMA type) and shmem_collectmem /
 * shmem_fcollectmem: the concatenation in team order on every member, on the world and on a
 * strided team. collect: member r contributes base + r elements, and team PE 1 none at all;
 * fcollect: base each, also in place (source is the start of dest). Nothing
 * is written past the concatenation; an invalid team gives nonzero. */
#include "collectives_check.h"

#define SENTINEL 111

/* Elements team PE r contributes to a collect of `base`. */
static size_t collect_count(int rank, size_t base) { return rank == 1 ? 0 : base + (size_t)rank; }

#define TEST_COLLECT(NAME, TYPE)                                                                 \
  static void collect_##NAME(void) {                                                             \
    const int me = shmem_my_pe(), npes = shmem_n_pes();                                          \
    const size_t cap = (size_t)npes * (COLLECTIVE_MAX_COUNT + (size_t)npes) + 1;                 \
    TYPE* src = (TYPE*)shmem_malloc((COLLECTIVE_MAX_COUNT + (size_t)npes) * sizeof(TYPE));       \
    TYPE* dst = (TYPE*)shmem_malloc(cap * sizeof(TYPE));                                         \
    for (int c = 0; c < 2; ++c) {                                                                \
      shmem_team_t team = collective_teams[c];                                                   \
      begin_collective_case();                                                                   \
      const int size = shmem_team_n_pes(team), rank = shmem_team_my_pe(team);                    \
      for (int k = 0; k < COLLECTIVE_N_COUNTS; ++k) {                                            \
        for (int fixed = 0; fixed < 2; ++fixed) {                                                \
          next_collective();                                                                     \
          const size_t base = collective_counts[k];                                              \
          const size_t mine = fixed ? base : collect_count(rank, base);                          \
          for (size_t i = 0; i < mine; ++i) src[i] = (TYPE)test_value(me, i, k);                 \
          for (size_t i = 0; i < cap; ++i) dst[i] = (TYPE)SENTINEL;                              \
          const int rc = fixed ? shmem_##NAME##_fcollect(team, dst, src, base)                   \
                               : shmem_##NAME##_collect(team, dst, src, mine);                   \
          check(rc == 0, "shmem_" #NAME "_%s on %s returned %d", fixed ? "fcollect" : "collect", \
                collective_team_names[c], rc);                                                   \
          size_t at = 0;                                                                         \
          int bad = 0;                                                                           \
          for (int r = 0; r < size; ++r) {                                                       \
            const size_t count = fixed ? base : collect_count(r, base);                          \
            for (size_t i = 0; i < count; ++i, ++at) {                                           \
              if (dst[at] != (TYPE)test_value(world_of(team, r), i, k) && bad++ == 0) {          \
                check(0, "shmem_" #NAME "_%s on %s, base %zu: element %zu of PE %d's block",     \
                      fixed ? "fcollect" : "collect", collective_team_names[c], base, i, r);     \
              }                                                                                  \
            }                                                                                    \
          }                                                                                      \
          check(dst[at] == (TYPE)SENTINEL, "shmem_" #NAME "_collect wrote past the end");        \
        }                                                                                        \
      }                                                                                          \
      /* fcollect in place: source is the start of dest (the same symmetric address on every     \
       * member, as the specification requires), overwritten by the concatenation. */            \
      next_collective();                                                                         \
      for (size_t i = 0; i < 7; ++i) dst[i] = (TYPE)test_value(me, i, 50);                       \
      check(shmem_##NAME##_fcollect(team, dst, dst, 7) == 0, "in-place fcollect failed");        \
      for (int r = 0; r < size; ++r) {                                                           \
        for (size_t i = 0; i < 7; ++i) {                                                         \
          check(dst[(size_t)r * 7 + i] == (TYPE)test_value(world_of(team, r), i, 50),            \
                "shmem_" #NAME "_fcollect in place on %s: block %d element %zu wrong",           \
                collective_team_names[c], r, i);                                                 \
        }                                                                                        \
      }                                                                                          \
    }                                                                                            \
    shmem_free(dst);                                                                             \
    shmem_free(src);                                                                             \
  }
TESSERA_SHMEM_RMA_TYPES(TEST_COLLECT)
#undef TEST_COLLECT

/* The byte routines: odd byte counts per member. */
static void collectmem(void) {
  begin_collective_case();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  unsigned char* src = (unsigned char*)shmem_malloc(64);
  unsigned char* dst = (unsigned char*)shmem_malloc(64 * (size_t)n + 1);
  for (size_t i = 0; i < 64; ++i) src[i] = (unsigned char)test_value(me, i, 9);
  for (size_t i = 0; i < 64 * (size_t)n + 1; ++i) dst[i] = SENTINEL;
  check(shmem_collectmem(SHMEM_TEAM_WORLD, dst, src, (size_t)(3 + me)) == 0, "collectmem");
  size_t at = 0;
  for (int pe = 0; pe < n; ++pe) {
    for (size_t i = 0; i < (size_t)(3 + pe); ++i, ++at) {
      check(dst[at] == (unsigned char)test_value(pe, i, 9), "shmem_collectmem: PE %d byte %zu", pe,
            i);
    }
  }
  check(dst[at] == SENTINEL, "shmem_collectmem wrote past the end");
  check(shmem_fcollectmem(SHMEM_TEAM_WORLD, dst, src, 5) == 0, "fcollectmem");
  for (int pe = 0; pe < n; ++pe) {
    for (size_t i = 0; i < 5; ++i) {
      check(dst[(size_t)pe * 5 + i] == (unsigned char)test_value(pe, i, 9),
            "shmem_fcollectmem: PE %d byte %zu", pe, i);
    }
  }
  check(shmem_collectmem(SHMEM_TEAM_INVALID, dst, src, 1) != 0,
        "collectmem on SHMEM_TEAM_INVALID returned 0");
  check(shmem_long_fcollect(SHMEM_TEAM_INVALID, (long*)dst, (long*)src, 1) != 0,
        "fcollect on SHMEM_TEAM_INVALID returned 0");
  shmem_free(dst);
  shmem_free(src);
}

int main(int argc, char** argv) {
  shmem_init();
  parse_collective_args(argc, argv);
  make_collective_teams();
#define RUN(NAME, TYPE) collect_##NAME();
  TESSERA_SHMEM_RMA_TYPES(RUN)
#undef RUN
  collectmem();
  destroy_collective_teams();
  const int status = finish("collect and fcollect");
  shmem_finalize();
  return status;
}
