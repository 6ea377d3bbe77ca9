// tessera.ops collectives on teams (all_reduce, ...): dtype and count taken from the arrays, enum
// arguments as strings, every other check left to the C++ op so the messages are its own.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <initializer_list>
#include <string>
#include <utility>

#include "array.hpp"
#include "overlap.hpp"
#include "runtime.hpp"
#include "team.hpp"
#include "tessera/ops.hpp"
#include "tessera/ops/all_to_all.hpp"
#include "tessera/ops/broadcast.hpp"
#include "tessera/ops/reduce_scatter.hpp"

namespace tessera::python {

using namespace nb::literals;

namespace {

bool named(const Dtype& d, const char* name) { return std::string(d.name) == name; }

std::size_t elements(const Buffer& b) { return b.nbytes / b.dtype.itemsize(); }

// The collective element type of `b`; throws Error(invalid_argument) naming the supported ones.
ops::Dtype collective_dtype(const Buffer& b, const char* op, int pe) {
  if (named(b.dtype, "float32")) return ops::Dtype::f32;
  if (named(b.dtype, "bfloat16")) return ops::Dtype::bf16;
  if (named(b.dtype, "float16")) return ops::Dtype::f16;
  if (named(b.dtype, "int32")) return ops::Dtype::i32;
  if (named(b.dtype, "int64")) return ops::Dtype::i64;
  fail(ErrorCode::invalid_argument, pe,
       std::string(op) + ": dtype " + b.dtype.name +
           " is not supported; use float32, bfloat16, float16, int32 or int64");
}

ops::ReduceOp reduce_op_from(const std::string& s, const char* op, int pe) {
  if (s == "sum") return ops::ReduceOp::sum;
  if (s == "max") return ops::ReduceOp::max;
  if (s == "min") return ops::ReduceOp::min;
  if (s == "prod") return ops::ReduceOp::prod;
  fail(ErrorCode::invalid_argument, pe,
       std::string(op) + ": op must be 'sum', 'max', 'min' or 'prod', not '" + s + "'");
}

ops::AllReduceAlgo all_reduce_algo_from(const std::string& s, int pe) {
  if (s == "auto" || s == "automatic") return ops::AllReduceAlgo::automatic;
  if (s == "one_shot") return ops::AllReduceAlgo::one_shot;
  if (s == "two_shot") return ops::AllReduceAlgo::two_shot;
  if (s == "ring") return ops::AllReduceAlgo::ring;
  if (s == "atomic") return ops::AllReduceAlgo::atomic;
  fail(ErrorCode::invalid_argument, pe,
       "all_reduce: algo must be 'auto', 'one_shot', 'two_shot', 'ring' or 'atomic', not '" + s +
           "'");
}

void same_dtype(const Buffer& send, const Buffer& recv, const char* op, int pe) {
  if (!(send.dtype == recv.dtype)) {
    fail(ErrorCode::invalid_argument, pe,
         std::string(op) + ": send is " + send.describe() + " but recv is " + recv.describe() +
             " (dtypes differ)");
  }
}

// Throws unless `b` holds at least `bytes`; `need` says where the number comes from.
void holds(const Buffer& b, std::size_t bytes, const char* op, const char* what,
           const std::string& need, int pe) {
  if (b.nbytes < bytes) {
    fail(ErrorCode::invalid_argument, pe,
         std::string(op) + ": " + what + " is " + b.describe() + " (" + std::to_string(b.nbytes) +
             " bytes), needs " + need + " = " + std::to_string(bytes) + " bytes");
  }
}

// Keeps the arrays alive until rt.synchronize() (the stream reads them after the call returns).
void keep(RuntimeState& state, std::initializer_list<const Buffer*> buffers) {
  for (const Buffer* b : buffers) state.in_flight.push_back(b->keep);
}

// The send and recv arrays of a collective `op` (recv written), checked to hold one dtype.
struct SendRecv {
  Buffer send;
  Buffer recv;
};

SendRecv send_recv_of(nb::handle send, nb::handle recv, const char* op, int pe) {
  SendRecv b{buffer_of(send, false, (std::string(op) + " (send)").c_str(), pe),
             buffer_of(recv, true, (std::string(op) + " (recv)").c_str(), pe)};
  same_dtype(b.send, b.recv, op, pe);
  return b;
}

// A reduction's options as the C++ op takes them: send's dtype, the reduce op, the algorithm
// (parsed by `algo_from`) and the team, checked in that order.
template <class Algo>
struct Reduction {
  ops::Dtype dtype;
  ops::ReduceOp op;
  Algo algo;
  Team team;
};

template <class Algo>
Reduction<Algo> reduction_of(const PyRuntime& s, const Buffer& send, const std::string& op,
                             const std::string& algo, const PyTeam* team, const char* name,
                             Algo (*algo_from)(const std::string&, int)) {
  const int pe = s.rt().pe();
  const ops::Dtype dtype = collective_dtype(send, name, pe);
  const ops::ReduceOp rop = reduce_op_from(op, name, pe);
  const Algo a = algo_from(algo, pe);
  return {dtype, rop, a, team_or_world(s, team, name)};
}

// Runs `enqueue` (an op's call on the runtime's stream) without the GIL, then keeps `buffers`
// alive until rt.synchronize().
template <class Enqueue>
void enqueue_keeping(RuntimeState& state, std::initializer_list<const Buffer*> buffers,
                     Enqueue&& enqueue) {
  {
    nb::gil_scoped_release unlocked;
    enqueue();
  }
  keep(state, buffers);
}

ops::ReduceScatterAlgo reduce_scatter_algo_from(const std::string& s, int pe) {
  if (s == "auto" || s == "automatic") return ops::ReduceScatterAlgo::automatic;
  if (s == "one_shot") return ops::ReduceScatterAlgo::one_shot;
  if (s == "ring") return ops::ReduceScatterAlgo::ring;
  fail(ErrorCode::invalid_argument, pe,
       "reduce_scatter: algo must be 'auto', 'one_shot' or 'ring', not '" + s + "'");
}

// send's elements as team.size blocks: the block size (count); throws when they do not divide.
std::size_t block_count(const Buffer& send, const Team& team, const char* op, int pe) {
  const auto members = static_cast<std::size_t>(team.size);
  if (members == 0 || elements(send) % members != 0) {
    fail(ErrorCode::invalid_argument, pe,
         std::string(op) + ": send is " + send.describe() + " (" + std::to_string(elements(send)) +
             " elements), which is not team.size (" + std::to_string(team.size) +
             ") blocks of equal count");
  }
  return elements(send) / members;
}

// A count array of all_to_all_v (team.size entries of uint64 or int64: std::size_t's bits).
std::size_t* counts_of(const Buffer& b, const Team& team, const char* what, int pe) {
  const bool bits64 = named(b.dtype, "uint64") || named(b.dtype, "int64");
  if (!bits64 || elements(b) < static_cast<std::size_t>(team.size)) {
    fail(ErrorCode::invalid_argument, pe,
         std::string("all_to_all_v: ") + what + " must hold team.size (" +
             std::to_string(team.size) + ") uint64 or int64 counts, got " + b.describe());
  }
  return static_cast<std::size_t*>(b.data);
}

// Binds the reduction `name`(rt, send, recv, op="sum", algo="auto", team=None) to `bound`.
template <class Bound>
void def_reduction(nb::module_& m, const char* name, Bound&& bound, const char* doc) {
  m.def(name, std::forward<Bound>(bound), "rt"_a, "send"_a, "recv"_a, "op"_a = "sum",
        "algo"_a = "auto", "team"_a.none() = nb::none(), doc);
}

}  // namespace

void bind_collectives(nb::module_& m) {
  def_reduction(
      m, "all_reduce",
      [](const PyRuntime& s, nb::handle send, nb::handle recv, const std::string& op,
         const std::string& algo, const PyTeam* team) {
        Runtime& rt = s.rt();
        const int pe = rt.pe();
        auto [src, dst] = send_recv_of(send, recv, "all_reduce", pe);
        holds(dst, src.nbytes, "all_reduce", "recv", "send's size", pe);
        const auto r = reduction_of(s, src, op, algo, team, "all_reduce", all_reduce_algo_from);
        const std::size_t count = elements(src);
        // The first call on a world team checks agreement with the other PEs (a host collective).
        enqueue_keeping(*s.state, {&src, &dst}, [&] {
          ops::all_reduce(rt, rt.stream(), r.team, src.data, dst.data, count, r.dtype, r.op,
                          r.algo);
        });
      },
      "Collective over the members of `team` (default: every PE), stream-ordered: recv (symmetric, "
      "at least send's size, same dtype) receives the element-wise reduction (op 'sum', 'max', "
      "'min', 'prod' for integers) of every member's send; send may be recv (in place). dtypes "
      "float32, bfloat16, float16 (reduced in fp32), int32, int64. algo 'auto' (by size, or "
      "TESSERA_ALLREDUCE_ALGO), 'one_shot', 'two_shot', 'ring', 'atomic' (sums of int32, int64). "
      "Call rt.synchronize() before reading recv.");

  def_reduction(
      m, "reduce_scatter",
      [](const PyRuntime& s, nb::handle send, nb::handle recv, const std::string& op,
         const std::string& algo, const PyTeam* team) {
        Runtime& rt = s.rt();
        const int pe = rt.pe();
        auto [src, dst] = send_recv_of(send, recv, "reduce_scatter", pe);
        const auto r =
            reduction_of(s, src, op, algo, team, "reduce_scatter", reduce_scatter_algo_from);
        const std::size_t count = block_count(src, r.team, "reduce_scatter", pe);
        holds(dst, count * src.dtype.itemsize(), "reduce_scatter", "recv",
              "send's size / team.size", pe);
        enqueue_keeping(*s.state, {&src, &dst}, [&] {
          ops::reduce_scatter(rt, rt.stream(), r.team, src.data, dst.data, count, r.dtype, r.op,
                              r.algo);
        });
      },
      "Collective over the members of `team` (default: every PE), stream-ordered: send holds "
      "team.size blocks of count elements (block r for rank r); recv (symmetric, at least count "
      "elements, same dtype) receives the reduction over members of their block my_rank. In "
      "place: recv is send's block my_rank (a view of a heap array). op, dtypes as all_reduce; "
      "algo 'auto', 'one_shot' or 'ring'. Call rt.synchronize() before reading recv.");

  m.def(
      "all_to_all",
      [](const PyRuntime& s, nb::handle send, nb::handle recv, const PyTeam* team) {
        Runtime& rt = s.rt();
        const int pe = rt.pe();
        auto [src, dst] = send_recv_of(send, recv, "all_to_all", pe);
        const ops::Dtype dtype = collective_dtype(src, "all_to_all", pe);
        const Team t = team_or_world(s, team, "all_to_all");
        const std::size_t count = block_count(src, t, "all_to_all", pe);
        holds(dst, src.nbytes, "all_to_all", "recv", "send's size", pe);
        enqueue_keeping(*s.state, {&src, &dst}, [&] {
          ops::all_to_all(rt, rt.stream(), t, src.data, dst.data, count, dtype);
        });
      },
      "rt"_a, "send"_a, "recv"_a, "team"_a.none() = nb::none(),
      "Collective over the members of `team` (default: every PE), stream-ordered: send holds "
      "team.size equal blocks, block r for rank r; recv (symmetric, at least send's size, same "
      "dtype) receives block r from rank r. send may be recv (in place). dtypes as all_reduce. "
      "Call rt.synchronize() before reading recv.");

  m.def(
      "all_to_all_v",
      [](const PyRuntime& s, nb::handle send, nb::handle send_counts, nb::handle recv,
         nb::handle recv_counts, nb::handle recv_offsets, const PyTeam* team) {
        Runtime& rt = s.rt();
        const int pe = rt.pe();
        Buffer src = buffer_of(send, false, "all_to_all_v (send)", pe);
        Buffer sc = buffer_of(send_counts, false, "all_to_all_v (send_counts)", pe);
        Buffer dst = buffer_of(recv, true, "all_to_all_v (recv)", pe);
        Buffer rc = buffer_of(recv_counts, true, "all_to_all_v (recv_counts)", pe);
        Buffer ro = buffer_of(recv_offsets, true, "all_to_all_v (recv_offsets)", pe);
        same_dtype(src, dst, "all_to_all_v", pe);
        const ops::Dtype dtype = collective_dtype(src, "all_to_all_v", pe);
        const Team t = team_or_world(s, team, "all_to_all_v");
        const std::size_t* scp = counts_of(sc, t, "send_counts", pe);
        std::size_t* rcp = counts_of(rc, t, "recv_counts", pe);
        std::size_t* rop = counts_of(ro, t, "recv_offsets", pe);
        enqueue_keeping(*s.state, {&src, &sc, &dst, &rc, &ro}, [&] {
          ops::all_to_all_v(rt, rt.stream(), t, src.data, scp, dst.data, elements(dst), rcp, rop,
                            dtype);
        });
      },
      "rt"_a, "send"_a, "send_counts"_a, "recv"_a, "recv_counts"_a, "recv_offsets"_a,
      "team"_a.none() = nb::none(),
      "Collective over the members of `team` (default: every PE), stream-ordered, counts per "
      "peer: send holds send_counts[r] elements for rank r, packed in rank order (send_counts: "
      "team.size uint64/int64, read when the stream runs the call, so send must hold their sum); "
      "recv (symmetric; its size is the capacity) receives the blocks packed in source-rank "
      "order, and recv_counts[s] / recv_offsets[s] (team.size uint64/int64 each, written) say "
      "how many elements came from rank s and where they start. Blocks exceeding a member's "
      "capacity are not sent: rt.synchronize() raises InvalidArgumentError on every member.");

  m.def(
      "broadcast",
      [](const PyRuntime& s, nb::handle send, nb::handle recv, int root, const PyTeam* team) {
        Runtime& rt = s.rt();
        const int pe = rt.pe();
        Buffer dst = buffer_of(recv, true, "broadcast (recv)", pe);
        const ops::Dtype dtype = collective_dtype(dst, "broadcast", pe);
        const Team t = team_or_world(s, team, "broadcast");
        const std::size_t count = elements(dst);
        Buffer src;
        if (!send.is_none()) {
          src = buffer_of(send, false, "broadcast (send)", pe);
          same_dtype(src, dst, "broadcast", pe);
          if (t.my_rank == root) holds(src, dst.nbytes, "broadcast", "send", "recv's size", pe);
        }
        enqueue_keeping(*s.state, {&dst}, [&] {
          ops::broadcast(rt, rt.stream(), t, src.data, dst.data, count, dtype, root);
        });
        if (src.data != nullptr) keep(*s.state, {&src});
      },
      "rt"_a, "send"_a.none(), "recv"_a, "root"_a = 0, "team"_a.none() = nb::none(),
      "Collective over the members of `team` (default: every PE), stream-ordered: recv "
      "(symmetric, the same size on every member) receives the first recv-size elements of the "
      "send of team rank `root` (send: ignored elsewhere, may be None there; may be recv on the "
      "root). dtypes as all_reduce. Call rt.synchronize() before reading recv.");

  m.def(
      "all_reduce_rmsnorm",
      [](const PyRuntime& s, nb::handle x, nb::handle residual, nb::handle weight, nb::handle y,
         float eps, const std::string& pattern, const PyTeam* team) {
        Runtime& rt = s.rt();
        const int pe = rt.pe();
        const char* op = "all_reduce_rmsnorm";
        Buffer xb = buffer_of(x, false, "all_reduce_rmsnorm (x)", pe);
        Buffer rb = buffer_of(residual, false, "all_reduce_rmsnorm (residual)", pe);
        Buffer wb = buffer_of(weight, false, "all_reduce_rmsnorm (weight)", pe);
        Buffer yb = buffer_of(y, true, "all_reduce_rmsnorm (y)", pe);
        for (const Buffer* b : {&rb, &wb, &yb}) same_dtype(xb, *b, op, pe);
        const ops::Dtype dtype = collective_dtype(xb, op, pe);
        const std::size_t hidden = wb.nbytes / wb.dtype.itemsize();
        const std::size_t n = elements(xb);
        const bool rows_of_hidden =
            hidden > 0 && n % hidden == 0 && (xb.shape.size() < 2 || xb.shape.back() == hidden);
        if (!rows_of_hidden) {
          fail(ErrorCode::invalid_argument, pe,
               "all_reduce_rmsnorm: x is " + xb.describe() + " but weight is " + wb.describe() +
                   ": x must be (rows, hidden) with hidden = weight's size");
        }
        for (const Buffer* b : {&rb, &yb}) {
          if (b->nbytes != xb.nbytes) {
            fail(ErrorCode::invalid_argument, pe,
                 std::string("all_reduce_rmsnorm: ") + (b == &rb ? "residual" : "y") + " is " +
                     b->describe() + " but x is " + xb.describe() + " (sizes differ)");
          }
        }
        const ops::OverlapPattern p = pattern_from(pattern, op, pe);
        const Team t = team_or_world(s, team, op);
        enqueue_keeping(*s.state, {&xb, &rb, &wb, &yb}, [&] {
          ops::all_reduce_rmsnorm(rt, rt.stream(), t, xb.data, rb.data, wb.data, yb.data,
                                  n / hidden, hidden, dtype, eps, p);
        });
      },
      "rt"_a, "x"_a, "residual"_a, "weight"_a, "y"_a, "eps"_a = 1e-6f, "pattern"_a = "auto",
      "team"_a.none() = nb::none(),
      "Collective over the members of `team` (default: every PE), stream-ordered: y[r] = v / "
      "sqrt(mean(v^2) + eps) * weight with v = (sum over members of x[r]) + residual[r], for each "
      "row r of x (rows, hidden); hidden = weight's size. x, residual, weight, y: one dtype of "
      "float32, bfloat16, float16 (fp32 math), any memory; y may be x or residual. pattern 'auto', "
      "'bulk_synchronous' or 'fused_sequential' (the others raise). Call rt.synchronize() before "
      "reading y.");
}

}  // namespace tessera::python
