// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/crypto.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace dist_train {
namespace {

std::string Hex(const std::string& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) out += {kDigits[b >> 4], kDigits[b & 15]};
  return out;
}

TEST(CryptoTest, MacIsHmacSha256) {
  // RFC 4231, test cases 2, 1 and 6 (a key longer than SHA-256's block).
  EXPECT_EQ(Hex(Mac("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(Hex(Mac(std::string(20, '\x0b'), "Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(Hex(Mac(std::string(131, '\xaa'),
                    "Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

// Ranks authenticate from several threads at once (rank 0's rendezvous
// beside the ring's joiner): the context is made once, the MACs agree.
TEST(CryptoTest, MacFromManyThreadsAtOnce) {
  std::vector<std::string> macs(8);
  std::vector<std::thread> threads;
  for (std::string& m : macs)
    threads.emplace_back(
        [&m] { m = Mac("Jefe", "what do ya want for nothing?"); });
  for (std::thread& t : threads) t.join();
  for (const std::string& m : macs) EXPECT_EQ(m, macs[0]);
  EXPECT_EQ(macs[0].size(), 32u);
}

TEST(CryptoTest, RandomBytesAreFreshEachCall) {
  std::string a(32, '\0'), b(32, '\0');
  ASSERT_TRUE(RandomBytes(a.data(), a.size()));
  ASSERT_TRUE(RandomBytes(b.data(), b.size()));
  EXPECT_NE(a, b);
  EXPECT_NE(a, std::string(32, '\0'));
}

}  // namespace
}  // namespace dist_train
