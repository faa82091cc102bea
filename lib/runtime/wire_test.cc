// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The wire protocol on a socket pair in one process: frames, their limit,
// deadlines, a peer that closes, and the listening and connecting calls
// on loopback.

#include "runtime/wire.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

namespace dist_train {
namespace {

// Two connected ends; each is named after its peer, as the runtime names
// peers in errors.
void Pair(Conn* a, Conn* b) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
  *a = Conn(fds[0], "rank 0 (b)");
  *b = Conn(fds[1], "rank 1 (a)");
}

TEST(WireTest, AFrameArrivesWithItsTypeAndPayload) {
  Conn a, b;
  Pair(&a, &b);
  const std::string payload("\0abc\xff", 5);  // binary-safe
  ASSERT_TRUE(a.SendFrame(FrameType::kTable, payload, DeadlineIn(1)).ok());
  ASSERT_TRUE(a.SendFrame(FrameType::kBye, "", DeadlineIn(1)).ok());
  FrameType type;
  std::string got;
  ASSERT_TRUE(b.RecvFrame(&type, &got, DeadlineIn(1)).ok());
  EXPECT_EQ(type, FrameType::kTable);
  EXPECT_EQ(got, payload);
  ASSERT_TRUE(b.RecvFrame(&type, &got, DeadlineIn(1)).ok());
  EXPECT_EQ(type, FrameType::kBye);
  EXPECT_EQ(got, "");
}

TEST(WireTest, AFrameOverTheLimitIsRefusedNamingThePeerAndItsSize) {
  Conn a, b;
  Pair(&a, &b);
  ASSERT_TRUE(
      a.SendFrame(FrameType::kJoin, std::string(100, 'x'), DeadlineIn(1)).ok());
  FrameType type;
  std::string got;
  Status s = b.RecvFrame(&type, &got, DeadlineIn(1), 99);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "rank 1 (a) sent a frame of 101 bytes (limit 99)");
}

TEST(WireTest, AZeroLengthFrameIsRefused) {
  Conn a, b;
  Pair(&a, &b);
  const char zero[5] = {0, 0, 0, 0, 1};
  ASSERT_TRUE(a.SendAll(zero, sizeof(zero), DeadlineIn(1)).ok());
  FrameType type;
  std::string got;
  EXPECT_EQ(b.RecvFrame(&type, &got, DeadlineIn(1)).code(),
            Status::Code::kInvalidArgument);
}

TEST(WireTest, APeerThatClosesMidFrameIsNamed) {
  Conn a, b;
  Pair(&a, &b);
  const char partial[3] = {0, 0, 0};
  ASSERT_TRUE(a.SendAll(partial, sizeof(partial), DeadlineIn(1)).ok());
  a.Close();
  FrameType type;
  std::string got;
  Status s = b.RecvFrame(&type, &got, DeadlineIn(1));
  EXPECT_EQ(s.code(), Status::Code::kUnavailable);
  EXPECT_EQ(s.message(), "rank 1 (a) closed the connection");
}

TEST(WireTest, ASilentPeerEndsTheWaitAtTheDeadline) {
  Conn a, b;
  Pair(&a, &b);
  char c;
  auto start = Clock::now();
  Status s = b.RecvAll(&c, 1, DeadlineIn(0.05));
  EXPECT_EQ(s.code(), Status::Code::kTimeout) << s.ToString();
  EXPECT_NE(s.message().find("rank 1 (a)"), std::string::npos);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(2));
}

TEST(WireTest, AMovedConnectionOwnsTheSocketOnce) {
  Conn a, b;
  Pair(&a, &b);
  const int fd = a.fd();
  Conn c(std::move(a));
  EXPECT_FALSE(a.valid());  // NOLINT: the moved-from state is the point
  EXPECT_EQ(c.fd(), fd);
  c = Conn();
  EXPECT_EQ(fcntl(fd, F_GETFD), -1);  // closed exactly when c let go
}

TEST(WireTest, DeadlinesBeyondAYearAreCutToAYear) {
  auto far = DeadlineIn(1e300);
  EXPECT_GT(far, Clock::now() + std::chrono::hours(24 * 364));
  EXPECT_LE(far, Clock::now() + std::chrono::hours(24 * 366));
}

TEST(WireTest, ListenAcceptAndConnectOnLoopback) {
  int fd = -1, port = 0;
  ASSERT_TRUE(Listen(0, &fd, &port, "127.0.0.1").ok());
  ASSERT_GT(port, 0);
  Conn client, server;
  std::thread t(
      [&] { ASSERT_TRUE(ConnectOnce("127.0.0.1", port, 1, &client).ok()); });
  ASSERT_TRUE(Accept(fd, DeadlineIn(2), &server).ok());
  t.join();
  EXPECT_EQ(LocalAddress(client.fd()), "127.0.0.1");
  ASSERT_TRUE(client.SendFrame(FrameType::kHello, "hi", DeadlineIn(1)).ok());
  FrameType type;
  std::string got;
  ASSERT_TRUE(server.RecvFrame(&type, &got, DeadlineIn(1)).ok());
  EXPECT_EQ(got, "hi");
  // The port is ours until closed: a second listener is told it is in use.
  int fd2 = -1, port2 = 0;
  Status again = Listen(port, &fd2, &port2, "127.0.0.1");
  EXPECT_EQ(again.message(), "port " + std::to_string(port) + " is in use");
  close(fd);
  if (fd2 >= 0) close(fd2);
}

TEST(WireTest, LoopbackIsLocalATestNetAddressIsNot) {
  EXPECT_TRUE(IsLocalAddress("127.0.0.1"));
  EXPECT_FALSE(IsLocalAddress("192.0.2.7"));
  std::string ip;
  ASSERT_TRUE(Resolve("127.0.0.1", &ip).ok());
  EXPECT_EQ(ip, "127.0.0.1");
}

}  // namespace
}  // namespace dist_train
