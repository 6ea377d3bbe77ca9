/* What the collectives tests share: the teams each collective runs on (SHMEM_TEAM_WORLD, and the
 * strided half of the world this PE is in: even or odd world PEs, split with stride 2, so team
 * and world numbers differ), the element counts, and the test value of an element. */
#ifndef TESSERA_TESTS_SHMEM_COLLECTIVES_CHECK_H
#define TESSERA_TESTS_SHMEM_COLLECTIVES_CHECK_H

#include <string.h>
#include <time.h>

#include "shmem_check.h"

/* Element counts every family runs: one, an odd handful, and a few thousand (several of the
 * library's chunks for the small types). */
static const size_t collective_counts[] = {1, 7, 3001};
#define COLLECTIVE_N_COUNTS 3
#define COLLECTIVE_MAX_COUNT 3001

/* cases[0] = SHMEM_TEAM_WORLD, cases[1] = this PE's half (start me % 2, stride 2). */
static shmem_team_t collective_teams[2];
static const char* const collective_team_names[2] = {"world", "strided half"};

static inline void make_collective_teams(void) {
  const int me = shmem_my_pe(), n = shmem_n_pes();
  shmem_team_t evens = SHMEM_TEAM_INVALID, odds = SHMEM_TEAM_INVALID;
  check(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, NULL, 0, &evens) == 0,
        "split evens failed");
  if (n > 1) {
    check(shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, n / 2, NULL, 0, &odds) == 0,
          "split odds failed");
  }
  collective_teams[0] = SHMEM_TEAM_WORLD;
  collective_teams[1] = me % 2 == 0 ? evens : odds;
}

static inline void destroy_collective_teams(void) { shmem_team_destroy(collective_teams[1]); }

/* The world PE of team PE `rank`. */
static inline int world_of(shmem_team_t team, int rank) {
  return shmem_team_translate_pe(team, rank, SHMEM_TEAM_WORLD);
}

/* Bumped before every collective a test makes, so consecutive calls move different values and a
 * member that read a peer's source too early (the previous call's data) is caught. */
static size_t collective_generation = 0;
/* Delay mode (program argument "delay"): the last PE enters every collective about 1 ms late,
 * so the others reach the opening sync first and must wait there for its source. */
static int collective_delay = 0;

static inline void parse_collective_args(int argc, char** argv) {
  collective_delay = argc > 1 && strcmp(argv[1], "delay") == 0;
}

/* Teams of different sizes make different numbers of calls, so the generation restarts from a
 * value all PEs agree on at the start of each (routine, team) case. */
static size_t collective_case = 0;
static inline void begin_collective_case(void) {
  ++collective_case;
  collective_generation = collective_case * 4096u;
}

/* Call before filling the buffers of the next collective. */
static inline void next_collective(void) {
  ++collective_generation;
  if (!collective_delay || shmem_my_pe() != shmem_n_pes() - 1) return;
  struct timespec start, now;
  timespec_get(&start, TIME_UTC);
  do {
    timespec_get(&now, TIME_UTC);
  } while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < 1000000L);
}

/* A small value that every type holds exactly (0 .. 96), different per PE, index, salt and
 * generation. */
static inline int test_value(int pe, size_t i, int salt) {
  return (int)(((size_t)pe * 37u + (i + collective_generation) * 11u + (size_t)salt * 5u) % 97u);
}

#endif
