// Device teams and grid_sync across processes: `mpirun -np N device_team [rounds]`. For every
// group (Thread, Warp, Block) each member writes into the next member of its team (even / odd
// world PEs, and the world), barriers on the team and checks what arrived; then a multi-block
// grid syncs with grid_sync around one block's barrier. Exits non-zero on any wrong value or
// error; run with TESSERA_CHECK=0 and =1.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "tessera/device.hpp"
#include "tessera/launch.hpp"
#include "tessera/runtime.hpp"
#include "tessera/stream.hpp"
#include "tessera/team.hpp"

namespace td = tessera::device;

namespace {

template <class G>
G group_in(td::Block blk) {
  if constexpr (std::is_same_v<G, td::Block>) {
    return blk;
  } else {
    return G{};
  }
}

// Rounds of: put my round number into the next member's slot, barrier on the team, check mine.
template <class G>
std::uint64_t ring_rounds(tessera::Runtime& rt, const tessera::Team& team, std::uint64_t* slot,
                          std::uint64_t* bad, std::uint64_t rounds, std::uint64_t base) {
  const auto ctx = rt.device_context();
  tessera::launch(rt.stream(), 1, [=](td::Block blk) {
    const G g = group_in<G>(blk);
    const int next = team.pe((team.my_rank + 1) % team.size);
    for (std::uint64_t r = 1; r <= rounds; ++r) {
      const std::uint64_t value = base + r;
      td::put_nbi(g, ctx, td::make_tile(slot, 1), td::make_tile<const std::uint64_t>(&value, 1),
                  next);
      td::barrier(g, ctx, team);
      if (g.rank() == 0 && td::atomic_load(ctx, slot, ctx.my_pe, td::Sem::relaxed) != value)
        td::atomic_add(ctx, bad, std::uint64_t{1}, ctx.my_pe);
      td::team_sync(g, ctx, team);
    }
  });
  rt.stream().synchronize();
  return base + rounds;
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t rounds = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 200;
  try {
    auto options = tessera::Options::from_env();
    if (std::getenv("TESSERA_HEAP_SIZE") == nullptr) options.heap_size = std::size_t{64} << 20;
    auto rt = tessera::Runtime::init(options);
    const tessera::Team world = tessera::team_world(rt);
    const int odd_count = rt.n_pes() / 2;
    const tessera::Team even = tessera::team_split_strided(rt, world, 0, 2, rt.n_pes() - odd_count);
    const tessera::Team odd =
        odd_count > 0 ? tessera::team_split_strided(rt, world, 1, 2, odd_count) : even;
    const tessera::Team& mine = rt.pe() % 2 == 0 ? even : odd;
    auto slot = rt.alloc<std::uint64_t>(1);
    auto bad = rt.alloc<std::uint64_t>(1);
    slot[0] = bad[0] = 0;
    rt.barrier();
    std::uint64_t base = 0;
    for (const tessera::Team* t : {&mine, &world}) {
      base = ring_rounds<td::Thread>(rt, *t, slot.get(), bad.get(), rounds, base);
      base = ring_rounds<td::Warp>(rt, *t, slot.get(), bad.get(), rounds, base);
      base = ring_rounds<td::Block>(rt, *t, slot.get(), bad.get(), rounds, base);
      // The other sub-team may still be in its rounds: its slots are not free before this.
      rt.barrier();
    }
    // A 4-block grid: block 0 enters the world barrier between two grid_syncs, and every block
    // then reads the value the left PE's block 1 stored before its barrier.
    const auto ctx = rt.device_context();
    std::uint64_t* s = slot.get();
    std::uint64_t* b = bad.get();
    tessera::launch(rt.stream(), 4, [=](td::Block blk) {
      for (std::uint64_t r = 1; r <= rounds; ++r) {
        if (blk.block_id() == 1 && blk.rank() == 0)
          td::atomic_store(ctx, s, r, (ctx.my_pe + 1) % ctx.n_pes, td::Sem::relaxed);
        td::grid_sync(blk, ctx);
        if (blk.block_id() == 0) td::barrier(blk, ctx);
        td::grid_sync(blk, ctx);
        if (blk.rank() == 0 && td::atomic_load(ctx, s, ctx.my_pe, td::Sem::relaxed) != r)
          td::atomic_add(ctx, b, std::uint64_t{1}, ctx.my_pe);
        td::grid_sync(blk, ctx);
        if (blk.block_id() == 0) td::sync_all(blk, ctx);
        td::grid_sync(blk, ctx);
      }
    });
    rt.stream().synchronize();
    rt.barrier();
    const std::uint64_t errors = bad[0];
    std::printf(
        "device_team PE %d/%d: team rank %d of %d, %llu rounds per group and team, %llu "
        "errors\n",
        rt.pe(), rt.n_pes(), mine.my_rank, mine.size, static_cast<unsigned long long>(rounds),
        static_cast<unsigned long long>(errors));
    std::fflush(stdout);
    rt.finalize();
    return errors == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "device_team: %s\n", e.what());
    return 2;
  }
}
