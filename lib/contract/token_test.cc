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

TEST(TokenTest, EachRuleKeepsOrMakesTheJobsToken) {
  const std::string valid(64, 'c'), bad = "short";
  struct Case {
    const char* name;
    TokenRule rule;
    const char* existing;
    bool ok, kept, made;
  } cases[] = {
      {"new job, none", TokenRule::kNewJob, nullptr, true, false, true},
      {"new job, a valid one: fresh", TokenRule::kNewJob, valid.c_str(), true,
       false, true},
      {"new job, a bad one: fresh", TokenRule::kNewJob, bad.c_str(), true,
       false, true},
      {"step, none: fresh", TokenRule::kJobStep, nullptr, true, false, true},
      {"step, the job's", TokenRule::kJobStep, valid.c_str(), true, true,
       false},
      {"step, a bad one: error", TokenRule::kJobStep, bad.c_str(), false, false,
       false},
      {"job or fresh, the job's", TokenRule::kJobOrFresh, valid.c_str(), true,
       true, false},
      {"job or fresh, a bad one: fresh", TokenRule::kJobOrFresh, bad.c_str(),
       true, false, true},
  };
  for (const Case& c : cases) {
    std::string token = "untouched";
    bool made = true;
    Status s = JobToken(c.rule, c.existing, &token, &made);
    ASSERT_EQ(s.ok(), c.ok) << c.name << ": " << s.ToString();
    EXPECT_EQ(made, c.made) << c.name;
    if (!c.ok) {
      EXPECT_EQ(s.message(),
                "DT_JOB_TOKEN must be 64 lowercase hex digits (got 5 "
                "characters)")
          << c.name;
      continue;
    }
    EXPECT_TRUE(CheckToken(token).ok()) << c.name;
    EXPECT_EQ(token == valid, c.kept) << c.name;
  }
}

}  // namespace
}  // namespace dist_train
