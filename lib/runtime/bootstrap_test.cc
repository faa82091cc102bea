// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Bootstrap without forking: the address helpers and the grouping by host
// as pure functions, and whole communicators made in threads of one
// process (rendezvous, rings, shared memory, the host transport chosen).

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dist_train/runtime.h"
#include "runtime/communicator_impl.h"
#include "testing/testing_ranks.h"

namespace dist_train {
namespace {

using testing_ranks::Base;
using testing_ranks::FreePort;

TEST(BootstrapTest, HostOfADataAddress) {
  EXPECT_EQ(HostOf("10.0.0.3:41234"), "10.0.0.3");
  EXPECT_EQ(HostOf("127.0.0.1:1"), "127.0.0.1");
}

TEST(BootstrapTest, ALoopbackMasterKeepsEveryRankOnLoopback) {
  Options o = Base(2, 29500);
  for (int rank : {0, 1}) {
    std::string addr;
    ASSERT_TRUE(JobAddress(o, rank, &addr).ok());
    EXPECT_EQ(addr, "127.0.0.1") << "rank " << rank;
  }
}

// DT_SOCKET_ADDR is taken as given (Listen refuses one not ours).
TEST(BootstrapTest, AGivenLocalAddressIsTheJobAddress) {
  Options o = Base(2, 29500);
  o.local_addr = "192.0.2.7";
  for (int rank : {0, 1}) {
    std::string addr;
    ASSERT_TRUE(JobAddress(o, rank, &addr).ok());
    EXPECT_EQ(addr, "192.0.2.7") << "rank " << rank;
  }
}

// Ranks 0, 2, 3 on host a, 1 and 4 on host b: a's leader is 0, b's is 1.
TEST(BootstrapTest, RanksAreGroupedByHostAndEachHostsLowestLeads) {
  const std::vector<std::string> table = {"a:1", "b:1", "a:2", "a:3", "b:2"};
  for (int rank : {3, 4}) {
    CommunicatorImpl comm;
    comm.rank = rank, comm.size = 5, comm.addr = table;
    GroupByHost(&comm);
    EXPECT_EQ(comm.leaders, (std::vector<int>{0, 1}));
    if (rank == 3) {
      EXPECT_EQ(comm.local_ranks, (std::vector<int>{0, 2, 3}));
      EXPECT_EQ(comm.local_rank, 2);
      EXPECT_EQ(comm.LeaderIndex(), -1);
    } else {
      EXPECT_EQ(comm.local_ranks, (std::vector<int>{1, 4}));
      EXPECT_EQ(comm.local_rank, 1);
    }
  }
}

// Three communicators in three threads: they meet at rank 0, take shared
// memory (one machine), and agree on an all-reduce and a broadcast.
TEST(BootstrapTest, ThreeRanksInThreadsOfOneProcessMeetAndReduce) {
  const int n = 3;
  const Options base = Base(n, FreePort());
  std::vector<Status> result(n);
  std::vector<std::string> described(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      Options o = base;
      o.rank = r;
      std::unique_ptr<Communicator> comm;
      result[r] = Communicator::Create(o, &comm);
      if (!result[r].ok()) return;
      described[r] = comm->Describe();
      int64_t v[2] = {r + 1, 10 * (r + 1)};
      result[r] = comm->AllReduce(v, v, 2, DataType::kInt64, ReduceOp::kSum);
      if (result[r].ok() && (v[0] != 6 || v[1] != 60))
        result[r] = Status::Internal("sum " + std::to_string(v[0]));
      int32_t b = r == 2 ? 42 : 0;
      if (result[r].ok())
        result[r] = comm->Broadcast(&b, 1, DataType::kInt32, 2);
      if (result[r].ok() && b != 42) result[r] = Status::Internal("broadcast");
    });
  }
  for (std::thread& t : threads) t.join();
  for (int r = 0; r < n; ++r) {
    EXPECT_TRUE(result[r].ok()) << "rank " << r << ": " << result[r].ToString();
    EXPECT_EQ(described[r], "shared memory (3 ranks)");
  }
}

TEST(BootstrapTest, OneRankNeedsNoPeersAndSaysSo) {
  Options o = Base(1, FreePort());
  o.rank = 0;
  std::unique_ptr<Communicator> comm;
  ASSERT_TRUE(Communicator::Create(o, &comm).ok());
  EXPECT_EQ(comm->Describe(), "single rank");
  float x[2] = {1.5f, 2.5f};
  ASSERT_TRUE(
      comm->AllReduce(x, x, 2, DataType::kFloat32, ReduceOp::kAvg).ok());
  EXPECT_EQ(x[1], 2.5f);
}

}  // namespace
}  // namespace dist_train
