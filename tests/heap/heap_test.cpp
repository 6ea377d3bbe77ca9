// The symmetric heap on the host backend: offsets, translation, allocator, and every error a
// user can hit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "harness/expect_error.hpp"
#include "harness/run_pes.hpp"

namespace tessera {
namespace {

using harness::expect_error;
using harness::PeOptions;
using harness::run_pes;
using ::testing::HasSubstr;

TEST(Heap, SameOffsetsOnEveryPe) {
  constexpr int kPes = 4;
  std::vector<std::vector<std::size_t>> offsets(kPes);
  run_pes(kPes, [&](Runtime& rt) {
    auto& mine = offsets[static_cast<std::size_t>(rt.pe())];
    std::vector<void*> blocks;
    for (std::size_t bytes : {1u, 100u, 4096u, 65536u, 3u}) {
      blocks.push_back(rt.malloc(bytes));
      mine.push_back(rt.heap_offset(blocks.back()));
    }
    rt.free(blocks[1]);
    blocks.push_back(rt.malloc(50));
    mine.push_back(rt.heap_offset(blocks.back()));
  });
  for (int pe = 1; pe < kPes; ++pe) EXPECT_EQ(offsets[0], offsets[static_cast<std::size_t>(pe)]);
  EXPECT_EQ(offsets[0].back(), offsets[0][1]) << "the freed block's space is reused first-fit";
}

TEST(Heap, WriteOnOnePeIsSeenByAnotherThroughTranslation) {
  run_pes(4, [](Runtime& rt) {
    auto buf = rt.alloc<int>(4);
    const int right = (rt.pe() + 1) % rt.n_pes();
    int* remote = static_cast<int*>(rt.ptr(buf.get(), right));
    ASSERT_NE(remote, nullptr);
    remote[rt.pe()] = 1000 + rt.pe();  // store straight into the neighbour's heap
    rt.barrier();
    const int left = (rt.pe() + rt.n_pes() - 1) % rt.n_pes();
    EXPECT_EQ(buf[static_cast<std::size_t>(left)], 1000 + left);
    // And through the device Context's translation.
    auto ctx = rt.device_context();
    EXPECT_EQ(ctx.ptr(buf.get(), right), remote);
    EXPECT_EQ(ctx.ptr(buf.get(), rt.pe()), buf.get());
    rt.barrier();
  });
}

TEST(Heap, HostPutAndGetMoveBytesBetweenPes) {
  run_pes(3, [](Runtime& rt) {
    auto buf = rt.alloc<std::uint64_t>(64);
    std::vector<std::uint64_t> mine(64);
    for (std::size_t i = 0; i < mine.size(); ++i)
      mine[i] = 100u * static_cast<unsigned>(rt.pe()) + i;
    const int right = (rt.pe() + 1) % rt.n_pes();
    rt.put(buf.get(), mine.data(), mine.size() * 8, right);
    rt.barrier();
    const int left = (rt.pe() + rt.n_pes() - 1) % rt.n_pes();
    for (std::size_t i = 0; i < 64; ++i) ASSERT_EQ(buf[i], 100u * static_cast<unsigned>(left) + i);
    std::vector<std::uint64_t> fetched(64);
    rt.get(fetched.data(), buf.get(), 64 * 8, right);  // right holds my values
    EXPECT_EQ(fetched, mine);
    rt.barrier();
  });
}

TEST(Heap, FreedSpaceCoalescesAndIsReused) {
  run_pes(2, [](Runtime& rt) {
    const std::size_t before = rt.heap_free_bytes();
    void* a = rt.malloc(1 << 20);
    void* b = rt.malloc(1 << 20);
    void* c = rt.malloc(1 << 20);
    rt.free(a);
    rt.free(c);
    rt.free(b);  // joins a and c into one range again
    EXPECT_EQ(rt.heap_free_bytes(), before);
    EXPECT_EQ(rt.heap_largest_free(), before);
    void* big = rt.malloc(3 << 20);
    EXPECT_EQ(big, a);
    rt.free(big);
  });
}

TEST(Heap, AlignmentIsHonoured) {
  run_pes(2, [](Runtime& rt) {
    void* pad = rt.malloc(8);
    for (std::size_t align : {64ul, 128ul, 4096ul, 1ul << 16, 1ul << 21}) {
      void* p = rt.malloc(100, align);
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % align, 0u) << "align " << align;
      EXPECT_EQ(rt.heap_offset(p) % align, 0u);
      rt.free(p);
    }
    rt.free(pad);
    expect_error(ErrorCode::invalid_argument, [&] { rt.malloc(64, 48); });
    // Host heaps are mapped aligned to the largest power of two within their
    // size (at most 1 GiB), so only alignments above that are refused.
    expect_error(ErrorCode::invalid_argument, [&] { rt.malloc(64, 2ul << 30); });
  });
}

TEST(Heap, ZeroBytesReturnsNullAndFreeingNullIsANoOp) {
  run_pes(2, [](Runtime& rt) {
    EXPECT_EQ(rt.malloc(0), nullptr);
    rt.free(nullptr);
    auto empty = rt.alloc<float>(0);
    EXPECT_EQ(empty.get(), nullptr);
  });
}

TEST(Heap, CallocZeroesEveryPesBlock) {
  run_pes(2, [](Runtime& rt) {
    auto* dirty = static_cast<unsigned char*>(rt.malloc(4096));
    std::memset(dirty, 0xab, 4096);
    rt.free(dirty);
    auto* clean = static_cast<unsigned char*>(rt.calloc(1024, 4));
    ASSERT_EQ(clean, dirty);
    for (int i = 0; i < 4096; ++i) ASSERT_EQ(clean[i], 0) << i;
    rt.free(clean);
  });
}

TEST(Heap, SizeMismatchBetweenPesNamesThePesAndTheirValues) {
  run_pes(4, [](Runtime& rt) {
    const std::size_t bytes = rt.pe() == 2 ? 8192 : 4096;
    Error e = expect_error(ErrorCode::invalid_argument, [&] { rt.malloc(bytes); });
    EXPECT_THAT(e.what(), HasSubstr("PEs 0-1,3 called malloc #1 with bytes=4096"));
    EXPECT_THAT(e.what(), HasSubstr("PE 2 called malloc #1 with bytes=8192"));
    // The heap keeps working after the error.
    void* p = rt.malloc(128);
    EXPECT_NE(p, nullptr);
    rt.free(p);
  });
}

TEST(Heap, AlignmentMismatchIsReported) {
  run_pes(2, [](Runtime& rt) {
    Error e =
        expect_error(ErrorCode::invalid_argument, [&] { rt.malloc(256, rt.pe() == 0 ? 64 : 128); });
    EXPECT_THAT(e.what(), HasSubstr("align=128"));
  });
}

TEST(Heap, DifferentCollectivesAreReported) {
  run_pes(2, [](Runtime& rt) {
    void* p = rt.malloc(64);
    Error e = expect_error(ErrorCode::invalid_argument, [&] {
      if (rt.pe() == 0) {
        rt.free(p);
      } else {
        rt.malloc(64);
      }
    });
    EXPECT_THAT(e.what(), HasSubstr("PE 0 called free"));
    EXPECT_THAT(e.what(), HasSubstr("PE 1 called malloc"));
  });
}

TEST(Heap, ExhaustionThrowsOutOfMemoryAndTheHeapKeepsWorking) {
  PeOptions o;
  o.heap_size = 1 << 20;
  run_pes(
      2,
      [](Runtime& rt) {
        void* a = rt.malloc(600 << 10);
        Error e = expect_error(ErrorCode::out_of_memory, [&] { rt.malloc(600 << 10); });
        EXPECT_THAT(e.what(), HasSubstr("requested 614400 bytes"));
        EXPECT_THAT(e.what(), HasSubstr("free 434176 bytes"));
        EXPECT_THAT(e.what(), HasSubstr("largest free block 434176 bytes"));
        void* b = rt.malloc(400 << 10);  // still fits
        EXPECT_NE(b, nullptr);
        rt.free(a);
        rt.free(b);
        void* c = rt.malloc(1 << 20);  // the whole heap is one range again
        EXPECT_NE(c, nullptr);
        rt.free(c);
      },
      o);
}

TEST(Heap, DoubleFreeIsRejected) {
  run_pes(2, [](Runtime& rt) {
    void* p = rt.malloc(256);
    rt.free(p);
    Error e = expect_error(ErrorCode::invalid_argument, [&] { rt.free(p); });
    EXPECT_THAT(e.what(), HasSubstr("not the start of a live block"));
  });
}

TEST(Heap, FreeingAPointerIntoABlockIsRejected) {
  run_pes(2, [](Runtime& rt) {
    auto* p = static_cast<char*>(rt.malloc(256));
    expect_error(ErrorCode::invalid_argument, [&] { rt.free(p + 64); });
    rt.free(p);
  });
}

TEST(Heap, FreeingAPointerOutsideTheHeapIsRejected) {
  run_pes(2, [](Runtime& rt) {
    int local = 0;
    Error e = expect_error(ErrorCode::invalid_argument, [&] { rt.free(&local); });
    EXPECT_THAT(e.what(), HasSubstr("is not in the symmetric heap"));
  });
}

TEST(Heap, HostPutRejectsBadPeAndRangesOutsideTheHeap) {
  run_pes(2, [](Runtime& rt) {
    auto buf = rt.alloc<char>(128);
    char src[256] = {};
    Error bad_pe = expect_error(ErrorCode::invalid_argument, [&] { rt.put(buf.get(), src, 8, 2); });
    EXPECT_THAT(bad_pe.what(), HasSubstr("PE 2 is outside [0, 2)"));
    expect_error(ErrorCode::invalid_argument, [&] { rt.put(buf.get(), src, 8, -1); });
    expect_error(ErrorCode::invalid_argument, [&] { rt.put(src, src, 8, 1); });
    char* end = static_cast<char*>(rt.heap_base()) + rt.heap_size();
    expect_error(ErrorCode::invalid_argument, [&] { rt.put(end - 8, src, 16, 1); });
    expect_error(ErrorCode::invalid_argument, [&] { rt.get(src, end - 4, 8, 1); });
  });
}

TEST(Heap, PeerOnAnotherNodeIsNotMappedAndSaysSo) {
  PeOptions o;
  o.node_ids = {"alpha", "alpha", "beta", "beta"};
  run_pes(
      4,
      [](Runtime& rt) {
        EXPECT_EQ(rt.node_size(), 2);
        EXPECT_EQ(rt.node(), rt.pe() / 2);
        EXPECT_EQ(rt.node_pe(), rt.pe() % 2);
        auto buf = rt.alloc<int>(1);
        const int same_node = rt.pe() ^ 1;
        const int other_node = (rt.pe() + 2) % 4;
        EXPECT_NE(rt.ptr(buf.get(), same_node), nullptr);
        EXPECT_EQ(rt.ptr(buf.get(), other_node), nullptr);
        EXPECT_FALSE(rt.device_context().is_mapped(other_node));
        int v = 1;
        Error e = expect_error(ErrorCode::transport, [&] { rt.put(buf.get(), &v, 4, other_node); });
        EXPECT_THAT(e.what(), HasSubstr("PE " + std::to_string(other_node) + " is on node"));
        EXPECT_THAT(e.what(), HasSubstr("network transport"));
        rt.barrier();
      },
      o);
}

TEST(Heap, UnevenNodeSplitMapsOnlyTheSameNode) {
  PeOptions o;
  o.node_ids = {"alpha", "alpha", "beta"};
  run_pes(
      3,
      [](Runtime& rt) {
        EXPECT_EQ(rt.node_size(), rt.pe() < 2 ? 2 : 1);
        auto buf = rt.alloc<int>(1);
        for (int pe = 0; pe < 3; ++pe) {
          const bool same_node = (pe < 2) == (rt.pe() < 2);
          EXPECT_EQ(rt.ptr(buf.get(), pe) != nullptr, same_node) << "PE " << pe;
        }
        rt.barrier();
      },
      o);
}

TEST(Heap, HeapSizeMismatchAtInitIsReported) {
  auto group = make_threads_group(2);
  std::atomic<int> errors{0};
  harness::run_threads(2, [&](int rank) {
    PeOptions o;
    o.heap_size = rank == 0 ? (1 << 20) : (2 << 20);
    try {
      Runtime rt = Runtime::init(harness::pe_options(group, rank, o));
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("disagree on the heap size"));
      EXPECT_THAT(e.what(), HasSubstr("PE 1 asked for 2097152 bytes"));
      ++errors;
    }
  });
  EXPECT_EQ(errors.load(), 2);
}

TEST(Heap, SymmetricHandleFreesOnDestruction) {
  run_pes(2, [](Runtime& rt) {
    const std::size_t before = rt.heap_free_bytes();
    {
      auto a = rt.alloc<double>(1000);
      auto b = std::move(a);
      EXPECT_EQ(a.get(), nullptr);
      EXPECT_EQ(b.size(), 1000u);
      EXPECT_LT(rt.heap_free_bytes(), before);
    }
    EXPECT_EQ(rt.heap_free_bytes(), before);
  });
}

TEST(Runtime, ReinitWithADifferentPeCountInOneProcess) {
  for (int n : {2, 4, 1, 3}) {
    run_pes(n, [n](Runtime& rt) {
      EXPECT_EQ(rt.n_pes(), n);
      auto buf = rt.alloc<int>(static_cast<std::size_t>(n));
      for (int pe = 0; pe < n; ++pe) static_cast<int*>(rt.ptr(buf.get(), pe))[rt.pe()] = rt.pe();
      rt.barrier();
      for (int pe = 0; pe < n; ++pe) EXPECT_EQ(buf[static_cast<std::size_t>(pe)], pe);
      rt.barrier();
    });
  }
}

TEST(Runtime, FinalizeTwiceIsHarmlessAndUseAfterFinalizeThrows) {
  run_pes(2, [](Runtime& rt) {
    Runtime moved = std::move(rt);
    moved.finalize();
    moved.finalize();
    EXPECT_FALSE(moved.valid());
    expect_error(ErrorCode::invalid_argument, [&] { moved.pe(); });
  });
}

TEST(Runtime, APeThatFailsReleasesItsPeersWithPeerLost) {
  auto group = make_threads_group(2);
  std::atomic<bool> saw_peer_lost{false};
  EXPECT_THROW(harness::run_threads(2,
                                    [&](int rank) {
                                      Runtime rt =
                                          Runtime::init(harness::pe_options(group, rank, {}));
                                      if (rank == 1) throw std::runtime_error("PE 1 fails");
                                      try {
                                        rt.barrier();
                                      } catch (const Error& e) {
                                        EXPECT_EQ(e.code(), ErrorCode::peer_lost);
                                        EXPECT_THAT(e.what(), HasSubstr("rank 1"));
                                        saw_peer_lost = true;
                                        throw;
                                      }
                                    }),
               std::runtime_error);
  EXPECT_TRUE(saw_peer_lost.load());
}

}  // namespace
}  // namespace tessera
