// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Multi-process tests of the communicator under failure and attack:
// strangers, duplicates, killed and missing ranks, ports in use, leaks.
// Every rank is a forked process.
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
  EXPECT_EQ(Intrude(port, {base.job_identity, ""}, 1).message(),
            "127.0.0.1:" + std::to_string(port) +
                " requires the job's secret (DT_JOB_TOKEN) and we have none");
  EXPECT_EQ(
      Intrude(port, {base.job_identity, std::string(64, 'f')}, 1).message(),
      "127.0.0.1:" + std::to_string(port) + " refused us: wrong job secret");
  EXPECT_EQ(Intrude(port, {"other-job", kToken}, 1).message(),
            "127.0.0.1:" + std::to_string(port) +
                " refused us: it belongs to job 'other-job', this is '" +
                base.job_identity + "'");
  std::string garbage = Poke(port, "GET / HTTP/1.0\r\n\r\n");
  EXPECT_EQ(garbage.find(base.job_identity), std::string::npos)
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
  const Credentials cred{base.job_identity, kToken};
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
    const Credentials cred{base.job_identity, kToken};
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

// Set-up agreements go over the control star: a rank that refuses its
// DT_SHM must fail every rank with its reason, not leave them waiting.
TEST(CommunicatorTest, ABadDtShmOnOneRankFailsEveryRankNamingIt) {
  auto fn = [](const Options& o) {
    if (o.rank == 2) setenv("DT_SHM", "maybe", 1);
    std::unique_ptr<Communicator> c;
    Status s = Communicator::Create(o, &c);
    CHILD_CHECK(!s.ok(), "rank %d was created", o.rank);
    CHILD_CHECK(s.message().find("DT_SHM") != std::string::npos, "rank %d: %s",
                o.rank, s.message().c_str());
    return 0;
  };
  EXPECT_EQ(RunRanks(3, Base(3, FreePort()), fn), std::vector<int>(3, 0));
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
