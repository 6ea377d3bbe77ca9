// The bootstrap: how the PEs of a job find each other and exchange the few bytes needed to
// build the symmetric heap. Three implementations: threads (PEs inside one process, for tests),
// mpi (a user's communicator or MPI_COMM_WORLD) and tcp (a UniqueId, or torchrun's variables).
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace tessera {

// A collective-capable channel between the PEs of one job. All calls block; collective calls
// (allgather, barrier) must be made by every rank in the same order. Every blocking call is
// bounded by the timeout the bootstrap was made with and throws Error(timeout) past it, or
// Error(peer_lost) naming the rank when a peer's connection closes.
class Bootstrap {
 public:
  virtual ~Bootstrap() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // "threads", "mpi" or "tcp".
  virtual const char* name() const = 0;

  // In place: buf holds size() * bytes_per_rank bytes, this rank's part already at
  // buf + rank() * bytes_per_rank; on return every part is filled in.
  virtual void allgather(void* buf, std::size_t bytes_per_rank) = 0;
  virtual void barrier() = 0;
  // Point to point: messages between two ranks with the same tag arrive in order; recv must
  // name exactly the bytes that were sent (a mismatch throws).
  virtual void send(int peer, const void* buf, std::size_t bytes, int tag) = 0;
  virtual void recv(int peer, void* buf, std::size_t bytes, int tag) = 0;

  // Thread-safe, from any thread: rank `peer` is gone (its process ended). Blocking calls in
  // progress and later ones fail with Error(peer_lost) naming it, instead of waiting for their
  // bound. The default does nothing: for bootstraps that see a closed connection themselves.
  virtual void peer_lost(int peer) { static_cast<void>(peer); }
  // This rank leaves the job after a failure, without the collective goodbye; called just
  // before the bootstrap is destroyed. Peers must learn of it promptly: threads and tcp close
  // this rank's connections (peers see PeerLost naming it); mpi aborts the job (MPI_Abort) when
  // this process exits, since MPI_Finalize would wait for peers that may never come.
  virtual void abort() {}
  // Ends every rank of the job now, with `status` as the job's exit status where
  // the launcher takes it from here: mpi calls MPI_Abort(MPI_COMM_WORLD, status), which mpirun
  // returns. The default does nothing and returns; the caller then exits with `status` itself
  // (shmem_global_exit).
  virtual void end_job(int status) { static_cast<void>(status); }
};

// Everything a tcp bootstrap needs to find its root: address, port and a 128-bit random token
// that every connection must present. Made once (by one rank) and handed to all ranks by the
// application, as NCCL's unique id is; its text form travels in TESSERA_UNIQUE_ID.
struct UniqueId {
  std::array<std::uint8_t, 16> token{};
  std::string host;  // numeric IPv4 address of the root
  std::uint16_t port = 0;

  // Picks a free port on `host` (default: TESSERA_BOOTSTRAP_ADDR, else 127.0.0.1) and a token
  // from the OS's random source.
  static UniqueId create(const std::string& host = {});
  // "host:port:hex-token". parse() throws Error(invalid_argument) on anything else.
  std::string to_string() const;
  static UniqueId parse(std::string_view text);
};

// The state shared by the PEs of a threads-bootstrap job.
class ThreadsGroup;
std::shared_ptr<ThreadsGroup> make_threads_group(int n_pes);

using Timeout = std::chrono::milliseconds;  // zero means no bound

// PE `rank` of an in-process group made with make_threads_group.
std::unique_ptr<Bootstrap> make_threads_bootstrap(std::shared_ptr<ThreadsGroup> group, int rank,
                                                  Timeout timeout);

// Rank `rank` of `size` of the job named by `id`; rank 0 listens on id's address.
std::unique_ptr<Bootstrap> make_tcp_bootstrap(const UniqueId& id, int rank, int size,
                                              Timeout timeout);

// From the environment: TESSERA_UNIQUE_ID + TESSERA_RANK + TESSERA_SIZE, else torchrun's
// RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (token derived from TORCHELASTIC_RUN_ID and
// TESSERA_TOKEN). Throws Error(bootstrap) when neither set is complete.
std::unique_ptr<Bootstrap> make_tcp_bootstrap_from_env(Timeout timeout);

// True when Tessera was built with MPI.
bool mpi_bootstrap_available();

// From an MPI communicator: `mpi_comm` points at an MPI_Comm, or is null for MPI_COMM_WORLD.
// Initialises MPI (MPI_THREAD_MULTIPLE) when the application has not; the communicator is
// duplicated, so Tessera's traffic never mixes with the application's.
std::unique_ptr<Bootstrap> make_mpi_bootstrap(const void* mpi_comm, Timeout timeout);

}  // namespace tessera
