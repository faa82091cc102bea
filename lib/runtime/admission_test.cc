// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Admission against strangers on real loopback sockets: the server runs in
// the test's thread, the real peer in another.

#include "runtime/admission.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>
#include <vector>

namespace dist_train {
namespace {

const Credentials kJob{"job-7.0", std::string(64, 'e')};

struct Server {
  int fd = -1, port = 0;
  Server() { EXPECT_TRUE(Listen(0, &fd, &port, "127.0.0.1").ok()); }
  ~Server() { close(fd); }
};

Conn Stranger(int port) {
  Conn c;
  EXPECT_TRUE(ConnectOnce("127.0.0.1", port, 1, &c).ok());
  return c;
}

// A peer that joins as `me` with `cred`, in its own thread.
std::future<Status> JoinAs(int port, const Credentials& cred, JoinInfo me) {
  return std::async(std::launch::async, [=] {
    Conn c;
    DT_RETURN_IF_ERROR(ConnectOnce("127.0.0.1", port, 1, &c));
    ClientSide cs;
    DT_RETURN_IF_ERROR(SendJoin(&c, cred, me, DeadlineIn(5), &cs));
    return ReadAccept(&c, cred, me, &cs, DeadlineIn(5));
  });
}

std::string NoVeto(const JoinInfo&) { return ""; }

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// What the server sent a stranger before it hung up ("" = nothing more).
std::string ReadToEnd(Conn* c) {
  std::string all;
  char buf[512];
  Deadline end = DeadlineIn(3);
  while (Clock::now() < end) {
    ssize_t n = recv(c->fd(), buf, sizeof(buf), MSG_DONTWAIT);
    if (n == 0) return all;
    if (n > 0) all.append(buf, static_cast<size_t>(n));
    if (n < 0 && errno != EAGAIN) return all + "<reset>";
    usleep(1000);
  }
  return all + "<still open>";
}

TEST(AdmissionTest, AWorldOfRanksFromOneAddressAlwaysFits) {
  AdmissionLimits small = AdmissionLimits::ForWorld(8);
  EXPECT_EQ(small.per_source, 64u);
  EXPECT_EQ(small.total, 512u);
  AdmissionLimits big = AdmissionLimits::ForWorld(1024);
  EXPECT_EQ(big.per_source, 1024u);
  EXPECT_EQ(big.total, 1088u);
}

TEST(AdmissionTest, IdleAndGarbageConnectionsDoNotDelayARealPeer) {
  Server s;
  std::vector<Conn> strangers;
  for (int i = 0; i < 64; ++i) strangers.push_back(Stranger(s.port));
  for (int i = 0; i < 64; ++i) {
    strangers.push_back(Stranger(s.port));
    strangers.back()
        .SendAll("\0\0\0\x05\x02gar", 8, DeadlineIn(1))
        .IgnoreError();
  }
  std::vector<std::string> log;
  Admission admission(s.fd, kJob, 4,
                      [&](const std::string& m) { log.push_back(m); });
  auto start = Clock::now();
  auto peer = JoinAs(s.port, kJob, {2, 4, 1000});
  Conn conn;
  JoinInfo info;
  ASSERT_TRUE(admission.Next(DeadlineIn(10), -1, NoVeto, &conn, &info).ok());
  EXPECT_LT(SecondsSince(start), 0.4) << "the real peer waited";
  EXPECT_EQ(info.rank, 2u);
  EXPECT_EQ(info.data_port, 1000u);
  EXPECT_TRUE(peer.get().ok());
}

TEST(AdmissionTest, AResetOrGarbageIsDroppedAndTheWaitGoesOn) {
  Server s;
  Conn reset = Stranger(s.port);
  linger hard{1, 0};
  setsockopt(reset.fd(), SOL_SOCKET, SO_LINGER, &hard, sizeof(hard));
  reset.Close();
  Conn garbage = Stranger(s.port);
  ASSERT_TRUE(garbage.SendAll("\xff\xff\xff\xff junk", 9, DeadlineIn(1)).ok());
  std::vector<std::string> log;
  Admission admission(s.fd, kJob, 4,
                      [&](const std::string& m) { log.push_back(m); });
  auto peer = JoinAs(s.port, kJob, {1, 4, 1000});
  Conn conn;
  JoinInfo info;
  Status st = admission.Next(DeadlineIn(10), 1, NoVeto, &conn, &info);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(peer.get().ok());
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find(": a frame of 4294967295 bytes (limit 4096)"),
            std::string::npos)
      << log[0];
}

TEST(AdmissionTest, TheOldestConnectionFromOneAddressIsDroppedFirst) {
  Server s;
  AdmissionLimits limits;
  limits.per_source = 4;
  limits.handshake_seconds = 30;
  std::vector<std::string> log;
  Admission admission(
      s.fd, kJob, 4, [&](const std::string& m) { log.push_back(m); }, limits);
  std::vector<Conn> strangers;
  for (int i = 0; i < 5; ++i) strangers.push_back(Stranger(s.port));
  Conn conn;
  JoinInfo info;
  EXPECT_EQ(admission.Next(DeadlineIn(0.3), -1, NoVeto, &conn, &info).code(),
            Status::Code::kTimeout);
  EXPECT_EQ(ReadToEnd(&strangers[0]).size(), 5u + 4 + 4 + 32 + 4)
      << "HELLO, then closed";
  EXPECT_EQ(ReadToEnd(&strangers[4]).substr(49), "<still open>");
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find(": too many connections that have not joined"),
            std::string::npos)
      << log[0];
}

TEST(AdmissionTest, AnIdleConnectionIsDroppedAtTheHandshakeDeadline) {
  Server s;
  AdmissionLimits limits;
  limits.handshake_seconds = 0.1;
  std::vector<std::string> log;
  Admission admission(
      s.fd, kJob, 4, [&](const std::string& m) { log.push_back(m); }, limits);
  Conn idle = Stranger(s.port);
  Conn conn;
  JoinInfo info;
  EXPECT_EQ(admission.Next(DeadlineIn(0.5), -1, NoVeto, &conn, &info).code(),
            Status::Code::kTimeout);
  EXPECT_EQ(ReadToEnd(&idle).size(), 49u) << "HELLO, then closed";
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find(": no JOIN within 100 ms"), std::string::npos)
      << log[0];
}

TEST(AdmissionTest, RefusalsAreLoggedEscapedAndOnlyTheFirstFew) {
  Server s;
  AdmissionLimits limits;
  limits.logged_refusals = 3;
  std::vector<std::string> log;
  {
    Admission admission(
        s.fd, kJob, 4, [&](const std::string& m) { log.push_back(m); }, limits);
    for (int i = 0; i < 10; ++i) {
      auto forger = JoinAs(s.port, {"a\n\x1b[0mb", kJob.token}, {1, 4, 9});
      Conn conn;
      JoinInfo info;
      admission.Next(DeadlineIn(0.2), -1, NoVeto, &conn, &info).IgnoreError();
      EXPECT_EQ(forger.get().message(),
                "127.0.0.1:" + std::to_string(s.port) +
                    " refused us: it belongs to job 'a\\x0a\\x1b[0mb', this "
                    "is 'job-7.0'");
    }
  }
  ASSERT_EQ(log.size(), 4u);
  EXPECT_NE(
      log[0].find(": it belongs to job 'a\\x0a\\x1b[0mb', this is 'job-7.0'"),
      std::string::npos)
      << log[0];
  EXPECT_EQ(log[3], "suppressed 7 more refusals");
}

TEST(AdmissionTest, TheVetRefusesBeforeAccept) {
  Server s;
  Admission admission(s.fd, kJob, 4, [](const std::string&) {});
  auto peer = JoinAs(s.port, kJob, {1, 4, 9});
  Conn conn;
  JoinInfo info;
  auto veto = [](const JoinInfo&) {
    return std::string("rank 1 already joined");
  };
  EXPECT_EQ(admission.Next(DeadlineIn(1), -1, veto, &conn, &info).code(),
            Status::Code::kTimeout);
  EXPECT_EQ(peer.get().message(), "127.0.0.1:" + std::to_string(s.port) +
                                      " refused us: rank 1 already joined");
}

}  // namespace
}  // namespace dist_train
