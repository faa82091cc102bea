// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "contract/token.h"

#include <gtest/gtest.h>

#include <set>

namespace dist_train {
namespace {

TEST(TokenTest, GeneratedTokensAreValidAndDistinct) {
  std::set<std::string> seen;
  for (int i = 0; i < 64; ++i) {
    std::string t;
    ASSERT_TRUE(GenerateToken(&t).ok());
    EXPECT_TRUE(CheckToken(t).ok()) << t;
    seen.insert(t);
  }
  EXPECT_EQ(seen.size(), 64u);
}

TEST(TokenTest, CheckRejectsWithoutEchoingTheSecret) {
  EXPECT_EQ(CheckToken("abc").message(),
            "DT_JOB_TOKEN must be 64 lowercase hex digits (got 3 characters)");
  std::string upper(64, 'A');
  Status s = CheckToken(upper);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message().find("AAAA"), std::string::npos);
  EXPECT_FALSE(CheckToken(std::string(65, 'a')).ok());
  EXPECT_TRUE(CheckToken(std::string(64, 'f')).ok());
}

}  // namespace
}  // namespace dist_train
