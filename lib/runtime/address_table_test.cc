// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/address_table.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/coding.h"

namespace dist_train {
namespace {

std::vector<std::string> RoundTrip(const std::vector<std::string>& addrs) {
  std::string table;
  Status s = EncodeAddressTable(addrs, &table);
  EXPECT_TRUE(s.ok()) << s.ToString();
  std::vector<std::string> back;
  s = DecodeAddressTable(table, addrs.size(), &back);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return back;
}

TEST(AddressTableTest, EveryAddressComesBackInRankOrder) {
  const std::vector<std::string> addrs = {"10.0.0.1:4000", "10.0.0.1:4001",
                                          "10.0.0.2:65535", "10.0.0.1:1",
                                          "node-17.cluster.example:29500"};
  EXPECT_EQ(RoundTrip(addrs), addrs);
}

TEST(AddressTableTest, EachHostIsSentOnce) {
  std::vector<std::string> addrs;
  for (int r = 0; r < 1024; ++r)
    addrs.push_back("127.0.0.1:" + std::to_string(30000 + r));
  std::string table;
  ASSERT_TRUE(EncodeAddressTable(addrs, &table).ok());
  EXPECT_EQ(table.size(), 4 + 4 + 9 + 4 * 1024);
  EXPECT_EQ(RoundTrip(addrs), addrs);
}

TEST(AddressTableTest, AnAddressThatIsNotHostPortIsRefused) {
  std::string table;
  for (const char* bad : {"10.0.0.1", ":4000", "10.0.0.1:0", "10.0.0.1:65536",
                          "10.0.0.1:x", "10.0.0.1:", "a b:1", "a\n:1"}) {
    Status s = EncodeAddressTable({"10.0.0.1:4000", bad}, &table);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << bad;
    EXPECT_EQ(s.message(), "rank 1's data address '" + std::string(bad) +
                               "' is not host:port");
  }
}

// A table as rank 0 might send it, built by hand.
std::string Table(const std::vector<std::string>& hosts,
                  const std::vector<std::pair<int, int>>& entries) {
  std::string t;
  PutU32(&t, static_cast<uint32_t>(hosts.size()));
  for (const std::string& h : hosts) PutString(&t, h);
  for (auto [host, port] : entries) {
    t.push_back(static_cast<char>(host >> 8));
    t.push_back(static_cast<char>(host & 0xff));
    t.push_back(static_cast<char>(port >> 8));
    t.push_back(static_cast<char>(port & 0xff));
  }
  return t;
}

std::string DecodeError(const std::string& table, size_t ranks) {
  std::vector<std::string> addrs;
  Status s = DecodeAddressTable(table, ranks, &addrs);
  EXPECT_EQ(s.code(), Status::Code::kInternal);
  return s.message();
}

TEST(AddressTableTest, AHandBuiltTableDecodes) {
  std::vector<std::string> addrs;
  ASSERT_TRUE(
      DecodeAddressTable(Table({"a", "b"}, {{1, 7}, {0, 8}}), 2, &addrs).ok());
  EXPECT_EQ(addrs, (std::vector<std::string>{"b:7", "a:8"}));
}

TEST(AddressTableTest, AMalformedTableIsRefusedWithTheReason) {
  const std::string p = "rank 0 sent a malformed address table: ";
  EXPECT_EQ(DecodeError("", 2), p + "no host count");
  EXPECT_EQ(DecodeError(Table({}, {}), 2), p + "0 hosts for 2 ranks");
  EXPECT_EQ(DecodeError(Table({"a", "b", "c"}, {{0, 1}, {1, 1}}), 2),
            p + "3 hosts for 2 ranks");
  EXPECT_EQ(DecodeError(Table({""}, {{0, 1}}), 1),
            p + "a host name that is empty or not printable text");
  EXPECT_EQ(DecodeError(Table({"a\nb\x1b[2J"}, {{0, 1}}), 1),
            p + "a host name that is empty or not printable text");
  EXPECT_EQ(DecodeError(Table({"a b"}, {{0, 1}}), 1),
            p + "a host name that is empty or not printable text");
  EXPECT_EQ(DecodeError(Table({std::string(254, 'h')}, {{0, 1}}), 1),
            p + "a host name that is too long or cut short");
  EXPECT_EQ(DecodeError(Table({"a"}, {{0, 1}}), 2),
            p + "4 bytes of entries for 2 ranks");
  EXPECT_EQ(DecodeError(Table({"a"}, {{0, 1}, {0, 2}, {0, 3}}), 2),
            p + "12 bytes of entries for 2 ranks");
  EXPECT_EQ(DecodeError(Table({"a"}, {{0, 1}, {1, 2}}), 2),
            p + "rank 1 has host 1 of 1, port 2");
  EXPECT_EQ(DecodeError(Table({"a"}, {{0, 1}, {0, 0}}), 2),
            p + "rank 1 has host 0 of 1, port 0");
  EXPECT_EQ(DecodeError(Table({"a", "b"}, {{0, 1}, {0, 2}}), 2),
            p + "host 'b' has no rank");
}

TEST(AddressTableTest, ACutTableIsRefusedAtEveryLength) {
  std::string table;
  ASSERT_TRUE(
      EncodeAddressTable({"10.0.0.1:4000", "10.0.0.2:4001"}, &table).ok());
  for (size_t len = 0; len < table.size(); ++len) {
    std::vector<std::string> addrs;
    EXPECT_FALSE(DecodeAddressTable(table.substr(0, len), 2, &addrs).ok())
        << len;
  }
}

}  // namespace
}  // namespace dist_train
