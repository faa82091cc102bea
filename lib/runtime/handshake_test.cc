// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/handshake.h"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <string>

#include "base/coding.h"
#include "runtime/crypto.h"

namespace dist_train {
namespace {

const std::string kSecret(64, 'e');
const Credentials kJob{"job-1000.0", kSecret};

// Both ends of one connection, in one thread: every half of the handshake
// only writes or reads one frame, and the socket buffers hold them.
struct Link {
  Conn server, client;  // each is named after its peer in errors
  Link() {
    int fds[2];
    EXPECT_EQ(
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds),
        0);
    server = Conn(fds[0], "client");
    client = Conn(fds[1], "server");
  }
};

Deadline Soon() { return DeadlineIn(2.0); }

// The next frame on `c`, as the test (not the protocol) reads it.
std::string Frame(Conn* c, FrameType want) {
  FrameType type;
  std::string payload;
  Status s = c->RecvFrame(&type, &payload, Soon());
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(type, want);
  return payload;
}

std::string Hex(const std::string& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) out += {kDigits[b >> 4], kDigits[b & 15]};
  return out;
}

// A valid JOIN from `me` with `cred`, captured instead of delivered.
std::string CapturedJoin(const Credentials& cred, const JoinInfo& me) {
  Link l;
  ServerSide ss;
  ClientSide cs;
  EXPECT_TRUE(SendHello(&l.server, kJob, Soon(), &ss).ok());
  EXPECT_TRUE(SendJoin(&l.client, cred, me, Soon(), &cs).ok());
  return Frame(&l.server, FrameType::kJoin);
}

TEST(HandshakeTest, BothSidesProveTheSecret) {
  for (const std::string& token : {kSecret, std::string()}) {
    const Credentials cred{"job-1000.0", token};
    Link l;
    ServerSide ss;
    ClientSide cs;
    JoinInfo me{3, 4, 41234}, peer;
    ASSERT_TRUE(SendHello(&l.server, cred, Soon(), &ss).ok());
    ASSERT_TRUE(SendJoin(&l.client, cred, me, Soon(), &cs).ok());
    Status s = CheckJoin(&l.server, cred, ss, 4, -1, Soon(), &peer);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(peer.rank, 3u);
    EXPECT_EQ(peer.world, 4u);
    EXPECT_EQ(peer.data_port, 41234u);
    s = ReadAccept(&l.client, cred, me, &cs, Soon());
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_FALSE(cs.foreign);
    EXPECT_EQ(cs.server_nonce, ss.nonce);
    EXPECT_EQ(cs.nonce.size(), 32u);
  }
}

TEST(HandshakeTest, EverySessionHasFreshNonces) {
  Link a, b;
  ServerSide sa, sb;
  ASSERT_TRUE(SendHello(&a.server, kJob, Soon(), &sa).ok());
  ASSERT_TRUE(SendHello(&b.server, kJob, Soon(), &sb).ok());
  EXPECT_EQ(sa.nonce.size(), 32u);
  EXPECT_NE(sa.nonce, sb.nonce);
  JoinInfo me{1, 2, 0};
  EXPECT_NE(CapturedJoin(kJob, me), CapturedJoin(kJob, me));
}

struct RefusalCase {
  const char* name;
  Credentials server, client;
  JoinInfo me;
  uint32_t world;
  int want_rank;
  const char* reason;
  bool foreign;  // the client should try another server
};

TEST(HandshakeTest, ServerRefusesAndTellsTheClientWhy) {
  const RefusalCase cases[] = {
      {"wrong secret",
       kJob,
       {"job-1000.0", std::string(64, 'f')},
       {1, 4, 0},
       4,
       -1,
       "wrong job secret",
       false},
      {"other job",
       kJob,
       {"job-1001.0", kSecret},
       {1, 4, 0},
       4,
       -1,
       "it belongs to job 'job-1001.0', this is 'job-1000.0'",
       true},
      {"other step",
       kJob,
       {"job-1000.1", kSecret},
       {1, 4, 0},
       4,
       -1,
       "it belongs to job 'job-1000.1', this is 'job-1000.0'",
       true},
      {"client has a secret, server none",
       {"job-1000.0", ""},
       kJob,
       {1, 4, 0},
       4,
       -1,
       "it has a job secret and this rank has none",
       false},
      {"world size",
       kJob,
       kJob,
       {1, 8, 0},
       4,
       -1,
       "world size 8, expected 4",
       false},
      {"rank past the world",
       kJob,
       kJob,
       {4, 4, 0},
       4,
       -1,
       "unexpected rank 4",
       false},
      {"not the wanted rank",
       kJob,
       kJob,
       {2, 4, 0},
       4,
       1,
       "unexpected rank 2",
       false},
  };
  for (const RefusalCase& c : cases) {
    Link l;
    ServerSide ss;
    ClientSide cs;
    JoinInfo peer{99, 99, 99};
    ASSERT_TRUE(SendHello(&l.server, c.server, Soon(), &ss).ok());
    ASSERT_TRUE(SendJoin(&l.client, c.client, c.me, Soon(), &cs).ok())
        << c.name;
    Status s =
        CheckJoin(&l.server, c.server, ss, c.world, c.want_rank, Soon(), &peer);
    EXPECT_EQ(s.code(), Status::Code::kPermissionDenied) << c.name;
    EXPECT_EQ(s.message(), std::string("refused client: ") + c.reason)
        << c.name;
    EXPECT_EQ(peer.rank, 99u) << c.name;  // untouched
    s = ReadAccept(&l.client, c.client, c.me, &cs, Soon());
    EXPECT_EQ(s.code(), Status::Code::kPermissionDenied) << c.name;
    EXPECT_EQ(s.message(), std::string("server refused us: ") + c.reason)
        << c.name;
    EXPECT_EQ(cs.foreign, c.foreign) << c.name;
  }
}

TEST(HandshakeTest, ClientWithoutTheSecretDoesNotJoin) {
  Link l;
  ServerSide ss;
  ClientSide cs;
  ASSERT_TRUE(SendHello(&l.server, kJob, Soon(), &ss).ok());
  Status s = SendJoin(&l.client, {"job-1000.0", ""}, {1, 4, 0}, Soon(), &cs);
  EXPECT_EQ(s.code(), Status::Code::kPermissionDenied);
  EXPECT_EQ(s.message(),
            "server requires the job's secret (DT_JOB_TOKEN) and we have none");
  EXPECT_FALSE(cs.foreign);
}

TEST(HandshakeTest, JoinWithoutProofIsRefusedBySecretHolder) {
  // What a client without the secret sends to a server that has none...
  Link first;
  ServerSide ss0;
  ClientSide cs0;
  const Credentials none{"job-1000.0", ""};
  ASSERT_TRUE(SendHello(&first.server, none, Soon(), &ss0).ok());
  ASSERT_TRUE(SendJoin(&first.client, none, {1, 4, 0}, Soon(), &cs0).ok());
  std::string join = Frame(&first.server, FrameType::kJoin);
  // ...is no way into a server with the secret.
  Link l;
  ServerSide ss;
  JoinInfo peer;
  ASSERT_TRUE(SendHello(&l.server, kJob, Soon(), &ss).ok());
  Frame(&l.client, FrameType::kHello);
  ASSERT_TRUE(l.client.SendFrame(FrameType::kJoin, join, Soon()).ok());
  Status s = CheckJoin(&l.server, kJob, ss, 4, -1, Soon(), &peer);
  EXPECT_EQ(s.message(), "refused client: it has no job secret (DT_JOB_TOKEN)");
}

TEST(HandshakeTest, ReplayedJoinIsRefused) {
  std::string join = CapturedJoin(kJob, {1, 4, 0});
  Link l;
  ServerSide ss;
  JoinInfo peer;
  ASSERT_TRUE(SendHello(&l.server, kJob, Soon(), &ss).ok());
  Frame(&l.client, FrameType::kHello);
  ASSERT_TRUE(l.client.SendFrame(FrameType::kJoin, join, Soon()).ok());
  Status s = CheckJoin(&l.server, kJob, ss, 4, -1, Soon(), &peer);
  EXPECT_EQ(s.code(), Status::Code::kPermissionDenied);
  EXPECT_EQ(s.message(), "refused client: wrong job secret");
  EXPECT_EQ(Frame(&l.client, FrameType::kReject), "wrong job secret");
}

TEST(HandshakeTest, ReplayedOrForgedAcceptIsRefused) {
  const JoinInfo me{1, 4, 0};
  // A valid ACCEPT of an earlier session.
  std::string old_accept;
  {
    Link l;
    ServerSide ss;
    ClientSide cs;
    JoinInfo peer;
    ASSERT_TRUE(SendHello(&l.server, kJob, Soon(), &ss).ok());
    ASSERT_TRUE(SendJoin(&l.client, kJob, me, Soon(), &cs).ok());
    ASSERT_TRUE(CheckJoin(&l.server, kJob, ss, 4, -1, Soon(), &peer).ok());
    old_accept = Frame(&l.client, FrameType::kAccept);
  }
  std::string no_proof;
  PutString(&no_proof, "");
  std::string wrong_key;
  PutString(&wrong_key, Mac("not the secret", "dt-accept"));
  for (const std::string& accept : {old_accept, no_proof, wrong_key}) {
    Link l;
    ServerSide ss;
    ClientSide cs;
    ASSERT_TRUE(SendHello(&l.server, kJob, Soon(), &ss).ok());
    ASSERT_TRUE(SendJoin(&l.client, kJob, me, Soon(), &cs).ok());
    Frame(&l.server, FrameType::kJoin);
    ASSERT_TRUE(l.server.SendFrame(FrameType::kAccept, accept, Soon()).ok());
    Status s = ReadAccept(&l.client, kJob, me, &cs, Soon());
    EXPECT_EQ(s.code(), Status::Code::kPermissionDenied) << Hex(accept);
    EXPECT_EQ(s.message(), "server does not hold the job's secret");
  }
}

// HELLO: magic, version, 32-byte nonce, has-secret.
std::string Hello(const char* magic, uint32_t version, size_t nonce_len) {
  std::string p = magic;
  PutU32(&p, version);
  p += std::string(nonce_len, 'n');
  PutU32(&p, 1);
  return p;
}

TEST(HandshakeTest, ClientRejectsABadHello) {
  struct Case {
    const char* name;
    FrameType type;
    std::string payload;
    Status::Code code;
    const char* message;
    bool foreign;
  } cases[] = {
      {"truncated", FrameType::kHello, Hello("DTRV", 2, 31),
       Status::Code::kUnavailable, "server is not a dist-train rendezvous",
       true},
      {"empty", FrameType::kHello, "", Status::Code::kUnavailable,
       "server is not a dist-train rendezvous", true},
      {"too long", FrameType::kHello, Hello("DTRV", 2, 33),
       Status::Code::kUnavailable, "server is not a dist-train rendezvous",
       true},
      {"oversized", FrameType::kHello, std::string(300, 'x'),
       Status::Code::kUnavailable,
       "server is not a dist-train rendezvous (server sent a frame of 301 "
       "bytes (limit 256))",
       true},
      {"other magic", FrameType::kHello, Hello("HTTP", 2, 32),
       Status::Code::kUnavailable, "server is not a dist-train rendezvous",
       true},
      {"not a HELLO", FrameType::kAccept, Hello("DTRV", 2, 32),
       Status::Code::kUnavailable, "server is not a dist-train rendezvous",
       true},
      {"other version", FrameType::kHello, Hello("DTRV", 1, 32),
       Status::Code::kInvalidArgument,
       "server speaks protocol version 1, we speak 2", false},
  };
  for (const Case& c : cases) {
    Link l;
    ClientSide cs;
    ASSERT_TRUE(l.server.SendFrame(c.type, c.payload, Soon()).ok());
    Status s = SendJoin(&l.client, kJob, {1, 4, 0}, Soon(), &cs);
    EXPECT_EQ(s.code(), c.code) << c.name;
    EXPECT_EQ(s.message(), c.message) << c.name;
    EXPECT_EQ(cs.foreign, c.foreign) << c.name;
  }
}

TEST(HandshakeTest, ServerRejectsATruncatedOrPaddedJoin) {
  const std::string join = CapturedJoin(kJob, {1, 4, 0});
  std::vector<std::string> bad = {"", join + "x", join + std::string(4, '\0')};
  for (size_t cut : {1, 4, 8, 32, 60, 64}) {
    ASSERT_LT(cut, join.size());
    bad.push_back(join.substr(0, join.size() - cut));
  }
  std::string long_mac = join.substr(0, join.size() - 36);  // drop the MAC
  PutString(&long_mac, std::string(65, 'm'));
  bad.push_back(long_mac);
  std::string other_magic = "XXXX" + join.substr(4);
  bad.push_back(other_magic);
  for (const std::string& payload : bad) {
    Link l;
    ServerSide ss;
    JoinInfo peer;
    ASSERT_TRUE(SendHello(&l.server, kJob, Soon(), &ss).ok());
    ASSERT_TRUE(l.client.SendFrame(FrameType::kJoin, payload, Soon()).ok());
    Status s = CheckJoin(&l.server, kJob, ss, 4, -1, Soon(), &peer);
    EXPECT_EQ(s.code(), Status::Code::kPermissionDenied) << Hex(payload);
    EXPECT_EQ(s.message(),
              "refused client: malformed JOIN (not a dist-train peer)");
    Frame(&l.client, FrameType::kHello);
    EXPECT_EQ(Frame(&l.client, FrameType::kReject),
              "malformed JOIN (not a dist-train peer)");
  }
}

TEST(HandshakeTest, ServerRejectsAWrongFrameInsteadOfJoin) {
  Link l;
  ServerSide ss;
  JoinInfo peer;
  ASSERT_TRUE(SendHello(&l.server, kJob, Soon(), &ss).ok());
  std::string join = CapturedJoin(kJob, {1, 4, 0});
  ASSERT_TRUE(l.client.SendFrame(FrameType::kBye, join, Soon()).ok());
  EXPECT_EQ(CheckJoin(&l.server, kJob, ss, 4, -1, Soon(), &peer).message(),
            "refused client: malformed JOIN (not a dist-train peer)");
}

TEST(HandshakeTest, OversizedMessagesAreRefusedUnread) {
  {
    Link l;
    ServerSide ss;
    JoinInfo peer;
    ASSERT_TRUE(SendHello(&l.server, kJob, Soon(), &ss).ok());
    ASSERT_TRUE(
        l.client.SendFrame(FrameType::kJoin, std::string(5000, 'j'), Soon())
            .ok());
    Status s = CheckJoin(&l.server, kJob, ss, 4, -1, Soon(), &peer);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
    EXPECT_EQ(s.message(), "client sent a frame of 5001 bytes (limit 4096)");
  }
  {
    Link l;
    ClientSide cs;
    cs.server_nonce = std::string(32, 'n'), cs.nonce = std::string(32, 'c');
    ASSERT_TRUE(
        l.server.SendFrame(FrameType::kAccept, std::string(2000, 'a'), Soon())
            .ok());
    Status s = ReadAccept(&l.client, kJob, {1, 4, 0}, &cs, Soon());
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
    EXPECT_EQ(s.message(), "server sent a frame of 2001 bytes (limit 1024)");
  }
}

TEST(HandshakeTest, ClientRejectsAMalformedReply) {
  struct Case {
    FrameType type;
    std::string payload;
  } cases[] = {
      {FrameType::kAccept, ""},
      {FrameType::kAccept, std::string("\0\0\0\x20short", 9)},
      {FrameType::kAccept, std::string("\0\0\0\x41", 4) + std::string(65, 'p')},
      {FrameType::kTable, std::string(4, '\0')}};
  for (const Case& c : cases) {
    Link l;
    ClientSide cs;
    ASSERT_TRUE(l.server.SendFrame(c.type, c.payload, Soon()).ok());
    Status s = ReadAccept(&l.client, kJob, {1, 4, 0}, &cs, Soon());
    EXPECT_EQ(s.code(), Status::Code::kUnavailable) << Hex(c.payload);
    EXPECT_EQ(s.message(), "server sent an unexpected reply");
    EXPECT_TRUE(cs.foreign);
  }
}

TEST(HandshakeTest, APeerThatStopsMidMessageIsAnError) {
  Link l;
  ServerSide ss;
  JoinInfo peer;
  ASSERT_TRUE(SendHello(&l.server, kJob, Soon(), &ss).ok());
  Frame(&l.client, FrameType::kHello);  // unread data would make it a reset
  std::string head;
  PutU32(&head, 100);  // announces 99 bytes of JOIN, sends 10
  head += static_cast<char>(FrameType::kJoin);
  head += std::string(10, 'j');
  ASSERT_TRUE(l.client.SendAll(head.data(), head.size(), Soon()).ok());
  l.client.Close();
  Status s = CheckJoin(&l.server, kJob, ss, 4, -1, Soon(), &peer);
  EXPECT_EQ(s.code(), Status::Code::kUnavailable);
  EXPECT_EQ(s.message(), "client closed the connection");
}

TEST(HandshakeTest, ASilentPeerTimesOut) {
  Link l;
  ServerSide ss;
  JoinInfo peer;
  ASSERT_TRUE(SendHello(&l.server, kJob, Soon(), &ss).ok());
  Status s = CheckJoin(&l.server, kJob, ss, 4, -1, DeadlineIn(0.05), &peer);
  EXPECT_EQ(s.code(), Status::Code::kTimeout) << s.ToString();
}

}  // namespace
}  // namespace dist_train
