// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/peer_text.h"

#include <gtest/gtest.h>

#include <string>

namespace dist_train {
namespace {

TEST(PeerTextTest, EscapesEverythingThatCouldForgeALine) {
  const struct {
    std::string in, out;
  } cases[] = {
      {"slurm:42.0", "slurm:42.0"},
      {"a\nb", "a\\x0ab"},
      {"\x1b[31mred", "\\x1b[31mred"},
      {"cr\r", "cr\\x0d"},
      {std::string("nul\0", 4), "nul\\x00"},
      {"back\\slash", "back\\slash"},
      {"a\\x0ab", "a\\x0ab"},  // escaping twice changes nothing
      {"\xff\x7f", "\\xff\\x7f"},
  };
  for (const auto& c : cases) EXPECT_EQ(EscapePeerText(c.in), c.out) << c.in;
}

TEST(PeerTextTest, LongTextIsCutShort) {
  EXPECT_EQ(EscapePeerText(std::string(200, 'a'), 4), "aaaa...");
  EXPECT_EQ(EscapePeerText("abcd", 4), "abcd");
}

TEST(PeerTextTest, RefusalLogWritesTheFirstFewThenCounts) {
  RefusalLog log(2);
  EXPECT_EQ(log.Summary(), "");
  EXPECT_TRUE(log.Admit());
  EXPECT_TRUE(log.Admit());
  EXPECT_EQ(log.Summary(), "");
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(log.Admit());
  EXPECT_EQ(log.Summary(), "suppressed 5 more refusals");
}

}  // namespace
}  // namespace dist_train
