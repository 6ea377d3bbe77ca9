// The MPI bootstrap: the one file of Tessera that includes <mpi.h> (STYLE habit 7).
//
// Every call runs on a private duplicate of the caller's communicator with MPI_ERRORS_RETURN,
// so Tessera's traffic never matches the application's and an MPI failure becomes an Error
// instead of an abort. With a timeout, each call is nonblocking MPI driven by MPI_Test against
// a deadline; without one, it is the plain blocking call.
// The C API only: the deprecated C++ bindings do not compile warning-free.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tessera/bootstrap.hpp"
#include "tessera/error.hpp"

namespace tessera {
namespace {

using Clock = std::chrono::steady_clock;

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) {
    return "MPI error code " + std::to_string(code);
  }
  return std::string(text, static_cast<std::size_t>(length));
}

// A process failure is the one MPI error class that means "a peer is gone"; only MPI libraries
// with fault tolerance (ULFM, MPI 5) report it, others abort the job or report it as a plain
// error.
ErrorCode error_code_for(int mpi_code) {
  int error_class = mpi_code;
  MPI_Error_class(mpi_code, &error_class);
#if defined(MPI_ERR_PROC_FAILED)
  if (error_class == MPI_ERR_PROC_FAILED) return ErrorCode::peer_lost;
#endif
#if defined(MPIX_ERR_PROC_FAILED)
  if (error_class == MPIX_ERR_PROC_FAILED) return ErrorCode::peer_lost;
#endif
  return ErrorCode::bootstrap;
}

void check_mpi(int code, int rank, const std::string& what) {
  if (code == MPI_SUCCESS) return;
  throw Error(error_code_for(code), rank,
              "mpi bootstrap: " + what + " failed: " + mpi_error_text(code));
}

// Set once a rank left its job after a failure (Bootstrap::abort): MPI_Finalize would wait for
// peers that may never come, so the exit aborts the job instead.
std::atomic<bool> abort_at_exit{false};

void finalize_mpi_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (abort_at_exit.load()) {
    std::fprintf(stderr,
                 "tessera: mpi bootstrap: this rank left the job after a failure; aborting the "
                 "MPI job instead of finalizing\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
}

// Initialises MPI once per process when the application has not. MPI can be initialised only
// once in a process, so it is finalised at exit rather than when a Runtime ends: a later
// Runtime in the same process needs it again.
void ensure_mpi_initialised() {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (initialised) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) {
      throw Error(ErrorCode::bootstrap, -1,
                  "mpi bootstrap: MPI was already finalised in this process, and MPI cannot be "
                  "initialised twice; create Tessera runtimes before MPI_Finalize");
    }
    return;
  }
  int provided = 0;
  const int code = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  if (code != MPI_SUCCESS) {
    throw Error(ErrorCode::bootstrap, -1,
                "mpi bootstrap: MPI_Init_thread failed: " + mpi_error_text(code));
  }
  if (std::atexit(finalize_mpi_at_exit) != 0) {
    throw Error(ErrorCode::bootstrap, -1,
                "mpi bootstrap: could not register MPI_Finalize to run at exit");
  }
}

int checked_count(std::size_t bytes, int rank, const char* op) {
  if (bytes > static_cast<std::size_t>(INT_MAX)) {
    throw Error(ErrorCode::invalid_argument, rank,
                std::string("mpi bootstrap: ") + op + " of " + std::to_string(bytes) +
                    " bytes exceeds MPI's limit of " + std::to_string(INT_MAX) + " bytes per call");
  }
  return static_cast<int>(bytes);
}

class MpiBootstrap final : public Bootstrap {
 public:
  MpiBootstrap(MPI_Comm parent, Timeout timeout) : timeout_(timeout) {
    int parent_rank = -1;
    MPI_Comm_rank(parent, &parent_rank);
    check_mpi(MPI_Comm_dup(parent, &comm_), parent_rank, "MPI_Comm_dup");
    const int code = MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    if (code != MPI_SUCCESS) {
      MPI_Comm_free(&comm_);
      check_mpi(code, parent_rank, "MPI_Comm_set_errhandler");
    }
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    void* tag_ub = nullptr;
    int found = 0;
    MPI_Comm_get_attr(comm_, MPI_TAG_UB, &tag_ub, &found);
    if (found) max_tag_ = *static_cast<int*>(tag_ub);
  }

  ~MpiBootstrap() override {
    // A bootstrap that outlives MPI (a static destroyed after the atexit finalisation) has
    // nothing left to free.
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }

  MpiBootstrap(const MpiBootstrap&) = delete;
  MpiBootstrap& operator=(const MpiBootstrap&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* name() const override { return "mpi"; }

  // MPI without fault tolerance never reports a dead rank; the runtime's peer watch does.
  void peer_lost(int peer) override {
    int none = -1;
    lost_.compare_exchange_strong(none, peer);
  }
  void abort() override { abort_at_exit.store(true); }
  // shmem_global_exit: mpirun's exit status is the errorcode given here.
  void end_job(int status) override { MPI_Abort(MPI_COMM_WORLD, status); }

  void allgather(void* buf, std::size_t bytes_per_rank) override {
    const int count = checked_count(bytes_per_rank, rank_, "allgather");
    if (timeout_.count() <= 0) {
      check_mpi(MPI_Allgather(MPI_IN_PLACE, 0, MPI_BYTE, buf, count, MPI_BYTE, comm_), rank_,
                "MPI_Allgather");
      return;
    }
    const std::size_t total = bytes_per_rank * static_cast<std::size_t>(size_);
    Staging staging(total);
    std::memcpy(staging.data(), buf, total);
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(
        MPI_Iallgather(MPI_IN_PLACE, 0, MPI_BYTE, staging.data(), count, MPI_BYTE, comm_, &request),
        rank_, "MPI_Iallgather");
    wait(request, staging, "allgather of " + std::to_string(bytes_per_rank) + " bytes per rank");
    std::memcpy(buf, staging.data(), total);
  }

  void barrier() override {
    if (timeout_.count() <= 0) {
      check_mpi(MPI_Barrier(comm_), rank_, "MPI_Barrier");
      return;
    }
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Ibarrier(comm_, &request), rank_, "MPI_Ibarrier");
    Staging none(0);
    wait(request, none, "barrier");
  }

  void send(int peer, const void* buf, std::size_t bytes, int tag) override {
    check_peer_and_tag(peer, tag, "send to");
    const int count = checked_count(bytes, rank_, "send");
    if (timeout_.count() <= 0) {
      check_mpi(MPI_Send(buf, count, MPI_BYTE, peer, tag, comm_), rank_,
                "MPI_Send to rank " + std::to_string(peer));
      return;
    }
    Staging staging(bytes);
    if (bytes > 0) std::memcpy(staging.data(), buf, bytes);
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Isend(staging.data(), count, MPI_BYTE, peer, tag, comm_, &request), rank_,
              "MPI_Isend to rank " + std::to_string(peer));
    wait(request, staging,
         "send of " + std::to_string(bytes) + " bytes to rank " + std::to_string(peer) +
             " with tag " + std::to_string(tag));
  }

  void recv(int peer, void* buf, std::size_t bytes, int tag) override {
    check_peer_and_tag(peer, tag, "recv from");
    const int count = checked_count(bytes, rank_, "recv");
    const std::string what = "recv of " + std::to_string(bytes) + " bytes from rank " +
                             std::to_string(peer) + " with tag " + std::to_string(tag);
    // A matched probe first: it tells the message's size before any byte lands in buf, and
    // no other thread can receive the message between the probe and the receive.
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Status status;
    if (timeout_.count() <= 0) {
      check_mpi(MPI_Mprobe(peer, tag, comm_, &message, &status), rank_, "MPI_Mprobe");
    } else {
      const Clock::time_point deadline = Clock::now() + timeout_;
      for (;;) {
        int flag = 0;
        check_mpi(MPI_Improbe(peer, tag, comm_, &flag, &message, &status), rank_, "MPI_Improbe");
        if (flag) break;
        check_lost(what);
        if (Clock::now() >= deadline) throw timeout_error(what);
        std::this_thread::yield();
      }
    }
    int received = 0;
    check_mpi(MPI_Get_count(&status, MPI_BYTE, &received), rank_, "MPI_Get_count");
    if (received != count) {
      // Take the message off the queue so the channel stays usable after the error.
      std::vector<unsigned char> discard(static_cast<std::size_t>(received));
      MPI_Mrecv(discard.data(), received, MPI_BYTE, &message, MPI_STATUS_IGNORE);
      throw Error(ErrorCode::bootstrap, rank_,
                  "mpi bootstrap: recv from rank " + std::to_string(peer) + " with tag " +
                      std::to_string(tag) + " expected " + std::to_string(bytes) +
                      " bytes, but the message holds " + std::to_string(received) + " bytes");
    }
    if (timeout_.count() <= 0) {
      check_mpi(MPI_Mrecv(buf, count, MPI_BYTE, &message, MPI_STATUS_IGNORE), rank_,
                "MPI_Mrecv from rank " + std::to_string(peer));
      return;
    }
    Staging staging(bytes);
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Imrecv(staging.data(), count, MPI_BYTE, &message, &request), rank_,
              "MPI_Imrecv from rank " + std::to_string(peer));
    wait(request, staging, what);
    if (bytes > 0) std::memcpy(buf, staging.data(), bytes);
  }

 private:
  // The buffer a nonblocking operation works on. A collective request cannot be cancelled or
  // freed, so after a timeout MPI may still write into (or read from) its buffer: abandon()
  // leaks the buffer on purpose rather than let MPI touch the caller's memory after return.
  class Staging {
   public:
    explicit Staging(std::size_t bytes) : bytes_(new unsigned char[bytes > 0 ? bytes : 1]) {}
    unsigned char* data() { return bytes_.get(); }
    void abandon() { static_cast<void>(bytes_.release()); }

   private:
    std::unique_ptr<unsigned char[]> bytes_;
  };

  void wait(MPI_Request& request, Staging& staging, const std::string& what) {
    const Clock::time_point deadline = Clock::now() + timeout_;
    for (;;) {
      int done = 0;
      const int code = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (code != MPI_SUCCESS) {
        staging.abandon();
        check_mpi(code, rank_, what);
      }
      if (done) return;
      if (lost_.load() >= 0) staging.abandon();
      check_lost(what);
      if (Clock::now() >= deadline) {
        staging.abandon();
        throw timeout_error(what);
      }
      std::this_thread::yield();
    }
  }

  void check_lost(const std::string& what) const {
    const int peer = lost_.load();
    if (peer < 0) return;
    throw Error(ErrorCode::peer_lost, rank_,
                "mpi bootstrap: " + what + " cannot complete: rank " + std::to_string(peer) +
                    " is lost (its process ended)");
  }

  Error timeout_error(const std::string& what) const {
    const double seconds = static_cast<double>(timeout_.count()) / 1000.0;
    std::string text = std::to_string(seconds);
    text.erase(text.find_last_not_of('0') + 1);
    if (!text.empty() && text.back() == '.') text.pop_back();
    return Error(ErrorCode::timeout, rank_,
                 "mpi bootstrap: " + what + " did not complete within " + text +
                     " s (a rank has not reached the matching call, or is stuck; "
                     "TESSERA_TIMEOUT raises the bound)");
  }

  void check_peer_and_tag(int peer, int tag, const char* op) const {
    if (peer < 0 || peer >= size_) {
      throw Error(ErrorCode::invalid_argument, rank_,
                  std::string("mpi bootstrap: ") + op + " rank " + std::to_string(peer) +
                      ", but the job has ranks 0.." + std::to_string(size_ - 1));
    }
    if (tag < 0 || tag > max_tag_) {
      throw Error(ErrorCode::invalid_argument, rank_,
                  "mpi bootstrap: tag " + std::to_string(tag) + " is outside MPI's range 0.." +
                      std::to_string(max_tag_));
    }
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  Timeout timeout_;
  int rank_ = -1;
  int size_ = 0;
  int max_tag_ = 32767;        // the least MPI_TAG_UB the standard allows
  std::atomic<int> lost_{-1};  // a rank the runtime saw die (peer_lost), or -1
};

}  // namespace

bool mpi_bootstrap_available() { return true; }

std::unique_ptr<Bootstrap> make_mpi_bootstrap(const void* mpi_comm, Timeout timeout) {
  ensure_mpi_initialised();
  const MPI_Comm parent =
      mpi_comm != nullptr ? *static_cast<const MPI_Comm*>(mpi_comm) : MPI_COMM_WORLD;
  if (parent == MPI_COMM_NULL) {
    throw Error(ErrorCode::invalid_argument, -1,
                "mpi bootstrap: the communicator is MPI_COMM_NULL (is this rank outside it?)");
  }
  return std::make_unique<MpiBootstrap>(parent, timeout);
}

}  // namespace tessera
