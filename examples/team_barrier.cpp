// Device teams and grid_sync: the PEs split into an even and an odd team (made on the host,
// passed to the kernel by value); every step each member's block 0 sends its value to every
// member of its team, barriers on the team alone, and the grid's blocks (after grid_sync) check
// what arrived, counting errors with an atomic on the symmetric heap. Prints one line per PE.
//   mpirun -np 4 team_barrier [steps] [blocks]     or, as one PE:   team_barrier [steps]
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

// The value member `pe` sends in step `step`.
TESSERA_HOST_DEVICE constexpr std::uint64_t value_of(int pe, std::uint64_t step) {
  return static_cast<std::uint64_t>(pe) * 1000003u + step;
}

struct TeamStep {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, td::Team team,
                                      std::uint64_t* slots,   // symmetric: team.size words
                                      std::uint64_t* errors,  // symmetric: one word, on PE 0
                                      std::uint64_t step) const {
    if (blk.block_id() == 0) {
      // My value into slot my_rank of every member (myself included), then the team's barrier:
      // once it returns, every member's value is in my slots. Only this block enters it.
      const std::uint64_t mine = value_of(ctx.my_pe, step);
      for (int r = 0; r < team.size; ++r) {
        td::put_nbi(blk, ctx, td::make_tile(slots + team.my_rank, 1),
                    td::make_tile<const std::uint64_t>(&mine, 1), team.pe(r));
      }
      td::barrier(blk, ctx, team);
    }
    // The other blocks of this launch wait here for block 0, then see what its barrier saw.
    td::grid_sync(blk, ctx);
    for (int r = blk.block_id(); r < team.size; r += blk.grid_size()) {
      const int from = team.pe(r);
      if (blk.rank() == 0 && slots[r] != value_of(from, step))
        td::atomic_add(ctx, errors, std::uint64_t{1}, 0);
    }
    // Nobody's next step may overwrite a slot before every block of every member has read it.
    td::grid_sync(blk, ctx);
    if (blk.block_id() == 0) td::team_sync(blk, ctx, team);
  }
};

int main(int argc, char** argv) {
  const std::uint64_t steps = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 500;
  const int blocks = argc > 2 ? std::atoi(argv[2]) : 3;
  try {
    auto options = tessera::Options::from_env();
    if (std::getenv("TESSERA_HEAP_SIZE") == nullptr) options.heap_size = std::size_t{64} << 20;
    auto rt = tessera::Runtime::init(options);
    const tessera::Team world = tessera::team_world(rt);
    const int odd_count = rt.n_pes() / 2;
    const tessera::Team even = tessera::team_split_strided(rt, world, 0, 2, rt.n_pes() - odd_count);
    // A one-PE job has no odd PE: its odd team is the even one, never used.
    const tessera::Team odd =
        odd_count > 0 ? tessera::team_split_strided(rt, world, 1, 2, odd_count) : even;
    const tessera::Team& mine = rt.pe() % 2 == 0 ? even : odd;
    // Symmetric allocations are collective: every PE asks for the larger (even) team's size.
    auto slots = rt.alloc<std::uint64_t>(static_cast<std::size_t>(even.size));
    auto errors = rt.alloc<std::uint64_t>(1);
    errors[0] = 0;
    rt.barrier();

    for (std::uint64_t s = 1; s <= steps; ++s) {
      tessera::launch(rt.stream(), blocks, TeamStep{}, rt.device_context(), mine, slots.get(),
                      errors.get(), s);
    }
    rt.stream().synchronize();
    rt.barrier();

    const std::uint64_t total = rt.pe() == 0 ? errors[0] : 0;
    // Team rank r of my team is world PE team.pe(r); translate maps it into the world team.
    const int first_in_world = td::translate(mine, 0, world);
    std::printf(
        "team_barrier PE %d/%d: team rank %d of %d (first member: world PE %d), %llu steps "
        "of %d blocks%s\n",
        rt.pe(), rt.n_pes(), mine.my_rank, mine.size, first_in_world,
        static_cast<unsigned long long>(steps), blocks,
        rt.pe() == 0 ? (total == 0 ? ", 0 errors" : ", ERRORS") : "");
    std::fflush(stdout);
    const bool ok = total == 0 && first_in_world == rt.pe() % 2;
    rt.finalize();
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "team_barrier: %s\n", e.what());
    return 1;
  }
}
