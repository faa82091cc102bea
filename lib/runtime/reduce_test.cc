// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/reduce.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace dist_train {
namespace {

TEST(ReduceTest, EveryOpOnInts) {
  std::vector<int64_t> a = {1, -5, 7}, b = {3, 2, -9};
  auto r = a;
  ReduceInto(r.data(), b.data(), 3, DataType::kInt64, ReduceOp::kSum);
  EXPECT_EQ(r, (std::vector<int64_t>{4, -3, -2}));
  r = a;
  ReduceInto(r.data(), b.data(), 3, DataType::kInt64, ReduceOp::kMin);
  EXPECT_EQ(r, (std::vector<int64_t>{1, -5, -9}));
  r = a;
  ReduceInto(r.data(), b.data(), 3, DataType::kInt64, ReduceOp::kMax);
  EXPECT_EQ(r, (std::vector<int64_t>{3, 2, 7}));
  DivideBy(r.data(), 3, DataType::kInt64, 2);
  EXPECT_EQ(r, (std::vector<int64_t>{1, 1, 3}));
}

TEST(ReduceTest, HalfAndBf16RoundTripExactValues) {
  for (float f :
       {0.0f, 1.0f, -2.5f, 0.000061035156f, 65504.0f, 1025.0f, 3.140625f}) {
    EXPECT_EQ(HalfToFloat(FloatToHalf(f)), f) << f;
  }
  for (float f : {0.0f, 1.0f, -2.5f, 3.140625f, 1e30f, -1e-30f}) {
    EXPECT_NEAR(Bf16ToFloat(FloatToBf16(f)), f, std::fabs(f) / 128) << f;
  }
  EXPECT_EQ(FloatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(FloatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalf(1e6f), 0x7c00) << "overflow is infinity";
  EXPECT_TRUE(std::isinf(HalfToFloat(0x7c00)));
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24)) << "smallest subnormal";
}

TEST(ReduceTest, PackedTypesReduceInFloat) {
  std::vector<uint16_t> a = {FloatToHalf(1.5f), FloatToHalf(-2)},
                        b = {FloatToHalf(2.25f), FloatToHalf(8)};
  ReduceInto(a.data(), b.data(), 2, DataType::kFloat16, ReduceOp::kSum);
  EXPECT_EQ(HalfToFloat(a[0]), 3.75f);
  EXPECT_EQ(HalfToFloat(a[1]), 6.0f);
  std::vector<uint16_t> c = {FloatToBf16(4)}, d = {FloatToBf16(-1)};
  ReduceInto(c.data(), d.data(), 1, DataType::kBFloat16, ReduceOp::kMin);
  EXPECT_EQ(Bf16ToFloat(c[0]), -1.0f);
}

}  // namespace
}  // namespace dist_train
