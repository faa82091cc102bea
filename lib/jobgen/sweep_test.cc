// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "jobgen/sweep.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace dist_train {
namespace {

SweepDimension Dim(const std::string& name, std::vector<std::string> values) {
  SweepDimension d;
  d.names = {name};
  for (auto& v : values) d.values.push_back({v});
  return d;
}

TEST(SweepTest, GridIsACartesianProductFirstDimensionSlowest) {
  SweepSpec s;
  s.product = {Dim("lr", {"0.1", "0.01", "0.001"}),
               Dim("bs", {"32", "64", "128", "256"})};
  std::vector<SweepPoint> pts;
  ASSERT_TRUE(ExpandSweep(s, 1000, &pts).ok());
  ASSERT_EQ(pts.size(), 12u);
  EXPECT_EQ(pts[0], (SweepPoint{{"lr", "0.1"}, {"bs", "32"}}));
  EXPECT_EQ(pts[1], (SweepPoint{{"lr", "0.1"}, {"bs", "64"}}));
  EXPECT_EQ(pts[4], (SweepPoint{{"lr", "0.01"}, {"bs", "32"}}));
  EXPECT_EQ(pts[11], (SweepPoint{{"lr", "0.001"}, {"bs", "256"}}));
  std::set<SweepPoint> unique(pts.begin(), pts.end());
  EXPECT_EQ(unique.size(), 12u);
}

TEST(SweepTest, ZipAdvancesTogetherAndCombinesWithGrid) {
  SweepSpec s;
  SweepDimension zip;
  zip.names = {"model", "layers"};
  zip.values = {{"small", "6"}, {"large", "24"}};
  s.product = {Dim("seed", {"1", "2", "3"}), zip};
  std::vector<SweepPoint> pts;
  ASSERT_TRUE(ExpandSweep(s, 1000, &pts).ok());
  ASSERT_EQ(pts.size(), 6u);
  EXPECT_EQ(pts[1],
            (SweepPoint{{"seed", "1"}, {"model", "large"}, {"layers", "24"}}));
}

TEST(SweepTest, Ranges) {
  std::vector<std::string> v;
  ASSERT_TRUE(RangeValues(1, 5, 1, &v).ok());
  EXPECT_EQ(v, (std::vector<std::string>{"1", "2", "3", "4"}));
  ASSERT_TRUE(RangeValues(0.1, 0.4, 0.1, &v).ok());
  EXPECT_EQ(v, (std::vector<std::string>{"0.1", "0.2", "0.3"}));
  ASSERT_TRUE(RangeValues(0, 1, 0.1, &v).ok());
  EXPECT_EQ(v.size(), 10u);
  EXPECT_EQ(v[7], "0.7");
  EXPECT_EQ(RangeValues(0, INFINITY, 1, &v).message(),
            "range start, stop and step must be finite numbers");
  ASSERT_TRUE(RangeValues(10, 0, -5, &v).ok());
  EXPECT_EQ(v, (std::vector<std::string>{"10", "5"}));
  EXPECT_EQ(RangeValues(0, 5, 0, &v).message(),
            "range step 0 never goes from 0 to 5");
  EXPECT_EQ(RangeValues(0, 5, -1, &v).message(),
            "range step -1 never goes from 0 to 5");
}

TEST(SweepTest, RandomIsReproducibleFromItsSeed) {
  SweepSpec s;
  s.samples = 20;
  s.seed = 42;
  RandomParam lr{"lr", RandomParam::Kind::kLogUniform, 1e-4, 1e-1, 0, 0, {}};
  RandomParam bs{"bs", RandomParam::Kind::kChoice, 0, 0, 0, 0, {"32", "64"}};
  RandomParam layers{"layers", RandomParam::Kind::kInt, 0, 0, 2, 4, {}};
  s.random = {lr, bs, layers};
  std::vector<SweepPoint> a, b, c;
  ASSERT_TRUE(ExpandSweep(s, 1000, &a).ok());
  ASSERT_TRUE(ExpandSweep(s, 1000, &b).ok());
  EXPECT_EQ(a, b);
  ASSERT_EQ(a.size(), 20u);
  for (const SweepPoint& p : a) {
    double v = std::stod(p[0].second);
    EXPECT_GE(v, 1e-4);
    EXPECT_LT(v, 1e-1);
    EXPECT_TRUE(p[1].second == "32" || p[1].second == "64");
    int l = std::stoi(p[2].second);
    EXPECT_GE(l, 2);
    EXPECT_LE(l, 4);
  }
  s.seed = 43;
  ASSERT_TRUE(ExpandSweep(s, 1000, &c).ok());
  EXPECT_NE(a, c);
  // Pinned: the generator is part of the contract (same seed, same sweep).
  EXPECT_EQ(a[0][2].second, "2");
  EXPECT_EQ(a[0][1].second, "64");
}

TEST(SweepTest, FullInt64RangeDoesNotOverflow) {
  SweepSpec s;
  s.samples = 3;
  s.random = {RandomParam{
      "x", RandomParam::Kind::kInt, 0, 0, INT64_MIN, INT64_MAX, {}}};
  std::vector<SweepPoint> pts;
  ASSERT_TRUE(ExpandSweep(s, 10, &pts).ok());
  EXPECT_EQ(pts.size(), 3u);
}

TEST(SweepTest, ExplicitPointsAndLimits) {
  SweepSpec s;
  s.points = {{{"a", "1"}}, {{"a", "2"}}};
  std::vector<SweepPoint> pts;
  ASSERT_TRUE(ExpandSweep(s, 10, &pts).ok());
  EXPECT_EQ(pts, s.points);
  EXPECT_EQ(ExpandSweep(s, 1, &pts).message(),
            "sweep has 2 points; the limit is 1");
  SweepSpec big;
  big.product = {Dim("a", std::vector<std::string>(1000, "x")),
                 Dim("b", std::vector<std::string>(1000, "y"))};
  EXPECT_EQ(ExpandSweep(big, 100000, &pts).message(),
            "sweep has 1000000 points; the limit is 100000");
}

TEST(SweepTest, ProductCountIsExactOrSaysMoreThan) {
  SweepSpec s;
  for (int i = 0; i < 70; ++i)
    s.product.push_back(Dim("p" + std::to_string(i), {"0", "1"}));
  std::vector<SweepPoint> pts;
  EXPECT_EQ(ExpandSweep(s, kMaxSweepPoints, &pts).message(),
            "sweep has more than 18446744073709551614 points; the limit is "
            "100000");
  EXPECT_TRUE(pts.empty());
}

// Long values times many points would exhaust memory before any output:
// refused before a point is built.
TEST(SweepTest, ValueBytesAreCappedBeforeExpanding) {
  SweepSpec s;
  s.product = {Dim("big", {std::string(1 << 20, 'x')}),
               Dim("i", std::vector<std::string>(100, "1"))};
  std::vector<SweepPoint> pts;
  EXPECT_EQ(ExpandSweep(s, kMaxSweepPoints, &pts).message(),
            "sweep points hold 104858100 bytes of parameter values; the limit "
            "is 67108864");
  SweepSpec r;
  r.samples = 100000;
  r.random = {
      {"c", RandomParam::Kind::kChoice, 0, 0, 0, 0, {std::string(1000, 'x')}}};
  EXPECT_EQ(ExpandSweep(r, kMaxSweepPoints, &pts).message(),
            "sweep points hold 100100000 bytes of parameter values; the limit "
            "is 67108864");
  EXPECT_TRUE(pts.empty());
}

TEST(SweepTest, TheLimitRendersInReasonableTime) {
  SweepSpec s;
  s.product = {Dim("a", std::vector<std::string>(1000, "0.001")),
               Dim("b", std::vector<std::string>(100, "256"))};
  std::vector<SweepPoint> pts;
  ASSERT_TRUE(ExpandSweep(s, kMaxSweepPoints, &pts).ok());
  EXPECT_EQ(pts.size(), kMaxSweepPoints);
}

TEST(SweepTest, FormatNumberIsShortestExact) {
  EXPECT_EQ(FormatNumber(0.1), "0.1");
  EXPECT_EQ(FormatNumber(3), "3");
  EXPECT_EQ(FormatNumber(1e-5), "1e-05");
  EXPECT_EQ(FormatNumber(0.30000000000000004), "0.30000000000000004");
}

}  // namespace
}  // namespace dist_train
