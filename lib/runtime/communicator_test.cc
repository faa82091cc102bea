// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Multi-process tests of the collectives on one machine: every rank is a
// forked process; a child reports failure through its exit code and
// stderr. Failures, strangers and ports: communicator_failure_test.cc.
#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <thread>

#include "dist_train/runtime.h"
#include "runtime/communicator_impl.h"
#include "runtime/handshake.h"
#include "runtime/reduce.h"
#include "runtime/wire.h"
#include "testing/testing_collectives.h"
#include "testing/testing_ranks.h"

namespace dist_train {
namespace {

using namespace testing_ranks;        // NOLINT: test helpers
using namespace testing_collectives;  // NOLINT: test helpers

TEST(CommunicatorTest, EveryCollectiveTypeOpAndOddSizeOnTwoThreeAndFiveRanks) {
  for (int n : {1, 2, 3, 5}) {
    std::vector<int> codes = RunRanks(n, Base(n, FreePort()), AllCollectives);
    EXPECT_EQ(codes, std::vector<int>(n, 0)) << n << " ranks";
  }
}

TEST(CommunicatorTest, EveryCollectiveOverTheTcpRingToo) {
  // DT_SHM=0: all-reduce over TCP as between nodes.
  auto tcp = [](const Options& o) {
    setenv("DT_SHM", "0", 1);
    return AllCollectives(o);
  };
  EXPECT_EQ(RunRanks(3, Base(3, FreePort()), tcp), std::vector<int>(3, 0));
}

// Vectors of several shared-memory chunks, every type and op: each rank
// reduces its share of a chunk reading its own part from its source (not
// its slot), so all-reduce (in place) and reduce-scatter (source and
// result apart, one slice wanted) must both come out right; 600001
// elements cross chunk and share boundaries off the element grid.
int ChunkedCollectives(const Options& o) {
  std::unique_ptr<Communicator> c;
  Status s = Communicator::Create(o, &c);
  CHILD_CHECK(s.ok(), "%s", s.ToString().c_str());
  const size_t count = 600001;
  for (DataType t : kTypes) {
    for (ReduceOp op : kOps) {
      // Every type (element sizes 2, 4, 8) with sum, every op with float32:
      // the chunking depends on the element size only.
      if (op != ReduceOp::kSum && t != DataType::kFloat32) continue;
      if (int e = CheckReductions(c.get(), count, count / 3, t, op)) return e;
    }
  }
  return 0;
}

TEST(CommunicatorTest, ChunkedSharedMemoryPathEveryTypeAndOp) {
  for (int n : {2, 3}) {
    std::vector<int> codes =
        RunRanks(n, Base(n, FreePort()), ChunkedCollectives);
    EXPECT_EQ(codes, std::vector<int>(n, 0)) << n << " ranks";
  }
}

// Over TCP, small all-reduces gather every rank's vector and reduce them
// all in ring order, larger ones take the ring's two passes: either way a
// sum whose rounding depends on the order comes out with the same bits on
// every rank (checked by gathering every rank's result).
TEST(CommunicatorTest, TcpAllReduceGivesEveryRankTheSameBits) {
  auto fn = [](const Options& o) {
    setenv("DT_SHM", "0", 1);
    std::unique_ptr<Communicator> c;
    Status s = Communicator::Create(o, &c);
    CHILD_CHECK(s.ok(), "%s", s.ToString().c_str());
    const int n = c->size(), r = c->rank();
    for (size_t count : {size_t{5}, size_t{4096}, size_t{100003}}) {
      std::vector<float> v(count);
      // (big + -big) + small == small, but (small + big) + -big == 0.
      for (size_t i = 0; i < count; ++i) {
        float big = 1e8f * static_cast<float>(1 + i % 3);
        v[i] = r == 0   ? big
               : r == 1 ? -big
                        : 0.5f * static_cast<float>(1 + i % 7);
      }
      CHILD_CHECK(c->AllReduce(v.data(), v.data(), count, DataType::kFloat32,
                               ReduceOp::kSum)
                      .ok(),
                  "allreduce %zu", count);
      std::vector<float> all(count * n);
      CHILD_CHECK(
          c->AllGather(v.data(), all.data(), count, DataType::kFloat32).ok(),
          "allgather");
      for (int q = 0; q < n; ++q)
        CHILD_CHECK(std::memcmp(all.data() + q * count, v.data(),
                                count * sizeof(float)) == 0,
                    "count %zu: rank %d's result differs from rank %d's", count,
                    q, r);
    }
    return 0;
  };
  EXPECT_EQ(RunRanks(4, Base(4, FreePort()), fn), std::vector<int>(4, 0));
}

// Three "machines" on loopback (127.0.0.1, .2, .3: ranks leave from their
// machine's address): shared memory inside each, a ring among the leaders.
TEST(CommunicatorTest, HierarchicalAcrossMachines) {
  auto fn = [](const Options& base) {
    Options o = base;
    const char* machine[] = {"127.0.0.1", "127.0.0.1", "127.0.0.2",
                             "127.0.0.3", "127.0.0.2", "127.0.0.2"};
    o.local_addr = machine[o.rank];
    std::unique_ptr<Communicator> c;
    Status s = Communicator::Create(o, &c);
    CHILD_CHECK(s.ok(), "%s", s.ToString().c_str());
    CHILD_CHECK(c->Describe() ==
                    "shared memory within 3 machines, tcp ring between them "
                    "(6 ranks)",
                "%s", c->Describe().c_str());
    // Larger than a shared-memory chunk, and odd.
    for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{3000001}}) {
      std::vector<double> v(count);
      for (size_t i = 0; i < count; ++i) v[i] = c->rank() * 1000.0 + i % 97;
      s = c->AllReduce(v.data(), v.data(), count, DataType::kFloat64,
                       ReduceOp::kSum);
      CHILD_CHECK(s.ok(), "%s", s.ToString().c_str());
      for (size_t i = 0; i < count; ++i)
        CHILD_CHECK(v[i] == 15000.0 + 6.0 * (i % 97), "[%zu] = %g", i, v[i]);
      int32_t m = c->rank();
      s = c->AllReduce(&m, &m, 1, DataType::kInt32, ReduceOp::kMax);
      CHILD_CHECK(s.ok() && m == 5, "max %d", m);
    }
    c.reset();
    return AllCollectives(o);  // every collective, again hierarchical
  };
  EXPECT_EQ(RunRanks(6, Base(6, FreePort()), fn), std::vector<int>(6, 0));
}

TEST(CommunicatorTest, SixteenRanksAllReduceALargeBuffer) {
  const int n = 16;
  auto fn = [](const Options& o) {
    std::unique_ptr<Communicator> c;
    Status s = Communicator::Create(o, &c);
    CHILD_CHECK(s.ok(), "%s", s.ToString().c_str());
    std::vector<float> v(1 << 18, static_cast<float>(c->rank()));
    CHILD_CHECK(c->AllReduce(v.data(), v.data(), v.size(), DataType::kFloat32,
                             ReduceOp::kSum)
                    .ok(),
                "allreduce");
    for (float x : v) CHILD_CHECK(x == 120.0f, "%g", x);
    return 0;
  };
  EXPECT_EQ(RunRanks(n, Base(n, FreePort()), fn), std::vector<int>(n, 0));
}

// All-reduces up to 16 KiB take shared memory's one-barrier path, larger
// ones the chunked path: both reduce in rank order, so a sum whose rounding
// depends on the order has the same bits either way, on every rank; a rank
// that arrives late (asleep on the barrier's futex) changes nothing.
TEST(CommunicatorTest, SmallAndChunkedPathsGiveTheSameBitsOnEveryRank) {
  const int n = 3;
  auto fn = [](const Options& o) {
    std::unique_ptr<Communicator> c;
    Status s = Communicator::Create(o, &c);
    CHILD_CHECK(s.ok(), "%s", s.ToString().c_str());
    const int r = c->rank();
    // (big + -big) + small == small, but (small + -big) + big == 0.
    auto value = [](int rank, size_t i) {
      float big = 1e8f * static_cast<float>(1 + i % 3);
      return rank == 0   ? big
             : rank == 1 ? -big
                         : 0.5f * static_cast<float>(1 + i % 7);
    };
    for (size_t count : {size_t{4096}, size_t{4097}, size_t{300000}}) {
      if (r == 2) usleep(30 * 1000);  // the others sleep on the futex
      std::vector<float> v(count);
      for (size_t i = 0; i < count; ++i) v[i] = value(r, i);
      CHILD_CHECK(c->AllReduce(v.data(), v.data(), count, DataType::kFloat32,
                               ReduceOp::kSum)
                      .ok(),
                  "allreduce %zu", count);
      for (size_t i = 0; i < count; ++i) {
        float want = value(0, i);  // rank order: ((0 + 1) + 2)
        want += value(1, i);
        want += value(2, i);
        CHILD_CHECK(std::memcmp(&v[i], &want, sizeof(float)) == 0,
                    "count %zu [%zu]: %.9g != %.9g", count, i, v[i], want);
      }
    }
    return 0;
  };
  EXPECT_EQ(RunRanks(n, Base(n, FreePort()), fn), std::vector<int>(n, 0));
}

// Vectors of up to 56 bytes travel in the ranks' tagged barrier line,
// two sets alternating by epoch: back to back, with every call's values new
// and one rank now and then late, no rank may read a contribution the next
// call already overwrote.
TEST(CommunicatorTest, BackToBackSmallAllReducesNeverMixCalls) {
  const int n = 3;
  auto fn = [](const Options& o) {
    std::unique_ptr<Communicator> c;
    Status s = Communicator::Create(o, &c);
    CHILD_CHECK(s.ok(), "%s", s.ToString().c_str());
    const int r = c->rank();
    for (int call = 0; call < 3000; ++call) {
      const size_t count = 1 + call % 75;  // 4-300 B: the line or a slot
      if (call % 500 == 0 && r == call / 500 % n) usleep(2000);
      std::vector<int32_t> v(count);
      for (size_t i = 0; i < count; ++i)
        v[i] = call * 1000 + r * 10 + static_cast<int32_t>(i);
      CHILD_CHECK(c->AllReduce(v.data(), v.data(), count, DataType::kInt32,
                               ReduceOp::kSum)
                      .ok(),
                  "call %d", call);
      for (size_t i = 0; i < count; ++i) {
        int32_t want = 3 * (call * 1000 + static_cast<int32_t>(i)) + 30;
        CHILD_CHECK(v[i] == want, "call %d [%zu]: %d != %d", call, i, v[i],
                    want);
      }
    }
    return 0;
  };
  EXPECT_EQ(RunRanks(n, Base(n, FreePort()), fn), std::vector<int>(n, 0));
}

// With more ranks than CPUs a barrier completes by a count of arrivals and
// only the last rank to arrive wakes the sleepers. Back to back, every
// size class (in the lines, in the slots, chunked), one rank now and then
// late so the others sleep: every call's values arrive, none from the call
// before or after, and nobody waits for a wake-up that never comes (that
// would end in the communicator's timeout).
TEST(CommunicatorTest, MoreRanksThanCpusBarriersCountArrivals) {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  const int n = static_cast<int>(std::min<long>(2 * cpus + 1, 97));
  auto fn = [n](const Options& o) {
    std::unique_ptr<Communicator> c;
    Status s = Communicator::Create(o, &c);
    CHILD_CHECK(s.ok(), "%s", s.ToString().c_str());
    const int r = c->rank();
    const size_t counts[] = {1, 14, 70, 71, 5000, 300000};
    for (int call = 0; call < 120; ++call) {
      const size_t count = counts[call % 6];
      if (call % 20 == 7 && r == call % n) usleep(20 * 1000);
      std::vector<int32_t> v(count);
      for (size_t i = 0; i < count; ++i)
        v[i] = call * 7 + r + static_cast<int32_t>(i % 5);
      CHILD_CHECK(c->AllReduce(v.data(), v.data(), count, DataType::kInt32,
                               ReduceOp::kSum)
                      .ok(),
                  "call %d", call);
      for (size_t i = 0; i < count; ++i) {
        int32_t want =
            n * (call * 7 + static_cast<int32_t>(i % 5)) + n * (n - 1) / 2;
        CHILD_CHECK(v[i] == want, "call %d [%zu]: %d != %d", call, i, v[i],
                    want);
      }
    }
    return 0;
  };
  Options base = Base(n, FreePort());
  base.timeout_seconds = 60;
  EXPECT_EQ(RunRanks(n, base, fn), std::vector<int>(n, 0));
}

}  // namespace
}  // namespace dist_train
