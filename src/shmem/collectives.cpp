// The data-movement collectives (broadcast, collect, fcollect, alltoall, alltoalls) and the
// deprecated active-set sync and barrier. Every collective pulls: each member reads what it
// needs from the other members' symmetric sources and writes only its own dest, so no member
// ever writes another's memory and the two team syncs around the reads are all the coordination
// there is.
#include <string>

#include "shmem/collectives.hpp"

namespace tessera::shmem {

// The deprecated active set as a team: PE_start + i * 2^logPE_stride for i < PE_size. Ends the
// job when the set leaves the job or does not hold this PE (the routines return nothing).
tessera_shmem_team active_set(const State& s, const char* routine, int start, int log_stride,
                              int size) {
  if (size < 1 || start < 0 || log_stride < 0 || log_stride > 30) {
    die(routine, "active set PE_start " + std::to_string(start) + ", logPE_stride " +
                     std::to_string(log_stride) + ", PE_size " + std::to_string(size) +
                     " is invalid: PE_start >= 0, logPE_stride >= 0 and PE_size >= 1 are needed");
  }
  const long stride = 1L << log_stride;
  const long last = start + (size - 1L) * stride;
  if (last >= s.ctx.n_pes) {
    die(routine, "active set PE_start " + std::to_string(start) + ", logPE_stride " +
                     std::to_string(log_stride) + ", PE_size " + std::to_string(size) +
                     " ends at PE " + std::to_string(last) + ", outside [0, " +
                     std::to_string(s.ctx.n_pes) + ")");
  }
  tessera_shmem_team set;
  set.team.start = start;
  set.team.stride = static_cast<int>(stride);
  set.team.size = size;
  set.team.my_rank = set.team.rank_of(s.ctx.my_pe);
  if (set.team.my_rank < 0) {
    die(routine, "this PE is not in the active set PE_start " + std::to_string(start) +
                     ", logPE_stride " + std::to_string(log_stride) + ", PE_size " +
                     std::to_string(size) + ": only its members may call it");
  }
  return set;
}

namespace {

// shmem_broadcastmem and the typed broadcasts: members other than the root read the root's
// source into their dest; the root copies its own source to dest (after the closing sync when
// they overlap, as peers still read it before).
int broadcast(const char* routine, shmem_team_t team, void* dest, const void* source,
              std::size_t bytes, int root) {
  State& s = state(routine);
  if (!usable_team(team) || root < 0 || root >= team->team.size) return -1;
  require_symmetric_range(s, routine, dest, bytes, "destination");
  require_symmetric_range(s, routine, source, bytes, "source");
  return run_collective(s, routine, *team, [&] {
    if (team->team.my_rank != root) {
      Landing landing(dest, bytes, nullptr, 0);
      read_member(s, routine, landing.at(), source, bytes, world_pe(*team, root));
      return landing;
    }
    if (dest == source) return Landing(dest, bytes, nullptr, 0);
    Landing landing(dest, bytes, source, bytes);
    std::memmove(landing.at(), source, bytes);
    return landing;
  });
}

// collect (counts per member, `uniform` false) and fcollect (`uniform`: every member's count is
// `bytes`): member k's source lands at the sum of the counts of members 0 .. k-1.
int collect(const char* routine, shmem_team_t team, void* dest, const void* source,
            std::size_t bytes, std::size_t element_bytes, bool uniform) {
  State& s = state(routine);
  if (!usable_team(team)) return -1;
  require_symmetric_range(s, routine, source, bytes, "source");
  // Published before the opening sync, read by the members before the closing one.
  if (!uniform) *s.collect_count = bytes / element_bytes;
  return run_collective(s, routine, *team, [&] {
    const int m = team->team.size;
    std::vector<std::size_t> counts(static_cast<std::size_t>(m), bytes);
    if (!uniform) {
      for (int k = 0; k < m; ++k) {
        std::uint64_t elements = 0;
        read_member(s, routine, &elements, s.collect_count, sizeof(elements), world_pe(*team, k));
        counts[static_cast<std::size_t>(k)] = static_cast<std::size_t>(elements) * element_bytes;
      }
    }
    std::size_t total = 0;
    for (std::size_t c : counts) total += c;
    require_symmetric_range(s, routine, dest, total, "destination");
    Landing landing(dest, total, source, bytes);
    std::size_t offset = 0;
    for (int k = 0; k < m; ++k) {
      const std::size_t c = counts[static_cast<std::size_t>(k)];
      read_member(s, routine, landing.at() + offset, source, c, world_pe(*team, k));
      offset += c;
    }
    return landing;
  });
}

// alltoall(s) on elements of kBytes bytes: team PE k reads block k of every member l's source
// (elements sst * (k * nelems + j)) into block l of its dest (elements dst * (l * nelems + j)),
// by load/store from a mapped member, else from the block's whole span fetched in one get.
template <std::size_t kBytes>
int alltoalls(const char* routine, shmem_team_t team, void* dest, const void* source,
              std::ptrdiff_t dst, std::ptrdiff_t sst, std::size_t nelems) {
  State& s = state(routine);
  if (!usable_team(team) || dst < 1 || sst < 1) return -1;
  const int m = team->team.size;
  const auto dstride = static_cast<std::size_t>(dst);
  const auto sstride = static_cast<std::size_t>(sst);
  const std::size_t all = nelems * static_cast<std::size_t>(m);
  const std::size_t dest_bytes = span_bytes<kBytes>(all, dstride);
  const std::size_t source_bytes = span_bytes<kBytes>(all, sstride);
  require_symmetric_range(s, routine, dest, dest_bytes, "destination");
  require_symmetric_range(s, routine, source, source_bytes, "source");
  return run_collective(s, routine, *team, [&] {
    Landing landing(dest, dest_bytes, source, source_bytes);
    if (nelems == 0) return landing;
    const auto k = static_cast<std::size_t>(team->team.my_rank);
    const auto* from = static_cast<const char*>(source) + k * nelems * sstride * kBytes;
    const std::size_t block_span = span_bytes<kBytes>(nelems, sstride);
    std::vector<char> bounce;  // an unmapped member's block, fetched with one get
    for (int l = 0; l < m; ++l) {
      char* to = landing.at() + static_cast<std::size_t>(l) * nelems * dstride * kBytes;
      const int pe = world_pe(*team, l);
      const char* in = ctx_of(s, from).ptr(from, pe);
      if (in == nullptr) {
        bounce.resize(block_span);
        read_member(s, routine, bounce.data(), from, block_span, pe);
        in = bounce.data();
      }
      if (dstride == 1 && sstride == 1) {
        std::memcpy(to, in, nelems * kBytes);
      } else {
        for (std::size_t j = 0; j < nelems; ++j) {
          std::memcpy(to + j * dstride * kBytes, in + j * sstride * kBytes, kBytes);
        }
      }
    }
    return landing;
  });
}

}  // namespace
}  // namespace tessera::shmem

namespace ts = tessera::shmem;

extern "C" {

void shmem_sync(int PE_start, int logPE_stride, int PE_size, long* pSync) {
  (void)pSync;
  ts::State& s = ts::state("shmem_sync");
  const tessera_shmem_team set = ts::active_set(s, "shmem_sync", PE_start, logPE_stride, PE_size);
  ts::team_sync(s, set, "shmem_sync");
}

void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long* pSync) {
  (void)pSync;
  ts::State& s = ts::state("shmem_barrier");
  const tessera_shmem_team set =
      ts::active_set(s, "shmem_barrier", PE_start, logPE_stride, PE_size);
  ts::guarded("shmem_barrier", [&] { tessera::device::quiet(s.ctx); });
  ts::team_sync(s, set, "shmem_barrier");
}

int shmem_broadcastmem(shmem_team_t team, void* dest, const void* source, size_t nelems,
                       int PE_root) {
  return ts::broadcast("shmem_broadcastmem", team, dest, source, nelems, PE_root);
}
int shmem_collectmem(shmem_team_t team, void* dest, const void* source, size_t nelems) {
  return ts::collect("shmem_collectmem", team, dest, source, nelems, 1, false);
}
int shmem_fcollectmem(shmem_team_t team, void* dest, const void* source, size_t nelems) {
  return ts::collect("shmem_fcollectmem", team, dest, source, nelems, 1, true);
}
int shmem_alltoallmem(shmem_team_t team, void* dest, const void* source, size_t nelems) {
  return ts::alltoalls<1>("shmem_alltoallmem", team, dest, source, 1, 1, nelems);
}
int shmem_alltoallsmem(shmem_team_t team, void* dest, const void* source, ptrdiff_t dst,
                       ptrdiff_t sst, size_t nelems) {
  return ts::alltoalls<1>("shmem_alltoallsmem", team, dest, source, dst, sst, nelems);
}

// The typed collectives of one TYPENAME: the byte routines on sizeof(TYPE)-byte elements.
#define TESSERA_SHMEM_DEFINE_COLLECTIVES(NAME, TYPE)                                              \
  int shmem_##NAME##_broadcast(shmem_team_t team, TYPE* dest, const TYPE* source, size_t nelems,  \
                               int PE_root) {                                                     \
    return ts::broadcast("shmem_" #NAME "_broadcast", team, dest, source, nelems * sizeof(TYPE),  \
                         PE_root);                                                                \
  }                                                                                               \
  int shmem_##NAME##_collect(shmem_team_t team, TYPE* dest, const TYPE* source, size_t nelems) {  \
    return ts::collect("shmem_" #NAME "_collect", team, dest, source, nelems * sizeof(TYPE),      \
                       sizeof(TYPE), false);                                                      \
  }                                                                                               \
  int shmem_##NAME##_fcollect(shmem_team_t team, TYPE* dest, const TYPE* source, size_t nelems) { \
    return ts::collect("shmem_" #NAME "_fcollect", team, dest, source, nelems * sizeof(TYPE),     \
                       sizeof(TYPE), true);                                                       \
  }                                                                                               \
  int shmem_##NAME##_alltoall(shmem_team_t team, TYPE* dest, const TYPE* source, size_t nelems) { \
    return ts::alltoalls<sizeof(TYPE)>("shmem_" #NAME "_alltoall", team, dest, source, 1, 1,      \
                                       nelems);                                                   \
  }                                                                                               \
  int shmem_##NAME##_alltoalls(shmem_team_t team, TYPE* dest, const TYPE* source, ptrdiff_t dst,  \
                               ptrdiff_t sst, size_t nelems) {                                    \
    return ts::alltoalls<sizeof(TYPE)>("shmem_" #NAME "_alltoalls", team, dest, source, dst, sst, \
                                       nelems);                                                   \
  }
TESSERA_SHMEM_RMA_TYPES(TESSERA_SHMEM_DEFINE_COLLECTIVES)
#undef TESSERA_SHMEM_DEFINE_COLLECTIVES

}  // extern "C"
