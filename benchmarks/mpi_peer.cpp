// The MPI peer of tessera-bench: the one file of benchmarks/ that includes <mpi.h>.
//
// MPI is never initialized or finalized here: under mpirun, Tessera's MPI bootstrap has
// initialized it (MPI_THREAD_MULTIPLE) and finalizes it at exit. Under any other launcher MPI
// is not initialized and the peer is reported unavailable.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "mpi_peer.hpp"
#include "tessera/error.hpp"

namespace tessera::bench::peer {
namespace {

void check(int code, int pe, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(ErrorCode::internal, pe,
              std::string("mpi peer: ") + what + " failed: " + std::string(text, length));
}

double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A barrier whose waiters sleep between tests, so idle ranks leave the cores to ranks 0 and 1.
void idle_barrier(MPI_Comm comm, int pe) {
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Ibarrier(comm, &request), pe, "MPI_Ibarrier");
  for (int done = 0;;) {
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), pe, "MPI_Test");
    if (done) return;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

std::vector<unsigned char> warm_buffer(std::size_t bytes) {
  std::vector<unsigned char> buffer(bytes);
  for (std::size_t i = 0; i < bytes; ++i) buffer[i] = static_cast<unsigned char>(i * 131 + 7);
  return buffer;
}

// RAII for a communicator we created.
struct CommHandle {
  MPI_Comm comm = MPI_COMM_NULL;
  ~CommHandle() {
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

}  // namespace

std::string unavailable_reason(int pe, int n_pes) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) return "unavailable: not launched under mpirun (MPI is not initialized)";
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return "unavailable: MPI is already finalized";
  int rank = -1;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank != pe || size != n_pes) {
    return "unavailable: MPI_COMM_WORLD (rank " + std::to_string(rank) + " of " +
           std::to_string(size) + ") does not match the tessera job (PE " + std::to_string(pe) +
           " of " + std::to_string(n_pes) + ")";
  }
  return {};
}

namespace {

// put() and put_rate(): PE 0 puts into PE 1's part (`window` slots of `bytes`) of an MPI
// shared-memory window on the node communicator, `window` MPI_Puts then one MPI_Win_flush per
// sample, under one MPI_Win_lock_all.
PeerTimes shared_window_puts(int pe, int n_pes, std::size_t bytes, int window, int warmup,
                             int iters) {
  PeerTimes result;
  result.unavailable = unavailable_reason(pe, n_pes);
  if (!result.unavailable.empty()) return result;

  // Shared windows need PEs 0 and 1 on one node: the node communicator must hold both.
  CommHandle node;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node.comm), pe,
        "MPI_Comm_split_type");
  int node_rank = -1;
  MPI_Comm_rank(node.comm, &node_rank);
  int both_on_node = (pe == 0 || pe == 1) ? (node_rank == pe ? 1 : 0) : 1;
  check(MPI_Allreduce(MPI_IN_PLACE, &both_on_node, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD), pe,
        "MPI_Allreduce");
  if (!both_on_node) {
    result.unavailable = "unavailable: PEs 0 and 1 are not on one node (no MPI shared window)";
    return result;
  }

  const std::size_t window_bytes = bytes * static_cast<std::size_t>(window);
  void* base = nullptr;
  MPI_Win win = MPI_WIN_NULL;
  const auto local_bytes = static_cast<MPI_Aint>(pe == 1 ? window_bytes : 0);
  check(MPI_Win_allocate_shared(local_bytes, 1, MPI_INFO_NULL, node.comm, &base, &win), pe,
        "MPI_Win_allocate_shared");
  if (pe == 1) std::memset(base, 0, window_bytes);  // fault the pages in before anything is timed
  check(MPI_Barrier(MPI_COMM_WORLD), pe, "MPI_Barrier");
  check(MPI_Win_lock_all(MPI_MODE_NOCHECK, win), pe, "MPI_Win_lock_all");
  if (pe == 0) {
    const std::vector<unsigned char> src = warm_buffer(bytes);
    const int count = static_cast<int>(bytes);
    for (int i = 0; i < warmup + iters; ++i) {
      const double t0 = now_us();
      for (int w = 0; w < window; ++w) {
        check(MPI_Put(src.data(), count, MPI_BYTE, 1, static_cast<MPI_Aint>(w) * count, count,
                      MPI_BYTE, win),
              pe, "MPI_Put");
      }
      check(MPI_Win_flush(1, win), pe, "MPI_Win_flush");
      const double t1 = now_us();
      if (i >= warmup) result.us.push_back(t1 - t0);
    }
  }
  idle_barrier(MPI_COMM_WORLD, pe);
  check(MPI_Win_unlock_all(win), pe, "MPI_Win_unlock_all");
  check(MPI_Win_free(&win), pe, "MPI_Win_free");
  return result;
}

}  // namespace

PeerTimes put(int pe, int n_pes, std::size_t bytes, int warmup, int iters) {
  return shared_window_puts(pe, n_pes, bytes, 1, warmup, iters);
}

PeerTimes put_rate(int pe, int n_pes, std::size_t bytes, int window, int warmup, int iters) {
  return shared_window_puts(pe, n_pes, bytes, window, warmup, iters);
}

PeerTimes pingpong(int pe, int n_pes, std::size_t bytes, int warmup, int iters) {
  PeerTimes result;
  result.unavailable = unavailable_reason(pe, n_pes);
  if (!result.unavailable.empty()) return result;

  constexpr int kTag = 0x7e55;
  const int count = static_cast<int>(bytes);
  std::vector<unsigned char> buffer = warm_buffer(bytes);
  if (pe == 0) {
    for (int i = 0; i < warmup + iters; ++i) {
      const double t0 = now_us();
      check(MPI_Send(buffer.data(), count, MPI_BYTE, 1, kTag, MPI_COMM_WORLD), pe, "MPI_Send");
      check(MPI_Recv(buffer.data(), count, MPI_BYTE, 1, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
            pe, "MPI_Recv");
      const double t1 = now_us();
      if (i >= warmup) result.us.push_back((t1 - t0) / 2);
    }
  } else if (pe == 1) {
    for (int i = 0; i < warmup + iters; ++i) {
      check(MPI_Recv(buffer.data(), count, MPI_BYTE, 0, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
            pe, "MPI_Recv");
      check(MPI_Send(buffer.data(), count, MPI_BYTE, 0, kTag, MPI_COMM_WORLD), pe, "MPI_Send");
    }
  }
  idle_barrier(MPI_COMM_WORLD, pe);
  return result;
}

PeerTimes allgather(int pe, int n_pes, std::size_t bytes_per_pe, int warmup, int iters) {
  PeerTimes result;
  result.unavailable = unavailable_reason(pe, n_pes);
  if (!result.unavailable.empty()) return result;
  const int count = static_cast<int>(bytes_per_pe);
  const std::vector<unsigned char> send = warm_buffer(bytes_per_pe);
  std::vector<unsigned char> recv = warm_buffer(bytes_per_pe * static_cast<std::size_t>(n_pes));
  for (int i = 0; i < warmup + iters; ++i) {
    check(MPI_Barrier(MPI_COMM_WORLD), pe, "MPI_Barrier");
    const double t0 = now_us();
    check(MPI_Allgather(send.data(), count, MPI_BYTE, recv.data(), count, MPI_BYTE, MPI_COMM_WORLD),
          pe, "MPI_Allgather");
    const double t1 = now_us();
    if (pe == 0 && i >= warmup) result.us.push_back(t1 - t0);
  }
  idle_barrier(MPI_COMM_WORLD, pe);
  return result;
}

PeerTimes allreduce(int pe, int n_pes, std::size_t count, int warmup, int iters) {
  PeerTimes result;
  result.unavailable = unavailable_reason(pe, n_pes);
  if (!result.unavailable.empty()) return result;
  std::vector<float> send(count, 1.0f), recv(count, 0.0f);
  for (int i = 0; i < warmup + iters; ++i) {
    check(MPI_Barrier(MPI_COMM_WORLD), pe, "MPI_Barrier");
    const double t0 = now_us();
    check(MPI_Allreduce(send.data(), recv.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                        MPI_COMM_WORLD),
          pe, "MPI_Allreduce");
    const double t1 = now_us();
    if (pe == 0 && i >= warmup) result.us.push_back(t1 - t0);
  }
  idle_barrier(MPI_COMM_WORLD, pe);
  return result;
}

PeerTimes allgather_then_gemm(int pe, int n_pes, const void* send, void* recv,
                              std::size_t bytes_per_pe, const std::function<void()>& gemm,
                              int warmup, int iters, bool until_all_done) {
  PeerTimes result;
  result.unavailable = unavailable_reason(pe, n_pes);
  if (!result.unavailable.empty()) return result;
  const int count = static_cast<int>(bytes_per_pe);
  for (int i = 0; i < warmup + iters; ++i) {
    idle_barrier(MPI_COMM_WORLD, pe);
    const double t0 = now_us();
    check(MPI_Allgather(send, count, MPI_BYTE, recv, count, MPI_BYTE, MPI_COMM_WORLD), pe,
          "MPI_Allgather");
    gemm();
    if (until_all_done) idle_barrier(MPI_COMM_WORLD, pe);
    const double t1 = now_us();
    if (pe == 0 && i >= warmup) result.us.push_back(t1 - t0);
  }
  idle_barrier(MPI_COMM_WORLD, pe);
  return result;
}

PeerTimes gemm_then_reduce_scatter(int pe, int n_pes, const std::function<void()>& gemm,
                                   const float* partial, float* recv, std::size_t count_per_pe,
                                   int warmup, int iters, bool until_all_done) {
  PeerTimes result;
  result.unavailable = unavailable_reason(pe, n_pes);
  if (!result.unavailable.empty()) return result;
  const int count = static_cast<int>(count_per_pe);
  for (int i = 0; i < warmup + iters; ++i) {
    idle_barrier(MPI_COMM_WORLD, pe);
    const double t0 = now_us();
    gemm();
    check(MPI_Reduce_scatter_block(partial, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD), pe,
          "MPI_Reduce_scatter_block");
    if (until_all_done) idle_barrier(MPI_COMM_WORLD, pe);
    const double t1 = now_us();
    if (pe == 0 && i >= warmup) result.us.push_back(t1 - t0);
  }
  idle_barrier(MPI_COMM_WORLD, pe);
  return result;
}

PeerTimes gemm_then_allreduce(int pe, int n_pes, const std::function<void()>& gemm,
                              const float* partial, float* out, std::size_t count, int warmup,
                              int iters, bool until_all_done) {
  PeerTimes result;
  result.unavailable = unavailable_reason(pe, n_pes);
  if (!result.unavailable.empty()) return result;
  for (int i = 0; i < warmup + iters; ++i) {
    idle_barrier(MPI_COMM_WORLD, pe);
    const double t0 = now_us();
    gemm();
    check(MPI_Allreduce(partial, out, static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
          pe, "MPI_Allreduce");
    if (until_all_done) idle_barrier(MPI_COMM_WORLD, pe);
    const double t1 = now_us();
    if (pe == 0 && i >= warmup) result.us.push_back(t1 - t0);
  }
  idle_barrier(MPI_COMM_WORLD, pe);
  return result;
}

PeerTimes gemm_then_allgather_columns(int pe, int n_pes, const std::function<void()>& gemm,
                                      const float* block, float* c, std::size_t rows,
                                      std::size_t cols_per_pe, int warmup, int iters,
                                      bool until_all_done) {
  PeerTimes result;
  result.unavailable = unavailable_reason(pe, n_pes);
  if (!result.unavailable.empty()) return result;
  // One rank's column block inside C: `rows` runs of cols_per_pe floats, a row of C apart; the
  // extent is shrunk to one block width so rank r's block starts r * cols_per_pe floats in.
  MPI_Datatype strided = MPI_DATATYPE_NULL, column_block = MPI_DATATYPE_NULL;
  const int row_stride = static_cast<int>(cols_per_pe) * n_pes;
  check(MPI_Type_vector(static_cast<int>(rows), static_cast<int>(cols_per_pe), row_stride,
                        MPI_FLOAT, &strided),
        pe, "MPI_Type_vector");
  check(MPI_Type_create_resized(strided, 0, static_cast<MPI_Aint>(cols_per_pe * sizeof(float)),
                                &column_block),
        pe, "MPI_Type_create_resized");
  check(MPI_Type_commit(&column_block), pe, "MPI_Type_commit");
  const int count = static_cast<int>(rows * cols_per_pe);
  for (int i = 0; i < warmup + iters; ++i) {
    idle_barrier(MPI_COMM_WORLD, pe);
    const double t0 = now_us();
    gemm();
    check(MPI_Allgather(block, count, MPI_FLOAT, c, 1, column_block, MPI_COMM_WORLD), pe,
          "MPI_Allgather");
    if (until_all_done) idle_barrier(MPI_COMM_WORLD, pe);
    const double t1 = now_us();
    if (pe == 0 && i >= warmup) result.us.push_back(t1 - t0);
  }
  idle_barrier(MPI_COMM_WORLD, pe);
  MPI_Type_free(&column_block);
  MPI_Type_free(&strided);
  return result;
}

MoePeerTimes moe(int pe, int n_pes, const void* x, const std::vector<std::vector<int>>& rows_to_pe,
                 const MoeRouting& routing, std::size_t tokens, std::size_t row_bytes, int warmup,
                 int iters) {
  MoePeerTimes result;
  const std::string reason = unavailable_reason(pe, n_pes);
  if (!reason.empty()) {
    result.dispatch.unavailable = result.combine.unavailable = result.both.unavailable = reason;
    return result;
  }
  const auto n = static_cast<std::size_t>(n_pes);
  const auto topk = static_cast<std::size_t>(routing.topk);
  const std::size_t hidden = row_bytes / 2;
  // A dispatch record: the row, then per top-k slot the local expert on the destination PE (-1:
  // none there) and the weight.
  const std::size_t record_bytes = row_bytes + topk * (sizeof(std::int32_t) + sizeof(float));
  MPI_Datatype record_type = MPI_DATATYPE_NULL, row_type = MPI_DATATYPE_NULL;
  check(MPI_Type_contiguous(static_cast<int>(record_bytes), MPI_BYTE, &record_type), pe,
        "MPI_Type_contiguous");
  check(MPI_Type_commit(&record_type), pe, "MPI_Type_commit");
  check(MPI_Type_contiguous(static_cast<int>(row_bytes), MPI_BYTE, &row_type), pe,
        "MPI_Type_contiguous");
  check(MPI_Type_commit(&row_type), pe, "MPI_Type_commit");
  std::vector<int> send_counts(n), recv_counts(n), send_displs(n), recv_displs(n);
  std::size_t send_rows = 0;
  for (const auto& rows : rows_to_pe) send_rows += rows.size();
  std::vector<unsigned char> send(std::max<std::size_t>(send_rows, 1) * record_bytes), recv;
  std::vector<unsigned char> back(std::max<std::size_t>(send_rows, 1) * row_bytes), partials;
  std::vector<unsigned char> expert_x;                 // expert-major rows
  std::vector<std::size_t> expert_rows, expert_start;  // per local expert
  std::vector<std::size_t> slot_row;                   // per received record and slot: its row
  std::vector<float> acc(tokens * hidden), partial(hidden);
  std::vector<std::uint16_t> y(tokens * hidden);
  const auto* src = static_cast<const unsigned char*>(x);
  const auto local_experts = static_cast<std::size_t>(routing.experts_per_pe);
  auto bf16_to_float = [](std::uint16_t h) {
    const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
    float v;
    std::memcpy(&v, &bits, sizeof(v));
    return v;
  };
  auto float_to_bf16 = [](float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    return static_cast<std::uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
  };
  auto record_expert = [&](const unsigned char* record, std::size_t j) {
    std::int32_t e;
    std::memcpy(&e, record + row_bytes + j * sizeof(std::int32_t), sizeof(e));
    return e;
  };
  auto record_weight = [&](const unsigned char* record, std::size_t j) {
    float w;
    std::memcpy(&w, record + row_bytes + topk * sizeof(std::int32_t) + j * sizeof(float),
                sizeof(w));
    return w;
  };

  auto dispatch = [&] {
    std::size_t r = 0;
    for (std::size_t q = 0; q < n; ++q) {
      for (int t : rows_to_pe[q]) {
        unsigned char* record = send.data() + r * record_bytes;
        std::memcpy(record, src + static_cast<std::size_t>(t) * row_bytes, row_bytes);
        for (std::size_t j = 0; j < topk; ++j) {
          const std::int32_t e = routing.topk_idx[static_cast<std::size_t>(t) * topk + j];
          const std::int32_t local =
              e >= 0 && static_cast<std::size_t>(e) / local_experts == q
                  ? static_cast<std::int32_t>(static_cast<std::size_t>(e) % local_experts)
                  : -1;
          std::memcpy(record + row_bytes + j * sizeof(std::int32_t), &local, sizeof(local));
          std::memcpy(record + row_bytes + topk * sizeof(std::int32_t) + j * sizeof(float),
                      &routing.weights[static_cast<std::size_t>(t) * topk + j], sizeof(float));
        }
        ++r;
      }
      send_counts[q] = static_cast<int>(rows_to_pe[q].size());
    }
    check(MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT,
                       MPI_COMM_WORLD),
          pe, "MPI_Alltoall");
    int sent = 0, received = 0;
    for (std::size_t q = 0; q < n; ++q) {
      send_displs[q] = sent;
      recv_displs[q] = received;
      sent += send_counts[q];
      received += recv_counts[q];
    }
    const auto records = static_cast<std::size_t>(received);
    recv.resize(std::max<std::size_t>(records, 1) * record_bytes);
    check(
        MPI_Alltoallv(send.data(), send_counts.data(), send_displs.data(), record_type, recv.data(),
                      recv_counts.data(), recv_displs.data(), record_type, MPI_COMM_WORLD),
        pe, "MPI_Alltoallv");
    // Expand into expert-major rows: count per local expert, then place each row.
    expert_rows.assign(local_experts, 0);
    for (std::size_t i = 0; i < records; ++i) {
      for (std::size_t j = 0; j < topk; ++j) {
        const std::int32_t e = record_expert(recv.data() + i * record_bytes, j);
        if (e >= 0) ++expert_rows[static_cast<std::size_t>(e)];
      }
    }
    expert_start.assign(local_experts, 0);
    std::size_t total = 0;
    for (std::size_t e = 0; e < local_experts; ++e) {
      expert_start[e] = total;
      total += expert_rows[e];
    }
    expert_x.resize(std::max<std::size_t>(total, 1) * row_bytes);
    slot_row.assign(records * topk, 0);
    for (std::size_t i = 0; i < records; ++i) {
      const unsigned char* record = recv.data() + i * record_bytes;
      for (std::size_t j = 0; j < topk; ++j) {
        const std::int32_t e = record_expert(record, j);
        if (e < 0) continue;
        const std::size_t row = expert_start[static_cast<std::size_t>(e)]++;
        slot_row[i * topk + j] = row;
        std::memcpy(expert_x.data() + row * row_bytes, record, row_bytes);
      }
    }
  };
  auto combine = [&] {
    // Expert side: one weighted fp32 sum per received token over its local experts' rows.
    const std::size_t records = recv.size() / record_bytes;
    partials.resize(std::max<std::size_t>(records, 1) * row_bytes);
    for (std::size_t i = 0; i < static_cast<std::size_t>(recv_displs[n - 1] + recv_counts[n - 1]);
         ++i) {
      const unsigned char* record = recv.data() + i * record_bytes;
      std::fill(partial.begin(), partial.end(), 0.0f);
      for (std::size_t j = 0; j < topk; ++j) {
        if (record_expert(record, j) < 0) continue;
        const float w = record_weight(record, j);
        const auto* row = reinterpret_cast<const std::uint16_t*>(
            expert_x.data() + slot_row[i * topk + j] * row_bytes);
        for (std::size_t h = 0; h < hidden; ++h) partial[h] += w * bf16_to_float(row[h]);
      }
      auto* out = reinterpret_cast<std::uint16_t*>(partials.data() + i * row_bytes);
      for (std::size_t h = 0; h < hidden; ++h) out[h] = float_to_bf16(partial[h]);
    }
    check(MPI_Alltoallv(partials.data(), recv_counts.data(), recv_displs.data(), row_type,
                        back.data(), send_counts.data(), send_displs.data(), row_type,
                        MPI_COMM_WORLD),
          pe, "MPI_Alltoallv");
    // Source side: each token's partials from every PE, summed in fp32.
    std::fill(acc.begin(), acc.end(), 0.0f);
    std::size_t r = 0;
    for (std::size_t q = 0; q < n; ++q) {
      for (int t : rows_to_pe[q]) {
        const auto* row = reinterpret_cast<const std::uint16_t*>(back.data() + r * row_bytes);
        float* sum = acc.data() + static_cast<std::size_t>(t) * hidden;
        for (std::size_t h = 0; h < hidden; ++h) sum[h] += bf16_to_float(row[h]);
        ++r;
      }
    }
    for (std::size_t i = 0; i < acc.size(); ++i) y[i] = float_to_bf16(acc[i]);
  };
  auto timed = [&](PeerTimes& into, int i, auto&& fn) {
    idle_barrier(MPI_COMM_WORLD, pe);
    const double t0 = now_us();
    fn();
    const double t1 = now_us();
    if (pe == 0 && i >= warmup) into.us.push_back(t1 - t0);
  };
  for (int i = 0; i < warmup + iters; ++i) {
    timed(result.dispatch, i, dispatch);
    timed(result.combine, i, combine);
    timed(result.both, i, [&] {
      dispatch();
      combine();
    });
  }
  idle_barrier(MPI_COMM_WORLD, pe);
  MPI_Type_free(&record_type);
  MPI_Type_free(&row_type);
  result.y = std::move(y);
  return result;
}

}  // namespace tessera::bench::peer

// ---- Collectives on teams (issue 16, second slice).
namespace tessera::bench::peer {
namespace {

// Times `call` as allgather does: an MPI_Barrier, then one call, on PE 0.
template <class Call>
PeerTimes sample(int pe, int n_pes, int warmup, int iters, Call&& call) {
  PeerTimes result;
  result.unavailable = unavailable_reason(pe, n_pes);
  if (!result.unavailable.empty()) return result;
  for (int i = 0; i < warmup + iters; ++i) {
    check(MPI_Barrier(MPI_COMM_WORLD), pe, "MPI_Barrier");
    const double t0 = now_us();
    call();
    const double t1 = now_us();
    if (pe == 0 && i >= warmup) result.us.push_back(t1 - t0);
  }
  idle_barrier(MPI_COMM_WORLD, pe);
  return result;
}

}  // namespace

PeerTimes reduce_scatter_block(int pe, int n_pes, std::size_t count, int warmup, int iters) {
  std::vector<float> send(count * static_cast<std::size_t>(n_pes), 1.0f), recv(count, 0.0f);
  return sample(pe, n_pes, warmup, iters, [&] {
    check(MPI_Reduce_scatter_block(send.data(), recv.data(), static_cast<int>(count), MPI_FLOAT,
                                   MPI_SUM, MPI_COMM_WORLD),
          pe, "MPI_Reduce_scatter_block");
  });
}

PeerTimes alltoall(int pe, int n_pes, std::size_t bytes_per_peer, int warmup, int iters) {
  const std::size_t total = bytes_per_peer * static_cast<std::size_t>(n_pes);
  std::vector<unsigned char> send = warm_buffer(total), recv = warm_buffer(total);
  return sample(pe, n_pes, warmup, iters, [&] {
    check(MPI_Alltoall(send.data(), static_cast<int>(bytes_per_peer), MPI_BYTE, recv.data(),
                       static_cast<int>(bytes_per_peer), MPI_BYTE, MPI_COMM_WORLD),
          pe, "MPI_Alltoall");
  });
}

PeerTimes bcast(int pe, int n_pes, std::size_t bytes, int warmup, int iters) {
  std::vector<unsigned char> buffer = warm_buffer(bytes);
  return sample(pe, n_pes, warmup, iters, [&] {
    check(MPI_Bcast(buffer.data(), static_cast<int>(bytes), MPI_BYTE, 0, MPI_COMM_WORLD), pe,
          "MPI_Bcast");
  });
}

}  // namespace tessera::bench::peer
