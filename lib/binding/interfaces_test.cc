// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "binding/interfaces.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/stat.h>

#include <deque>

#include <gtest/gtest.h>

namespace dist_train {
namespace {

// A getifaddrs chain built in memory: one entry per Add, linked in order.
class FakeChain {
 public:
  FakeChain& Add(const char* name, unsigned flags, int family,
                 const char* addr = nullptr) {
    entries_.emplace_back();
    Entry& e = entries_.back();
    e.ifa.ifa_name = const_cast<char*>(name);
    e.ifa.ifa_flags = flags;
    if (family == AF_INET) {
      e.v4.sin_family = AF_INET;
      inet_pton(AF_INET, addr, &e.v4.sin_addr);
      e.ifa.ifa_addr = reinterpret_cast<struct sockaddr*>(&e.v4);
    } else if (family == AF_INET6) {
      e.v6.sin6_family = AF_INET6;
      inet_pton(AF_INET6, addr, &e.v6.sin6_addr);
      e.ifa.ifa_addr = reinterpret_cast<struct sockaddr*>(&e.v6);
    } else if (family == AF_PACKET) {
      e.packet.sa_family = AF_PACKET;
      e.ifa.ifa_addr = &e.packet;
    }
    if (entries_.size() > 1)
      entries_[entries_.size() - 2].ifa.ifa_next = &e.ifa;
    return *this;
  }
  const struct ifaddrs* head() const { return &entries_.front().ifa; }

 private:
  struct Entry {
    struct ifaddrs ifa = {};
    struct sockaddr_in v4 = {};
    struct sockaddr_in6 v6 = {};
    struct sockaddr packet = {};
  };
  std::deque<Entry> entries_;  // stable addresses as entries are added
};

constexpr unsigned kUp = IFF_UP | IFF_RUNNING;

TEST(SocketInterfacesTest, UpWithAnAddressOnceEachInOrder) {
  FakeChain c;
  c.Add("lo", kUp | IFF_LOOPBACK, AF_INET, "127.0.0.1")
      .Add("eth0", kUp, AF_PACKET)
      .Add("ib0", kUp, AF_INET6, "fd00::5")
      .Add("eth0", kUp, AF_INET, "10.0.0.5")
      .Add("eth0", kUp, AF_INET6, "fd00::6");
  EXPECT_EQ(SocketInterfaces(c.head()),
            (std::vector<std::string>{"ib0", "eth0"}));
}

TEST(SocketInterfacesTest, DownLinkLocalOrAddresslessInterfacesAreLeftOut) {
  FakeChain c;
  c.Add("ibp26s0", kUp, AF_PACKET)             // IB port, no IPoIB
      .Add("eno1", 0, AF_INET, "192.168.1.2")  // administratively down
      .Add("eno2", kUp, AF_INET6, "fe80::1")   // link-local only
      .Add("tun0", kUp, AF_UNSPEC);            // no address at all
  EXPECT_TRUE(SocketInterfaces(c.head()).empty());
  EXPECT_TRUE(SocketInterfaces(nullptr).empty());
}

TEST(SocketInterfacesTest, LiveListNamesRealInterfacesButNotLoopback) {
  std::vector<std::string> names;
  ASSERT_TRUE(LiveSocketInterfaces(&names).ok());
  for (const std::string& n : names) {
    EXPECT_NE(n, "lo");
    struct stat st;
    EXPECT_EQ(stat(("/sys/class/net/" + n).c_str(), &st), 0) << n;
  }
}

}  // namespace
}  // namespace dist_train
