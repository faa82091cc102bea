// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "contract/preflight_words.h"

#include <gtest/gtest.h>

namespace dist_train {
namespace {

TEST(PreflightWordsTest, SecondsBareWordOffAndBounds) {
  uint32_t s = 7;
  ASSERT_TRUE(ParsePreflightSeconds("", &s));
  EXPECT_EQ(s, 60u);
  ASSERT_TRUE(ParsePreflightSeconds("off", &s));
  EXPECT_EQ(s, 0u);
  ASSERT_TRUE(ParsePreflightSeconds("5", &s));
  EXPECT_EQ(s, 5u);
  ASSERT_TRUE(ParsePreflightSeconds("3600", &s));
  EXPECT_EQ(s, 3600u);
  for (const char* bad : {"4", "3601", "0", "-5", "60s", "1e2", " 60", "on"}) {
    s = 9;
    EXPECT_FALSE(ParsePreflightSeconds(bad, &s)) << bad;
    EXPECT_EQ(s, 9u) << "changed on error: " << bad;
  }
  EXPECT_EQ(PreflightSecondsName(0), "off");
  EXPECT_EQ(PreflightSecondsName(90), "90");
}

TEST(PreflightWordsTest, PolicyRoundTrips) {
  PreflightPolicy p = PreflightPolicy::kWarn;
  ASSERT_TRUE(ParsePreflightPolicy("fail", &p));
  EXPECT_EQ(p, PreflightPolicy::kFail);
  EXPECT_STREQ(PreflightPolicyName(p), "fail");
  ASSERT_TRUE(ParsePreflightPolicy("warn", &p));
  EXPECT_STREQ(PreflightPolicyName(p), "warn");
  ASSERT_TRUE(ParsePreflightPolicy("requeue", &p));
  EXPECT_EQ(p, PreflightPolicy::kRequeue);
  EXPECT_STREQ(PreflightPolicyName(p), "requeue");
  EXPECT_FALSE(ParsePreflightPolicy("retry", &p));
  EXPECT_FALSE(ParsePreflightPolicy("FAIL", &p));
  EXPECT_EQ(p, PreflightPolicy::kRequeue);
}

TEST(PreflightWordsTest, RatesAreHowAnAdminWritesThem) {
  double r = 0;
  const std::vector<std::pair<const char*, const char*>> good = {
      {"2.5", "2.5"},
      {"12", "12"},
      {"0.25", "0.25"},
      {"1000000", "1000000"},
      {"007.50", "7.5"}};
  for (const auto& [text, name] : good) {
    EXPECT_TRUE(ParsePreflightRate(text, &r)) << text;
    EXPECT_EQ(PreflightRateName(r), name);  // what dt-preflight is given
  }
  for (const char* bad : {"", "0", "0.0", ".5", "5.", "1.2.3", "-1", "+1",
                          "1e3", "inf", "nan", "1000000.5", " 2", "2 "}) {
    r = 7;
    EXPECT_FALSE(ParsePreflightRate(bad, &r)) << bad;
    EXPECT_EQ(r, 7) << bad;
  }
}

}  // namespace
}  // namespace dist_train
