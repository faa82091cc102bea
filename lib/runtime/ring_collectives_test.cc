// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The ring algorithms and RingTransport on the in-memory ring: one thread
// per rank, no sockets, no forked processes.

#include "runtime/ring_collectives.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "testing/memory_ring.h"

namespace dist_train {
namespace {

// Runs body(rank, transport, link) on one thread per rank of a fresh
// in-memory ring; returns every rank's status.
std::vector<Status> OnRing(
    int n, const std::function<Status(int, Transport*, RingLink*)>& body,
    MemoryRingOptions options = {}) {
  MemoryRing ring(n, options);
  std::vector<Status> result(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      RingTransport transport(ring.link(r), "memory ring");
      result[r] = body(r, &transport, ring.link(r));
    });
  }
  for (std::thread& t : threads) t.join();
  return result;
}

void ExpectAllOk(const std::vector<Status>& statuses) {
  for (size_t r = 0; r < statuses.size(); ++r)
    EXPECT_TRUE(statuses[r].ok())
        << "rank " << r << ": " << statuses[r].ToString();
}

float Value(int rank, size_t i) {
  return static_cast<float>((rank + 1) * static_cast<int>(i % 7 + 1));
}

// Sums are exact (small integers in float32), so every element is checked
// against the serial sum, on the gather path (small), the ring's two
// passes (large) and fewer elements than ranks.
TEST(RingCollectivesTest, AllReduceSumsEveryElementOnEveryRingSize) {
  for (int n : {1, 2, 3, 5, 8}) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{2}, size_t{7},
                         size_t{100}, size_t{20011}}) {
      ExpectAllOk(OnRing(n, [&](int r, Transport* t, RingLink*) -> Status {
        std::vector<float> buf(count);
        for (size_t i = 0; i < count; ++i) buf[i] = Value(r, i);
        DT_RETURN_IF_ERROR(t->AllReduce(buf.data(), buf.data(), count,
                                        DataType::kFloat32, ReduceOp::kSum));
        for (size_t i = 0; i < count; ++i) {
          float want = 0;
          for (int k = 0; k < n; ++k) want += Value(k, i);
          if (buf[i] != want)
            return Status::Internal(std::to_string(n) + " ranks, " +
                                    std::to_string(count) + " elements: [" +
                                    std::to_string(i) +
                                    "] = " + std::to_string(buf[i]) +
                                    ", want " + std::to_string(want));
        }
        return Status::OK();
      }));
    }
  }
}

TEST(RingCollectivesTest, MinMaxAndAverageOutOfPlace) {
  const int n = 4;
  const size_t count = 9000;  // the ring path: 9000 * 8 * 4 > 64 KiB
  ExpectAllOk(OnRing(n, [&](int r, Transport* t, RingLink*) -> Status {
    std::vector<int64_t> send(count), mn(count), mx(count);
    for (size_t i = 0; i < count; ++i)
      send[i] = static_cast<int64_t>((r * 7919 + i * 31) % 1000) - 500;
    DT_RETURN_IF_ERROR(t->AllReduce(send.data(), mn.data(), count,
                                    DataType::kInt64, ReduceOp::kMin));
    DT_RETURN_IF_ERROR(t->AllReduce(send.data(), mx.data(), count,
                                    DataType::kInt64, ReduceOp::kMax));
    std::vector<double> avg(count, r + 1.0);
    DT_RETURN_IF_ERROR(t->AllReduce(avg.data(), avg.data(), count,
                                    DataType::kFloat64, ReduceOp::kAvg));
    for (size_t i = 0; i < count; ++i) {
      int64_t lo = INT64_MAX, hi = INT64_MIN;
      for (int k = 0; k < n; ++k) {
        int64_t v = static_cast<int64_t>((k * 7919 + i * 31) % 1000) - 500;
        lo = std::min(lo, v), hi = std::max(hi, v);
      }
      if (mn[i] != lo || mx[i] != hi || avg[i] != 2.5)
        return Status::Internal("element " + std::to_string(i));
    }
    return Status::OK();
  }));
}

// Inexact sums: every rank must still get the same bits, on both paths.
TEST(RingCollectivesTest, EveryRankGetsTheSameBits) {
  const int n = 5;
  for (size_t count : {size_t{300}, size_t{50000}}) {
    std::vector<std::vector<float>> results(n);
    ExpectAllOk(OnRing(n, [&](int r, Transport* t, RingLink*) -> Status {
      std::vector<float> buf(count);
      for (size_t i = 0; i < count; ++i)
        buf[i] = 1.0f / static_cast<float>(r * 13 + i % 97 + 3);
      DT_RETURN_IF_ERROR(t->AllReduce(buf.data(), buf.data(), count,
                                      DataType::kFloat32, ReduceOp::kSum));
      results[r] = buf;
      return Status::OK();
    }));
    for (int r = 1; r < n; ++r)
      EXPECT_EQ(0, std::memcmp(results[0].data(), results[r].data(),
                               count * sizeof(float)))
          << count << " elements: rank " << r << " differs from rank 0";
  }
}

// Segments over 1 MiB are reduced piece by piece while they arrive; the
// ring hands them over in 4 KiB pieces.
TEST(RingCollectivesTest, PipelinedReduceOfLargeSegments) {
  const size_t count = 700000;  // 2 ranks: 1.4 MB segments
  MemoryRingOptions small_pieces;
  small_pieces.piece = 4096;
  ExpectAllOk(OnRing(
      2,
      [&](int r, Transport* t, RingLink*) -> Status {
        std::vector<int32_t> buf(count);
        for (size_t i = 0; i < count; ++i)
          buf[i] = static_cast<int32_t>(i % 1000) * (r + 1);
        DT_RETURN_IF_ERROR(t->AllReduce(buf.data(), buf.data(), count,
                                        DataType::kInt32, ReduceOp::kSum));
        for (size_t i = 0; i < count; ++i)
          if (buf[i] != static_cast<int32_t>(i % 1000) * 3)
            return Status::Internal("element " + std::to_string(i));
        return Status::OK();
      },
      small_pieces));
}

TEST(RingCollectivesTest, ReduceScatterGivesEachRankItsSlice) {
  const int n = 3;
  const size_t count = 5;  // per rank
  ExpectAllOk(OnRing(n, [&](int r, Transport* t, RingLink*) -> Status {
    std::vector<int32_t> send(count * n), recv(count, -1);
    for (size_t i = 0; i < send.size(); ++i)
      send[i] = static_cast<int32_t>(i) + 100 * r;
    DT_RETURN_IF_ERROR(t->ReduceScatter(send.data(), recv.data(), count,
                                        DataType::kInt32, ReduceOp::kSum));
    for (size_t i = 0; i < count; ++i) {
      int32_t want = 3 * static_cast<int32_t>(count * r + i) + 300;
      if (recv[i] != want)
        return Status::Internal("rank " + std::to_string(r) + " [" +
                                std::to_string(i) +
                                "] = " + std::to_string(recv[i]));
    }
    return Status::OK();
  }));
}

TEST(RingCollectivesTest, AllGatherPutsEveryRanksPieceInItsPlace) {
  const int n = 4;
  const size_t count = 3;
  ExpectAllOk(OnRing(n, [&](int r, Transport* t, RingLink*) -> Status {
    std::vector<int64_t> mine(count), all(count * n, -1);
    for (size_t i = 0; i < count; ++i) mine[i] = r * 10 + i;
    DT_RETURN_IF_ERROR(
        t->AllGather(mine.data(), all.data(), count, DataType::kInt64));
    for (size_t i = 0; i < all.size(); ++i)
      if (all[i] != static_cast<int64_t>((i / count) * 10 + i % count))
        return Status::Internal("[" + std::to_string(i) + "]");
    return Status::OK();
  }));
}

// 2.5 MiB: three of the broadcast's 1 MiB chunks, from every root.
TEST(RingCollectivesTest, BroadcastFromEveryRootInChunks) {
  const int n = 3;
  const size_t count = (5 << 20) / 2 / sizeof(int32_t);
  for (int root = 0; root < n; ++root) {
    ExpectAllOk(OnRing(n, [&](int r, Transport* t, RingLink*) -> Status {
      std::vector<int32_t> buf(count, r == root ? 0 : -1);
      if (r == root)
        for (size_t i = 0; i < count; ++i)
          buf[i] = static_cast<int32_t>(i * 7) + root;
      DT_RETURN_IF_ERROR(
          t->Broadcast(buf.data(), count, DataType::kInt32, root));
      for (size_t i = 0; i < count; ++i)
        if (buf[i] != static_cast<int32_t>(i * 7) + root)
          return Status::Internal("root " + std::to_string(root) + " [" +
                                  std::to_string(i) + "]");
      return Status::OK();
    }));
  }
}

TEST(RingCollectivesTest, DescribeNamesTheRingAndItsRanks) {
  MemoryRing ring(3);
  EXPECT_EQ(RingTransport(ring.link(1), "tcp ring").Describe(),
            "tcp ring (3 ranks)");
}

// A rank that fails mid-job: its next rank's collective fails naming it,
// the others fail at their deadline; none hangs, none reports success.
TEST(RingCollectivesTest, ABrokenRankIsNamedAndNoRankHangs) {
  MemoryRingOptions quick;
  quick.timeout_seconds = 0.5;
  MemoryRing ring(3, quick);
  std::vector<Status> result(3);
  std::vector<std::thread> threads;
  for (int r : {0, 2}) {
    threads.emplace_back([&, r] {
      RingTransport transport(ring.link(r), "memory ring");
      std::vector<float> buf(50000, 1.0f);
      result[r] = transport.AllReduce(buf.data(), buf.data(), buf.size(),
                                      DataType::kFloat32, ReduceOp::kSum);
    });
  }
  ring.Break(1);
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(result[2].code(), Status::Code::kUnavailable)
      << result[2].ToString();
  EXPECT_NE(result[2].message().find("rank 1 closed the connection"),
            std::string::npos)
      << result[2].ToString();
  EXPECT_FALSE(result[0].ok());
  EXPECT_NE(result[0].message().find("rank 2"), std::string::npos)
      << result[0].ToString();
}

// Once broken, a rank's own exchanges fail at once.
TEST(RingCollectivesTest, ABrokenRanksOwnCollectivesFail) {
  MemoryRing ring(2);
  ring.Break(0);
  RingTransport transport(ring.link(0), "memory ring");
  int32_t x = 1;
  Status s = transport.AllReduce(&x, &x, 1, DataType::kInt32, ReduceOp::kSum);
  EXPECT_EQ(s.code(), Status::Code::kUnavailable) << s.ToString();
}

TEST(SegmentStartTest, SegmentsTileTheVectorInOrder) {
  for (int n : {1, 3, 7})
    for (size_t count : {size_t{0}, size_t{5}, size_t{100}}) {
      EXPECT_EQ(SegmentStart(count, n, 0), 0u);
      EXPECT_EQ(SegmentStart(count, n, n), count);
      for (int i = 0; i < n; ++i)
        EXPECT_LE(SegmentStart(count, n, i), SegmentStart(count, n, i + 1));
    }
}

}  // namespace
}  // namespace dist_train
