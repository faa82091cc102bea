// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Multi-process tests of the runtime on one machine: every rank is a forked
// process; a child reports failure through its exit code and stderr.

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
#include "testing/testing_ranks.h"

namespace dist_train {
namespace {

using namespace testing_ranks;  // NOLINT: test helpers

double Value(int rank, size_t i) {
  return static_cast<double>((rank + 1) * static_cast<int>(i % 7 + 1));
}

void Store(DataType t, void* buf, size_t i, double v) {
  switch (t) {
    case DataType::kFloat32:
      static_cast<float*>(buf)[i] = static_cast<float>(v);
      break;
    case DataType::kFloat64:
      static_cast<double*>(buf)[i] = v;
      break;
    case DataType::kInt32:
      static_cast<int32_t*>(buf)[i] = static_cast<int32_t>(v);
      break;
    case DataType::kInt64:
      static_cast<int64_t*>(buf)[i] = static_cast<int64_t>(v);
      break;
    case DataType::kBFloat16:
      static_cast<uint16_t*>(buf)[i] = FloatToBf16(static_cast<float>(v));
      break;
    case DataType::kFloat16:
      static_cast<uint16_t*>(buf)[i] = FloatToHalf(static_cast<float>(v));
      break;
  }
}

double Load(DataType t, const void* buf, size_t i) {
  switch (t) {
    case DataType::kFloat32:
      return static_cast<const float*>(buf)[i];
    case DataType::kFloat64:
      return static_cast<const double*>(buf)[i];
    case DataType::kInt32:
      return static_cast<const int32_t*>(buf)[i];
    case DataType::kInt64:
      return static_cast<const int64_t*>(buf)[i];
    case DataType::kBFloat16:
      return Bf16ToFloat(static_cast<const uint16_t*>(buf)[i]);
    case DataType::kFloat16:
      return HalfToFloat(static_cast<const uint16_t*>(buf)[i]);
  }
  return 0;
}

double Expected(int n, size_t i, ReduceOp op, DataType t) {
  double sum = 0, mn = 1e300, mx = -1e300;
  for (int r = 0; r < n; ++r)
    sum += Value(r, i), mn = std::min(mn, Value(r, i)),
                        mx = std::max(mx, Value(r, i));
  bool integer = t == DataType::kInt32 || t == DataType::kInt64;
  switch (op) {
    case ReduceOp::kSum:
      return sum;
    case ReduceOp::kMin:
      return mn;
    case ReduceOp::kMax:
      return mx;
    case ReduceOp::kAvg:
      return integer ? std::floor(sum / n) : sum / n;
  }
  return 0;
}

const DataType kTypes[] = {DataType::kFloat32,  DataType::kFloat64,
                           DataType::kInt32,    DataType::kInt64,
                           DataType::kBFloat16, DataType::kFloat16};
const ReduceOp kOps[] = {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax,
                         ReduceOp::kAvg};

// All-reduce (in place) of `count` elements and reduce-scatter of
// n * `piece`, checked element by element: 0, or 1 after naming the first
// wrong element.
int CheckReductions(Communicator* c, size_t count, size_t piece, DataType t,
                    ReduceOp op) {
  const int n = c->size(), r = c->rank();
  const size_t es = DataTypeSize(t);
  std::vector<char> buf(count * es + 1);
  for (size_t i = 0; i < count; ++i) Store(t, buf.data(), i, Value(r, i));
  Status s = c->AllReduce(buf.data(), buf.data(), count, t, op);
  CHILD_CHECK(s.ok(), "%s", s.ToString().c_str());
  for (size_t i = 0; i < count; ++i) {
    double want = Expected(n, i, op, t), got = Load(t, buf.data(), i);
    CHILD_CHECK(std::fabs(got - want) <= std::fabs(want) / 64,
                "allreduce count %zu type %d op %d [%zu]: %g != %g", count,
                static_cast<int>(t), static_cast<int>(op), i, got, want);
  }
  // ReduceScatter: every rank's slice of n * piece inputs.
  std::vector<char> in(n * piece * es + 1), out(piece * es + 1);
  for (size_t i = 0; i < n * piece; ++i) Store(t, in.data(), i, Value(r, i));
  s = c->ReduceScatter(in.data(), out.data(), piece, t, op);
  CHILD_CHECK(s.ok(), "%s", s.ToString().c_str());
  for (size_t i = 0; i < piece; ++i) {
    double want = Expected(n, r * piece + i, op, t),
           got = Load(t, out.data(), i);
    CHILD_CHECK(std::fabs(got - want) <= std::fabs(want) / 64,
                "reducescatter count %zu type %d op %d [%zu]: %g != %g", piece,
                static_cast<int>(t), static_cast<int>(op), i, got, want);
  }
  return 0;
}

int AllCollectives(const Options& o) {
  std::unique_ptr<Communicator> c;
  Status s = Communicator::Create(o, &c);
  CHILD_CHECK(s.ok(), "%s", s.ToString().c_str());
  const int n = c->size(), r = c->rank();
  // 33: 2-5 tagged lines (reduce-scatter slices end inside a line).
  for (size_t count :
       {size_t{0}, size_t{1}, size_t{7}, size_t{33}, size_t{1000}}) {
    for (DataType t : kTypes) {
      size_t es = DataTypeSize(t);
      for (ReduceOp op : kOps) {
        if (int e = CheckReductions(c.get(), count, count, t, op)) return e;
      }
      std::vector<char> mine(count * es + 1), all(n * count * es + 1);
      for (size_t i = 0; i < count; ++i) Store(t, mine.data(), i, Value(r, i));
      CHILD_CHECK(c->AllGather(mine.data(), all.data(), count, t).ok(),
                  "allgather");
      for (int q = 0; q < n; ++q) {
        for (size_t i = 0; i < count; ++i)
          CHILD_CHECK(Load(t, all.data(), q * count + i) ==
                          Load(t, mine.data(), i) / (r + 1) * (q + 1),
                      "allgather %d %zu", q, i);
      }
      std::vector<char> b(count * es + 1);
      int root = n - 1;
      for (size_t i = 0; i < count; ++i)
        Store(t, b.data(), i, r == root ? Value(r, i) : -1);
      CHILD_CHECK(c->Broadcast(b.data(), count, t, root).ok(), "broadcast");
      for (size_t i = 0; i < count; ++i)
        CHILD_CHECK(Load(t, b.data(), i) == Value(root, i), "broadcast [%zu]",
                    i);
    }
  }
  CHILD_CHECK(c->Barrier().ok(), "barrier");
  return 0;
}

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

// Vectors of up to 280 bytes travel in the ranks' tagged barrier lines,
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
      const size_t count = 1 + call % 75;  // 4-300 B: 1-5 lines, a slot
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

// Waits (up to 10 s) until something accepts connections on port: rank 0's
// server, started by a forked job (a fixed sleep flakes on a loaded machine).
void WaitUntilListening(int port) {
  for (auto d = DeadlineIn(10); Clock::now() < d;) {
    Conn c;
    if (ConnectOnce("127.0.0.1", port, 1, &c).ok()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// Sends `bytes` raw to host:port and returns what the server answered.
std::string Poke(int port, const std::string& bytes) {
  Conn c;
  if (!ConnectOnce("127.0.0.1", port, 1, &c).ok()) return "no connection";
  c.SendAll(bytes.data(), bytes.size(), DeadlineIn(1)).IgnoreError();
  std::string reply;
  char buf[256];
  for (auto d = DeadlineIn(1); Clock::now() < d;) {
    ssize_t k = recv(c.fd(), buf, sizeof(buf), 0);
    if (k > 0) reply.append(buf, k);
    if (k == 0) break;
    if (k < 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return reply;
}

Status Intrude(int port, const Credentials& cred, uint32_t rank) {
  Conn c;
  DT_RETURN_IF_ERROR(ConnectOnce("127.0.0.1", port, 1, &c));
  ClientSide cs;
  JoinInfo me{rank, 2, 1};
  DT_RETURN_IF_ERROR(SendJoin(&c, cred, me, DeadlineIn(2), &cs));
  return ReadAccept(&c, cred, me, &cs, DeadlineIn(2));
}

TEST(CommunicatorTest, StrangersAreRefusedAndTheServerSurvives) {
  int port = FreePort();
  Options base = Base(2, port);
  pid_t job = fork();
  if (job == 0)
    _exit(RunRanks(2, base, AllCollectives, {}, {0, 1500}) ==
                  std::vector<int>{0, 0}
              ? 0
              : 1);
  WaitUntilListening(port);
  EXPECT_EQ(Intrude(port, {"test-job", ""}, 1).message(),
            "127.0.0.1:" + std::to_string(port) +
                " requires the job's secret (DT_JOB_TOKEN) and we have none");
  EXPECT_EQ(
      Intrude(port, {"test-job", std::string(64, 'f')}, 1).message(),
      "127.0.0.1:" + std::to_string(port) + " refused us: wrong job secret");
  EXPECT_EQ(
      Intrude(port, {"other-job", kToken}, 1).message(),
      "127.0.0.1:" + std::to_string(port) +
          " refused us: it belongs to job 'other-job', this is 'test-job'");
  std::string garbage = Poke(port, "GET / HTTP/1.0\r\n\r\n");
  EXPECT_EQ(garbage.find("test-job"), std::string::npos)
      << "a stranger learns nothing";
  Poke(port, std::string("\xff\xff\xff\xff", 4) +
                 std::string(100, 'x'));  // oversized frame
  int status = 0;
  waitpid(job, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the real job still completes";
}

// A token holder's corner cases: rank 0 cannot be claimed, a rank that
// joined and is alive cannot be claimed twice (both refused before ACCEPT),
// and a rank whose connection is gone may join again (a reconnect).
TEST(CommunicatorTest, RankZeroAndLiveDuplicatesAreRefusedAReconnectIsNot) {
  int port = FreePort();
  Options base = Base(3, port);
  pid_t job = fork();
  if (job == 0)  // rank 1 joins at once, rank 2 after 1.5 s
    _exit(RunRanks(3, base, AllCollectives, {}, {0, 0, 1500}) ==
                  std::vector<int>{0, 0, 0}
              ? 0
              : 1);
  WaitUntilListening(port);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // rank 1 joins
  const std::string server = "127.0.0.1:" + std::to_string(port);
  const Credentials cred{"test-job", kToken};
  auto intrude = [&](uint32_t rank) {
    Conn c;
    Status s = ConnectOnce("127.0.0.1", port, 1, &c);
    ClientSide cs;
    JoinInfo me{rank, 3, 1};
    if (s.ok()) s = SendJoin(&c, cred, me, DeadlineIn(2), &cs);
    if (s.ok()) s = ReadAccept(&c, cred, me, &cs, DeadlineIn(2));
    return s.message();
  };
  EXPECT_EQ(intrude(0),
            server + " refused us: it claims rank 0, which is this rank");
  EXPECT_EQ(intrude(1), server + " refused us: rank 1 already joined");
  int status = 0;
  waitpid(job, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the real job still completes";
}

TEST(CommunicatorTest, ARankThatJoinsAgainAfterItsConnectionDiedIsAReconnect) {
  int port = FreePort();
  Options base = Base(3, port);
  pid_t job = fork();
  if (job == 0)  // rank 1 arrives after its first try died; rank 2 last
    _exit(RunRanks(3, base, AllCollectives, {}, {0, 1000, 1500}) ==
                  std::vector<int>{0, 0, 0}
              ? 0
              : 1);
  WaitUntilListening(port);
  {  // rank 1's first try: rank 0 counts it, then it is gone
    Conn c;
    ASSERT_TRUE(ConnectOnce("127.0.0.1", port, 1, &c).ok());
    ClientSide cs;
    JoinInfo me{1, 3, 1};
    const Credentials cred{"test-job", kToken};
    ASSERT_TRUE(SendJoin(&c, cred, me, DeadlineIn(2), &cs).ok());
    ASSERT_TRUE(ReadAccept(&c, cred, me, &cs, DeadlineIn(2)).ok());
  }
  int status = 0;
  waitpid(job, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the rank's second join is taken";
}

TEST(CommunicatorTest, ListeningSocketsAreBoundToTheAddressTheJobUses) {
  const struct {
    const char* master;
    const char* local;
    int rank;
    const char* want;
  } cases[] = {
      {"127.0.0.1", "", 0, "127.0.0.1"},
      {"127.0.0.1", "", 1, "127.0.0.1"},
      {"localhost", "", 3, "127.0.0.1"},
      {"localhost", "", 0, "127.0.0.1"},
      {"127.0.0.1", "127.0.0.2", 1, "127.0.0.2"},
      {"127.0.0.1", "127.0.0.2", 0, "127.0.0.2"},
      {"192.0.2.1", "", 0, ""},  // not ours (a NAT address): every address
  };
  for (const auto& c : cases) {
    Options o;
    o.master_addr = c.master;
    o.master_port = 29500;
    o.local_addr = c.local;
    std::string addr = "unset";
    EXPECT_TRUE(JobAddress(o, c.rank, &addr).ok()) << c.master;
    EXPECT_EQ(addr, c.want) << c.master << " " << c.local << " " << c.rank;
  }
  Options bad;
  bad.master_addr = "no-such-host.invalid";
  std::string addr;
  EXPECT_EQ(JobAddress(bad, 0, &addr).code(), Status::Code::kInvalidArgument);
}

// Without Slurm both jobs' identity is "master:<addr>:<port>": job B's
// rank 1 meets job A's rank 0 first, is refused (wrong secret) and must
// move on to B's rank 0 on the next port, not give up.
TEST(CommunicatorTest, TwoJobsOnOnePortWithOneIdentityBothComplete) {
  int port = FreePort();
  Options a = Base(2, port), b = Base(2, port);
  b.job_token = std::string(64, 'd');
  pid_t job_a = fork();
  if (job_a == 0)  // A's rank 1 comes late: A's rank 0 keeps listening
    _exit(RunRanks(2, a, AllCollectives, {}, {0, 1500}) ==
                  std::vector<int>{0, 0}
              ? 0
              : 1);
  // B's rank 0 finds the port taken and moves on.
  EXPECT_EQ(RunRanks(2, b, AllCollectives, {}, {300, 300}),
            (std::vector<int>{0, 0}));
  int status = 0;
  waitpid(job_a, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int ShmSegments() {
  int n = 0;
  DIR* d = opendir("/dev/shm");
  while (dirent* e = d ? readdir(d) : nullptr)
    n += std::strncmp(e->d_name, "dt-", 3) == 0;
  if (d) closedir(d);
  return n;
}

TEST(CommunicatorTest, KilledRankIsNamedByEveryOtherRankQuickly) {
  const int n = 4;
  auto fn = [](const Options& o) {
    std::unique_ptr<Communicator> c;
    CHILD_CHECK(Communicator::Create(o, &c).ok(), "create");
    std::vector<float> v(1 << 16, 1.0f);
    auto start = std::chrono::steady_clock::now();
    for (int it = 0; it < 1000000; ++it) {
      if (c->rank() == 2 && it == 20) raise(SIGKILL);
      if (it == 20) start = std::chrono::steady_clock::now();
      Status s = c->AllReduce(v.data(), v.data(), v.size(), DataType::kFloat32,
                              ReduceOp::kAvg);
      if (!s.ok()) {
        double secs = std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count();
        CHILD_CHECK(s.message().find("rank 2") != std::string::npos,
                    "error does not name rank 2: %s", s.message().c_str());
        CHILD_CHECK(secs < 5, "took %.1f s to notice", secs);
        CHILD_CHECK(!c->Barrier().ok(), "a failed communicator keeps failing");
        return 0;
      }
    }
    return 1;
  };
  Options base = Base(n, FreePort());
  base.timeout_seconds = 60;  // detection must not rely on the timeout
  int shm_before = ShmSegments();
  std::vector<int> codes = RunRanks(n, base, fn);
  EXPECT_EQ(codes, (std::vector<int>{0, 0, 128 + SIGKILL, 0}));
  EXPECT_EQ(ShmSegments(), shm_before)
      << "no shared-memory segment is left behind";
}

// The same with two "machines" (shared memory inside, a ring between the
// leaders): a dead leader (2) or a dead non-leader (3) is named by all.
TEST(CommunicatorTest, KilledRankIsNamedInHierarchicalModeToo) {
  for (int victim : {2, 3}) {
    auto fn = [victim](const Options& base) {
      Options o = base;
      o.local_addr = o.rank < 2 ? "127.0.0.1" : "127.0.0.2";
      std::unique_ptr<Communicator> c;
      CHILD_CHECK(Communicator::Create(o, &c).ok(), "create");
      CHILD_CHECK(c->Describe().find("within 2 machines") != std::string::npos,
                  "%s", c->Describe().c_str());
      std::vector<float> v(1 << 16, 1.0f);
      auto start = std::chrono::steady_clock::now();
      for (int it = 0; it < 1000000; ++it) {
        if (c->rank() == victim && it == 20) raise(SIGKILL);
        if (it == 20) start = std::chrono::steady_clock::now();
        Status s = c->AllReduce(v.data(), v.data(), v.size(),
                                DataType::kFloat32, ReduceOp::kAvg);
        if (s.ok()) continue;
        double secs = std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count();
        std::string name = "rank " + std::to_string(victim);
        CHILD_CHECK(s.message().find(name) != std::string::npos,
                    "error does not name %s: %s", name.c_str(),
                    s.message().c_str());
        CHILD_CHECK(secs < 5, "took %.1f s to notice", secs);
        return 0;
      }
      return 1;
    };
    Options base = Base(4, FreePort());
    base.timeout_seconds = 60;
    int shm_before = ShmSegments();
    std::vector<int> want(4, 0);
    want[victim] = 128 + SIGKILL;
    EXPECT_EQ(RunRanks(4, base, fn), want) << "victim " << victim;
    EXPECT_EQ(ShmSegments(), shm_before);
  }
}

TEST(CommunicatorTest, ALocalAddressThatIsNotOursFailsAtOnce) {
  Options o = Base(2, FreePort());
  o.rank = 1;
  o.local_addr = "192.0.2.7";  // TEST-NET-1: not on this machine
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<Communicator> c;
  Status s = Communicator::Create(o, &c);
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("cannot use local address '192.0.2.7'"),
            std::string::npos)
      << s.message();
  EXPECT_LT(secs, 2.0);
}

TEST(CommunicatorTest, ARankThatNeverArrivesIsNamedAfterTheTimeout) {
  Options base = Base(3, FreePort());
  base.timeout_seconds = 1;
  auto fn = [](const Options& o) {
    std::unique_ptr<Communicator> c;
    Status s = Communicator::Create(o, &c);
    if (o.rank == 0) {
      CHILD_CHECK(s.message() == "rendezvous on port " +
                                     std::to_string(o.master_port) +
                                     ": ranks 2 did not arrive within 1 s",
                  "%s", s.message().c_str());
    } else {
      CHILD_CHECK(!s.ok(), "rank 1 must fail too");
    }
    return 0;
  };
  EXPECT_EQ(RunRanks(3, base, fn, {2}), (std::vector<int>{0, 0, -1}));
}

TEST(CommunicatorTest, APortAlreadyInUseMovesEveryoneToTheNextCandidate) {
  int port = FreePort();
  int busy = -1, bound = 0;
  ASSERT_TRUE(
      Listen(port, &busy, &bound).ok());  // a foreign server on MASTER_PORT
  EXPECT_EQ(RunRanks(3, Base(3, port), AllCollectives), std::vector<int>(3, 0));
  close(busy);
}

int OpenFds() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  while (readdir(d) != nullptr) ++n;
  closedir(d);
  return n;
}

TEST(CommunicatorTest, NoFdLeaksAfterShutdown) {
  auto fn = [](const Options& o) {
    int before = OpenFds();
    {
      std::unique_ptr<Communicator> c;
      CHILD_CHECK(Communicator::Create(o, &c).ok(), "create");
      CHILD_CHECK(c->Barrier().ok(), "barrier");
    }
    CHILD_CHECK(OpenFds() == before, "%d fds before, %d after", before,
                OpenFds());
    return 0;
  };
  EXPECT_EQ(RunRanks(3, Base(3, FreePort()), fn), std::vector<int>(3, 0));
}

// The CPUs this thread may run on, ascending.
std::vector<int> AllowedCpus() {
  cpu_set_t all;
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(all), &all) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &all)) cpus.push_back(c);
  }
  return cpus;
}

// Binds the calling thread to `cpu` alone.
bool PinTo(int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return sched_setaffinity(0, sizeof(one), &one) == 0;
}

// A spinning rank that shares its only CPU with the rank it waits for keeps
// that rank off it (measured 4-5x slower), and one on a machine with no CPU
// beyond its ranks' slows the others: spinning pays only with a CPU to
// spare. In a thread of its own: the affinity set here is the thread's.
TEST(CommunicatorTest, SocketsSpinOnlyWithACpuToSpare) {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  std::thread([cpus] {
    std::vector<int> usable = AllowedCpus();
    ASSERT_FALSE(usable.empty());
    if (usable.size() > 1) {
      EXPECT_TRUE(SocketSpinPays(1));
      EXPECT_FALSE(SocketSpinPays(static_cast<int>(cpus)))
          << "no CPU beyond the machine's ranks'";
    }
    ASSERT_TRUE(PinTo(usable[0]));
    EXPECT_FALSE(SocketSpinPays(1)) << "bound to one CPU";
  }).join();
}

// More ranks than CPUs take larger slots (4 MiB here): with a busy process
// on rank 0's CPU and the other ranks sharing another, large all-reduces
// across several slots still give every rank the right result, call after
// call.
TEST(CommunicatorTest, MoreRanksThanCpusBesideABusyProcessStayRight) {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus > 7) GTEST_SKIP() << "needs more ranks than CPUs (" << cpus << ")";
  const int n = static_cast<int>(cpus) + 1;
  const std::vector<int> usable = AllowedCpus();
  if (usable.size() < 2) GTEST_SKIP() << "needs two CPUs";
  pid_t hog = fork();
  if (hog == 0) {
    PinTo(usable[0]);
    for (;;) {
    }
  }
  auto fn = [&](const Options& o) {
    CHILD_CHECK(PinTo(usable[o.rank == 0 ? 0 : 1]), "pinning rank %d", o.rank);
    std::unique_ptr<Communicator> c;
    Status s = Communicator::Create(o, &c);
    CHILD_CHECK(s.ok(), "%s", s.ToString().c_str());
    const size_t count = (3 << 20) + 5;  // 12 MiB and a bit: 4 slots
    std::vector<int32_t> v(count);
    for (int call = 0; call < 4; ++call) {
      for (size_t i = 0; i < count; ++i)
        v[i] = static_cast<int32_t>(i % 1000) + c->rank() + call;
      s = c->AllReduce(v.data(), v.data(), count, DataType::kInt32,
                       ReduceOp::kSum);
      CHILD_CHECK(s.ok(), "call %d: %s", call, s.ToString().c_str());
      for (size_t i = 0; i < count; ++i) {
        int32_t want =
            n * (static_cast<int32_t>(i % 1000) + call) + n * (n - 1) / 2;
        CHILD_CHECK(v[i] == want, "call %d [%zu]: %d != %d", call, i, v[i],
                    want);
      }
    }
    return 0;
  };
  std::vector<int> codes = RunRanks(n, Base(n, FreePort()), fn);
  kill(hog, SIGKILL);
  waitpid(hog, nullptr, 0);
  EXPECT_EQ(codes, std::vector<int>(n, 0));
}

}  // namespace
}  // namespace dist_train
