// tessera.ops: the fused ops on DLPack arrays, stream-ordered (Runtime.synchronize waits).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <memory>
#include <string>
#include <vector>

#include "array.hpp"
#include "overlap.hpp"
#include "runtime.hpp"
#include "tessera/ops.hpp"

namespace tessera::python {

using namespace nb::literals;

namespace {

bool is(const Dtype& d, const char* name) { return std::string(d.name) == name; }

// Checks that `b` is a (rows, cols) matrix (or a flat array of rows * cols) of `dtype`.
void expect(const Buffer& b, std::size_t rows, std::size_t cols, const char* dtype, const char* op,
            const char* what, int pe) {
  const bool shape_ok = (b.shape.size() == 2 && b.shape[0] == rows && b.shape[1] == cols) ||
                        (b.shape.size() == 1 && b.shape[0] == rows * cols);
  if (!shape_ok || !is(b.dtype, dtype)) {
    fail(ErrorCode::invalid_argument, pe,
         std::string(op) + ": " + what + " must be (" + std::to_string(rows) + ", " +
             std::to_string(cols) + ") " + dtype + ", got " + b.describe());
  }
}

// An op object and its runtime. Dropped without free(), the op is kept until finalize (see
// RuntimeState::dropped); free() destroys it now, collectively.
template <class Op>
struct Owned {
  std::shared_ptr<RuntimeState> state;
  std::shared_ptr<Op> op;
  std::shared_ptr<Lifetime> lifetime;  // views of the op's buffers (MoE) die with it

  Owned(std::shared_ptr<RuntimeState> s, std::shared_ptr<Op> o)
      : state(std::move(s)),
        op(std::move(o)),
        lifetime(std::make_shared<Lifetime>(Lifetime{state, true})) {}
  Owned(const Owned&) = delete;
  ~Owned() {
    if (op && state && state->alive) state->dropped.push_back(std::move(op));
  }
  Op& get(const char* what) {
    state->check_alive(what);
    if (!op) fail(ErrorCode::invalid_argument, state->pe, std::string(what) + ": the op was freed");
    return *op;
  }
  void free() {
    get("free");
    state->check_not_capturing("free");
    lifetime->live = false;
    state->synchronize();
    op.reset();
  }
};

using PyAgGemm = Owned<ops::AgGemm>;
using PyGemmRs = Owned<ops::GemmRs>;
using PyGemmAr = Owned<ops::GemmAr>;
using PyGemmAs = Owned<ops::GemmAs>;
using PyMoe = Owned<ops::MoeBuffer>;

struct PyMoeHandle {
  ops::MoeHandle handle;
  std::shared_ptr<Lifetime> lifetime;
  int pe = -1;
  std::uint64_t epoch_seen = 0;
};

ops::GemmDtype gemm_dtype(nb::handle d) {
  Dtype t = dtype_from(d);
  if (is(t, "float32")) return ops::GemmDtype::f32;
  if (is(t, "bfloat16")) return ops::GemmDtype::bf16;
  fail(ErrorCode::invalid_argument, -1,
       std::string("gemm dtype must be float32 or bfloat16, not ") + t.name);
}

const char* gemm_name(ops::GemmDtype d) {
  return d == ops::GemmDtype::f32 ? "float32" : "bfloat16";
}

// Enqueues op.run(a, b, c) with a and b in the op's input type and c in fp32, and keeps the three
// arrays alive until rt.synchronize() (the op runs on the stream after this returns).
template <class GemmOp>
void run_gemm(GemmOp& op, RuntimeState& state, const Buffer& a, const Buffer& b, const Buffer& c) {
  auto* cp = static_cast<float*>(c.data);
  if (op.dtype() == ops::GemmDtype::f32) {
    op.run(state.rt.stream(), static_cast<const float*>(a.data), static_cast<const float*>(b.data),
           cp);
  } else {
    op.run(state.rt.stream(), static_cast<const device::bf16*>(a.data),
           static_cast<const device::bf16*>(b.data), cp);
  }
  for (const Buffer* x : {&a, &b, &c}) state.in_flight.push_back(x->keep);
}

ops::AllGatherAlgo algo_from(const std::string& a) {
  if (a == "automatic" || a == "auto") return ops::AllGatherAlgo::automatic;
  if (a == "oneshot") return ops::AllGatherAlgo::oneshot;
  if (a == "ring") return ops::AllGatherAlgo::ring;
  fail(ErrorCode::invalid_argument, -1,
       "all_gather: algo must be 'automatic', 'oneshot' or 'ring', not '" + a + "'");
}

ops::AgGemmVariant variant_from(const std::string& v) {
  if (v == "automatic" || v == "auto") return ops::AgGemmVariant::automatic;
  if (v == "push") return ops::AgGemmVariant::push;
  if (v == "pull") return ops::AgGemmVariant::pull;
  fail(ErrorCode::invalid_argument, -1,
       "AgGemm: variant must be 'automatic', 'push' or 'pull', not '" + v + "'");
}

// Makes the op without the GIL: its constructor allocates collectively.
template <class Op, class... Args>
std::shared_ptr<Op> make_op(Args&&... args) {
  nb::gil_scoped_release unlocked;
  return std::make_shared<Op>(std::forward<Args>(args)...);
}

// The handle's row count, which the stream's dispatch wrote: refused while a capture is open
// (the captured dispatch has not run, so the host would read an older dispatch's count).
std::size_t moe_rows(const PyMoeHandle& h, const char* what) {
  if (!h.lifetime->usable())
    fail(ErrorCode::invalid_argument, h.pe, "MoeHandle: its MoeBuffer was freed");
  h.lifetime->state->check_not_capturing(what);
  return h.handle.rows();
}

// A view of MoE output memory (heap, owned by the MoeBuffer) as a tessera.Array.
Array moe_view(const PyMoeHandle& h, const void* data, std::vector<std::size_t> shape,
               const char* dtype) {
  if (!h.lifetime->usable())
    fail(ErrorCode::invalid_argument, h.pe, "MoeHandle: its MoeBuffer was freed");
  Array a;
  a.lifetime = h.lifetime;
  a.data = const_cast<void*>(data);
  a.pe = h.pe;
  a.owner = false;
  a.shape = std::move(shape);
  a.dtype = dtype_from(nb::str(dtype));
  const Runtime& rt = h.lifetime->state->rt;
  if (rt.in_heap(data)) a.offset = rt.heap_offset(data);
  return a;
}

const char* moe_name(ops::MoeDtype d) { return d == ops::MoeDtype::f32 ? "float32" : "bfloat16"; }

// The shapes run() checks: GemmAr a (m, k_local), b (k_local, n), c (m, n); GemmAs a (m, k),
// b (k, n_local), c (m, n_local * n_pes).
struct GemmShapes {
  std::size_t a_rows, a_cols, b_rows, b_cols, c_rows, c_cols;
};
GemmShapes shapes_of(const ops::GemmAr& op, int) {
  return {op.m(), op.k_local(), op.k_local(), op.n(), op.m(), op.n()};
}
GemmShapes shapes_of(const ops::GemmAs& op, int n_pes) {
  return {op.m(),       op.k(), op.k(),
          op.n_local(), op.m(), op.n_local() * static_cast<std::size_t>(n_pes)};
}

// GemmAr and GemmAs: the same options, constructor arguments (m, the second and third shape
// argument named n_name and k_name) and run(a, b, c).
template <class Op, class Options>
void bind_fused_gemm(nb::module_& m, const char* name, const char* doc, const char* n_name,
                     const char* k_name) {
  using Py = Owned<Op>;
  nb::class_<Py>(m, name, doc)
      .def(
          "__init__",
          [name](Py* self, const PyRuntime& s, std::size_t mm, std::size_t n, std::size_t k,
                 nb::handle dtype, const std::string& pattern, const std::string& direction,
                 int comm_blocks, int compute_blocks) {
            Runtime& rt = s.rt();
            Options o;
            o.pattern = pattern_from(pattern, name, rt.pe());
            o.direction = direction_from(direction, name, rt.pe());
            o.comm_blocks = comm_blocks;
            o.compute_blocks = compute_blocks;
            auto op = make_op<Op>(rt, mm, n, k, gemm_dtype(dtype), o);
            new (self) Py(s.state, std::move(op));
          },
          "rt"_a, "m"_a, nb::arg(n_name), nb::arg(k_name), "dtype"_a = "float32",
          "pattern"_a = "auto", "direction"_a = "auto", "comm_blocks"_a = 1, "compute_blocks"_a = 3,
          "Collective. pattern: 'auto', 'bulk_synchronous', 'producer_consumer', "
          "'workgroup_specialized' or 'fused_sequential'; direction: 'auto', 'push' or 'pull' "
          "(not with bulk_synchronous); comm_blocks / compute_blocks: the blocks that "
          "communicate and those that compute.")
      .def(
          "run",
          [name](Py& self, nb::handle a, nb::handle b, nb::handle c) {
            const std::string run = std::string(name) + ".run";
            auto& op = self.get(run.c_str());
            Runtime& rt = self.state->rt;
            const char* dt = gemm_name(op.dtype());
            const GemmShapes sh = shapes_of(op, rt.n_pes());
            Buffer ab = buffer_of(a, false, (run + " (a)").c_str(), rt.pe());
            Buffer bb = buffer_of(b, false, (run + " (b)").c_str(), rt.pe());
            Buffer cb = buffer_of(c, true, (run + " (c)").c_str(), rt.pe());
            expect(ab, sh.a_rows, sh.a_cols, dt, run.c_str(), "a", rt.pe());
            expect(bb, sh.b_rows, sh.b_cols, dt, run.c_str(), "b", rt.pe());
            expect(cb, sh.c_rows, sh.c_cols, "float32", run.c_str(), "c", rt.pe());
            run_gemm(op, *self.state, ab, bb, cb);
          },
          "a"_a, "b"_a, "c"_a,
          "Stream-ordered: c = the op's result (fp32); rt.synchronize() waits.")
      .def_prop_ro(
          "pattern",
          [name](Py& self) { return std::string(ops::to_string(self.get(name).pattern())); },
          "The overlap pattern chosen (never 'automatic').")
      .def_prop_ro(
          "direction",
          [name](Py& self) { return std::string(ops::to_string(self.get(name).direction())); },
          "'push' or 'pull' ('automatic' for bulk_synchronous, whose collective picks).")
      .def("free", &Py::free, "Collective: waits for the stream, frees the workspace.")
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](Py& self, nb::args) {
        if (self.op && self.state->alive) self.free();
      });
}

}  // namespace

void bind_ops(nb::module_& m) {
  m.def(
      "all_gather",
      [](const PyRuntime& s, nb::handle send, nb::handle recv, const std::string& algo) {
        Runtime& rt = s.rt();
        Buffer src = buffer_of(send, false, "all_gather (send)", rt.pe());
        Buffer dst = buffer_of(recv, true, "all_gather (recv)", rt.pe());
        if (!(src.dtype == dst.dtype)) {
          fail(ErrorCode::invalid_argument, rt.pe(),
               "all_gather: send is " + src.describe() + " but recv is " + dst.describe() +
                   " (dtypes differ)");
        }
        const std::size_t want = src.nbytes * static_cast<std::size_t>(rt.n_pes());
        if (dst.nbytes < want) {
          fail(ErrorCode::invalid_argument, rt.pe(),
               "all_gather: recv is " + dst.describe() + " (" + std::to_string(dst.nbytes) +
                   " bytes), needs n_pes * send = " + std::to_string(want) + " bytes");
        }
        ops::all_gather(rt, rt.stream(), src.data, dst.data, src.nbytes, algo_from(algo));
        s.state->in_flight.push_back(src.keep);
        s.state->in_flight.push_back(dst.keep);
      },
      "rt"_a, "send"_a, "recv"_a, "algo"_a = "automatic",
      "Collective, stream-ordered: recv (symmetric, n_pes x send) receives every PE's send, PE p's "
      "at "
      "index p. Call rt.synchronize() before reading recv.");

  nb::class_<PyAgGemm>(m, "AgGemm",
                       "C[m, n_local] = all_gather(A_shard[m/P, k]) @ B[k, n_local], the gather "
                       "overlapped with the GEMM. Collective to make and to free.")
      .def(
          "__init__",
          [](PyAgGemm* self, const PyRuntime& s, std::size_t mm, std::size_t n_local, std::size_t k,
             nb::handle dtype, const std::string& variant, const std::string& pattern,
             const std::string& direction, int comm_blocks, int compute_blocks) {
            Runtime& rt = s.rt();
            ops::AgGemmOptions o;
            o.variant = variant_from(variant);
            o.pattern = pattern_from(pattern, "AgGemm", rt.pe());
            o.comm_blocks = comm_blocks;
            o.compute_blocks = compute_blocks;
            // direction is the variant's other name, shared with the other fused ops.
            const ops::CommDirection dir = direction_from(direction, "AgGemm", rt.pe());
            if (dir != ops::CommDirection::automatic) {
              const auto v = dir == ops::CommDirection::push ? ops::AgGemmVariant::push
                                                             : ops::AgGemmVariant::pull;
              if (o.variant != ops::AgGemmVariant::automatic && o.variant != v) {
                fail(ErrorCode::invalid_argument, rt.pe(),
                     "AgGemm: variant '" + variant + "' and direction '" + direction +
                         "' disagree (they name the same choice: pass one)");
              }
              o.variant = v;
            }
            auto op = make_op<ops::AgGemm>(rt, mm, n_local, k, gemm_dtype(dtype), o);
            new (self) PyAgGemm(s.state, std::move(op));
          },
          "rt"_a, "m"_a, "n_local"_a, "k"_a, "dtype"_a = "float32", "variant"_a = "automatic",
          "pattern"_a = "auto", "direction"_a = "auto", "comm_blocks"_a = 1, "compute_blocks"_a = 3,
          "Collective. pattern: 'auto', 'bulk_synchronous', 'producer_consumer', "
          "'workgroup_specialized' or 'fused_sequential'; direction (or variant, its older name): "
          "'auto', 'push' or 'pull'; comm_blocks / compute_blocks: the blocks that gather and "
          "those that compute.")
      .def(
          "run",
          [](PyAgGemm& self, nb::handle a, nb::handle b, nb::handle c) {
            auto& op = self.get("AgGemm.run");
            Runtime& rt = self.state->rt;
            const char* dt = gemm_name(op.dtype());
            Buffer ab = buffer_of(a, false, "AgGemm.run (a_shard)", rt.pe());
            Buffer bb = buffer_of(b, false, "AgGemm.run (b)", rt.pe());
            Buffer cb = buffer_of(c, true, "AgGemm.run (c)", rt.pe());
            expect(ab, op.m() / static_cast<std::size_t>(rt.n_pes()), op.k(), dt, "AgGemm.run",
                   "a_shard", rt.pe());
            expect(bb, op.k(), op.n_local(), dt, "AgGemm.run", "b", rt.pe());
            expect(cb, op.m(), op.n_local(), "float32", "AgGemm.run", "c", rt.pe());
            run_gemm(op, *self.state, ab, bb, cb);
          },
          "a_shard"_a, "b"_a, "c"_a,
          "Stream-ordered: c = all_gather(a_shard) @ b; rt.synchronize() waits.")
      .def_prop_ro(
          "variant",
          [](PyAgGemm& self) { return std::string(ops::to_string(self.get("AgGemm").variant())); })
      .def_prop_ro(
          "direction",
          [](PyAgGemm& self) { return std::string(ops::to_string(self.get("AgGemm").variant())); },
          "'push' or 'pull' (the variant chosen).")
      .def_prop_ro(
          "pattern",
          [](PyAgGemm& self) { return std::string(ops::to_string(self.get("AgGemm").pattern())); },
          "The overlap pattern chosen (never 'automatic').")
      .def("free", &PyAgGemm::free, "Collective: waits for the stream, frees the workspace.")
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](PyAgGemm& self, nb::args) {
        if (self.op && self.state->alive) self.free();
      });

  nb::class_<PyGemmRs>(
      m, "GemmRs",
      "C_shard[m/P, n] = reduce_scatter(A[m, k_local] @ B[k_local, n]), the reduction "
      "overlapped with the GEMM. Collective to make and to free.")
      .def(
          "__init__",
          [](PyGemmRs* self, const PyRuntime& s, std::size_t mm, std::size_t n, std::size_t k_local,
             nb::handle dtype, const std::string& pattern, const std::string& direction,
             int comm_blocks) {
            Runtime& rt = s.rt();
            ops::GemmRsOptions o;
            o.pattern = pattern_from(pattern, "GemmRs", rt.pe());
            o.direction = direction_from(direction, "GemmRs", rt.pe());
            o.comm_blocks = comm_blocks;
            auto op = make_op<ops::GemmRs>(rt, mm, n, k_local, gemm_dtype(dtype), o);
            new (self) PyGemmRs(s.state, std::move(op));
          },
          "rt"_a, "m"_a, "n"_a, "k_local"_a, "dtype"_a = "float32", "pattern"_a = "auto",
          "direction"_a = "auto", "comm_blocks"_a = 1,
          "Collective. pattern, direction and comm_blocks as for AgGemm.")
      .def(
          "run",
          [](PyGemmRs& self, nb::handle a, nb::handle b, nb::handle c) {
            auto& op = self.get("GemmRs.run");
            Runtime& rt = self.state->rt;
            const char* dt = gemm_name(op.dtype());
            Buffer ab = buffer_of(a, false, "GemmRs.run (a)", rt.pe());
            Buffer bb = buffer_of(b, false, "GemmRs.run (b)", rt.pe());
            Buffer cb = buffer_of(c, true, "GemmRs.run (c)", rt.pe());
            expect(ab, op.m(), op.k_local(), dt, "GemmRs.run", "a", rt.pe());
            expect(bb, op.k_local(), op.n(), dt, "GemmRs.run", "b", rt.pe());
            expect(cb, op.m() / static_cast<std::size_t>(rt.n_pes()), op.n(), "float32",
                   "GemmRs.run", "c", rt.pe());
            run_gemm(op, *self.state, ab, bb, cb);
          },
          "a"_a, "b"_a, "c"_a, "Stream-ordered: c = this PE's rows of sum over PEs of a @ b.")
      .def_prop_ro(
          "pattern",
          [](PyGemmRs& self) { return std::string(ops::to_string(self.get("GemmRs").pattern())); },
          "The overlap pattern chosen (never 'automatic').")
      .def_prop_ro(
          "direction",
          [](PyGemmRs& self) {
            return std::string(ops::to_string(self.get("GemmRs").direction()));
          },
          "'push' or 'pull' ('automatic' for bulk_synchronous, whose collective picks).")
      .def("free", &PyGemmRs::free, "Collective: waits for the stream, frees the workspace.")
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](PyGemmRs& self, nb::args) {
        if (self.op && self.state->alive) self.free();
      });

  bind_fused_gemm<ops::GemmAr, ops::GemmArOptions>(
      m, "GemmAr",
      "C[m, n] = all_reduce over PEs of A[m, k_local] @ B[k_local, n] (fp32 on every PE), the "
      "reduction overlapped with the GEMM as `pattern` says. Collective to make and to free.",
      "n", "k_local");
  bind_fused_gemm<ops::GemmAs, ops::GemmAsOptions>(
      m, "GemmAs",
      "C[m, n_local * P]: each PE computes its column block A[m, k] @ B[k, n_local] and "
      "all-scatters it, so every PE holds all of C (fp32). Collective to make and to free.",
      "n_local", "k");

  nb::class_<PyMoeHandle>(
      m, "MoeHandle",
      "What a dispatch produced on this PE: views into the MoeBuffer, valid after "
      "rt.synchronize() and until the next dispatch.")
      .def_prop_ro("tokens", [](const PyMoeHandle& h) { return h.handle.tokens; })
      .def_prop_ro("local_experts", [](const PyMoeHandle& h) { return h.handle.local_experts; })
      .def_prop_ro("rows", [](const PyMoeHandle& h) { return moe_rows(h, "MoeHandle.rows"); })
      .def_prop_ro("expert_x",
                   [](const PyMoeHandle& h) {
                     return moe_view(h, h.handle.expert_x,
                                     {moe_rows(h, "MoeHandle.expert_x"), h.handle.hidden},
                                     moe_name(h.handle.dtype));
                   })
      .def_prop_ro("expert_counts",
                   [](const PyMoeHandle& h) {
                     return moe_view(h, h.handle.expert_counts,
                                     {static_cast<std::size_t>(h.handle.local_experts)}, "int64");
                   })
      .def_prop_ro("expert_offsets",
                   [](const PyMoeHandle& h) {
                     return moe_view(h, h.handle.expert_offsets,
                                     {static_cast<std::size_t>(h.handle.local_experts) + 1},
                                     "int64");
                   })
      .def_prop_ro("src_pe",
                   [](const PyMoeHandle& h) {
                     return moe_view(h, h.handle.src_pe, {moe_rows(h, "MoeHandle.src_pe")},
                                     "int32");
                   })
      .def_prop_ro("src_token",
                   [](const PyMoeHandle& h) {
                     return moe_view(h, h.handle.src_token, {moe_rows(h, "MoeHandle.src_token")},
                                     "int32");
                   })
      .def_prop_ro("slot",
                   [](const PyMoeHandle& h) {
                     return moe_view(h, h.handle.slot, {moe_rows(h, "MoeHandle.slot")}, "int32");
                   })
      .def_prop_ro("weight", [](const PyMoeHandle& h) {
        return moe_view(h, h.handle.weight, {moe_rows(h, "MoeHandle.weight")}, "float32");
      });

  nb::class_<PyMoe>(
      m, "MoeBuffer",
      "MoE dispatch and combine over the symmetric heap: tokens go to E experts split "
      "evenly over the PEs and come back weighted. Collective to make and to free.")
      .def(
          "__init__",
          [](PyMoe* self, const PyRuntime& s, std::size_t max_tokens_per_pe, std::size_t hidden,
             int topk, int num_experts, nb::handle dtype, std::size_t recv_capacity,
             std::size_t expert_capacity, std::size_t expert_alignment, int max_blocks) {
            Runtime& rt = s.rt();
            ops::MoeConfig c;
            c.max_tokens_per_pe = max_tokens_per_pe;
            c.hidden = hidden;
            c.topk = topk;
            c.num_experts = num_experts;
            Dtype d = dtype_from(dtype);
            if (is(d, "float32")) {
              c.dtype = ops::MoeDtype::f32;
            } else if (is(d, "bfloat16")) {
              c.dtype = ops::MoeDtype::bf16;
            } else {
              fail(ErrorCode::invalid_argument, rt.pe(),
                   std::string("MoeBuffer: dtype must be float32 or bfloat16, not ") + d.name);
            }
            c.recv_capacity = recv_capacity;
            c.expert_capacity = expert_capacity;
            c.expert_alignment = expert_alignment;
            c.max_blocks = max_blocks;
            std::shared_ptr<ops::MoeBuffer> op;
            {
              nb::gil_scoped_release unlocked;
              op = std::make_shared<ops::MoeBuffer>(rt, c);
            }
            new (self) PyMoe(s.state, std::move(op));
          },
          "rt"_a, "max_tokens_per_pe"_a, "hidden"_a, "topk"_a, "num_experts"_a,
          "dtype"_a = "bfloat16", "recv_capacity"_a = 0, "expert_capacity"_a = 0,
          "expert_alignment"_a = 1, "max_blocks"_a = 4)
      .def_prop_ro("local_experts",
                   [](PyMoe& self) { return self.get("MoeBuffer").local_experts(); })
      .def_prop_ro(
          "expert_capacity",
          [](PyMoe& self) { return self.get("MoeBuffer").config().expert_capacity; },
          "The most expert rows a dispatch can leave on this PE (padding included): the rows a "
          "combine's expert_out needs inside a capture.")
      .def(
          "dispatch",
          [](PyMoe& self, nb::handle x, nb::handle topk_idx, nb::handle topk_weight) {
            auto& op = self.get("MoeBuffer.dispatch");
            Runtime& rt = self.state->rt;
            const auto& c = op.config();
            const char* dt = moe_name(c.dtype);
            Buffer xb = buffer_of(x, false, "MoeBuffer.dispatch (x)", rt.pe());
            Buffer ib = buffer_of(topk_idx, false, "MoeBuffer.dispatch (topk_idx)", rt.pe());
            Buffer wb = buffer_of(topk_weight, false, "MoeBuffer.dispatch (topk_weight)", rt.pe());
            if (xb.shape.size() != 2 || xb.shape[1] != c.hidden || !is(xb.dtype, dt)) {
              fail(ErrorCode::invalid_argument, rt.pe(),
                   "MoeBuffer.dispatch: x must be (tokens, " + std::to_string(c.hidden) + ") " +
                       dt + ", got " + xb.describe());
            }
            const std::size_t tokens = xb.shape[0];
            const auto k = static_cast<std::size_t>(c.topk);
            if (!is(ib.dtype, "int32") && !is(ib.dtype, "int64")) {
              fail(ErrorCode::invalid_argument, rt.pe(),
                   "MoeBuffer.dispatch: topk_idx must be int32 or int64, got " + ib.describe());
            }
            expect(ib, tokens, k, ib.dtype.name, "MoeBuffer.dispatch", "topk_idx", rt.pe());
            expect(wb, tokens, k, "float32", "MoeBuffer.dispatch", "topk_weight", rt.pe());
            const auto* w = static_cast<const float*>(wb.data);
            ops::MoeHandle h;
            const bool i32 = is(ib.dtype, "int32");
            if (c.dtype == ops::MoeDtype::f32) {
              const auto* xp = static_cast<const float*>(xb.data);
              h = i32 ? op.dispatch(rt.stream(), xp, tokens,
                                    static_cast<const std::int32_t*>(ib.data), w)
                      : op.dispatch(rt.stream(), xp, tokens,
                                    static_cast<const std::int64_t*>(ib.data), w);
            } else {
              const auto* xp = static_cast<const device::bf16*>(xb.data);
              h = i32 ? op.dispatch(rt.stream(), xp, tokens,
                                    static_cast<const std::int32_t*>(ib.data), w)
                      : op.dispatch(rt.stream(), xp, tokens,
                                    static_cast<const std::int64_t*>(ib.data), w);
            }
            for (auto* b : {&xb, &ib, &wb}) self.state->in_flight.push_back(b->keep);
            return PyMoeHandle{h, self.lifetime, rt.pe(), h.epoch};
          },
          "x"_a, "topk_idx"_a, "topk_weight"_a,
          "Collective, stream-ordered: sends each token to its top-k experts' PEs. Read the "
          "handle's arrays after rt.synchronize(). Captured, the handle describes every replay "
          "(its arrays hold the latest replay's results); its rows and row arrays raise while "
          "the capture is open.")
      .def(
          "combine",
          [](PyMoe& self, const PyMoeHandle& h, nb::handle expert_out, nb::handle y) {
            auto& op = self.get("MoeBuffer.combine");
            Runtime& rt = self.state->rt;
            const char* dt = moe_name(op.config().dtype);
            Buffer ob = buffer_of(expert_out, false, "MoeBuffer.combine (expert_out)", rt.pe());
            Buffer yb = buffer_of(y, true, "MoeBuffer.combine (y)", rt.pe());
            if (rt.stream().capturing()) {
              // The captured dispatch has not run: its row count is not known yet, and every
              // replay may have another. expert_out must fit the most rows any dispatch makes.
              const std::size_t most = op.config().expert_capacity * h.handle.hidden;
              if (ob.shape.empty() || ob.shape.back() != h.handle.hidden || !is(ob.dtype, dt) ||
                  ob.nbytes < most * ob.dtype.itemsize()) {
                fail(ErrorCode::invalid_argument, rt.pe(),
                     "MoeBuffer.combine: inside a capture expert_out must be (expert_capacity = " +
                         std::to_string(op.config().expert_capacity) + ", " +
                         std::to_string(h.handle.hidden) + ") " + dt +
                         " or larger (a replay's row count is known only when it runs), got " +
                         ob.describe());
              }
            } else {
              expect(ob, h.handle.rows(), h.handle.hidden, dt, "MoeBuffer.combine", "expert_out",
                     rt.pe());
            }
            expect(yb, h.handle.tokens, h.handle.hidden, dt, "MoeBuffer.combine", "y", rt.pe());
            if (op.config().dtype == ops::MoeDtype::f32) {
              op.combine(rt.stream(), h.handle, static_cast<const float*>(ob.data),
                         static_cast<float*>(yb.data));
            } else {
              op.combine(rt.stream(), h.handle, static_cast<const device::bf16*>(ob.data),
                         static_cast<device::bf16*>(yb.data));
            }
            for (auto* b : {&ob, &yb}) self.state->in_flight.push_back(b->keep);
          },
          "handle"_a, "expert_out"_a, "y"_a,
          "Collective, stream-ordered: y[t] = sum_k w[t,k] * expert_out[row of (t,k)], accumulated "
          "in fp32. expert_out is (handle.rows, hidden); inside a capture, where the rows are "
          "not known yet, (expert_capacity, hidden) or larger.")
      .def("free", &PyMoe::free, "Collective: waits for the stream, frees the buffers.")
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](PyMoe& self, nb::args) {
        if (self.op && self.state->alive) self.free();
      });
}

}  // namespace tessera::python
