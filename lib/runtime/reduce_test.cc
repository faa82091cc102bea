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

// ReduceTo(out, a, b) is ReduceInto(a copy of a, b), bit for bit, for
// every type and op, and keeps the order: a is the left operand (min of
// +0 and -0 is the left one, as in ReduceInto).
TEST(ReduceTest, ReduceToIsReduceIntoACopy) {
  std::vector<float> a = {0.0f, -0.0f, 1.5f, -3.0f, 7.25f},
                     b = {-0.0f, 0.0f, 2.5f, -4.0f, 1e-3f};
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax}) {
    std::vector<float> into = a, to(a.size(), 42.0f);
    ReduceInto(into.data(), b.data(), a.size(), DataType::kFloat32, op);
    ReduceTo(to.data(), a.data(), b.data(), a.size(), DataType::kFloat32, op);
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(std::signbit(to[i]), std::signbit(into[i])) << i;
      EXPECT_EQ(to[i], into[i]) << i;
    }
  }
  std::vector<float> to(2);
  ReduceTo(to.data(), a.data(), b.data(), 2, DataType::kFloat32,
           ReduceOp::kMin);
  EXPECT_FALSE(std::signbit(to[0])) << "min(+0, -0) is the left operand";
  EXPECT_TRUE(std::signbit(to[1])) << "min(-0, +0) is the left operand";
  std::vector<uint16_t> h = {FloatToHalf(1.5f)}, g = {FloatToHalf(2.25f)},
                        out = {0};
  ReduceTo(out.data(), h.data(), g.data(), 1, DataType::kFloat16,
           ReduceOp::kSum);
  EXPECT_EQ(HalfToFloat(out[0]), 3.75f);
  std::vector<int32_t> i = {5, -1}, j = {-7, 3}, k = {0, 0};
  ReduceTo(k.data(), i.data(), j.data(), 2, DataType::kInt32, ReduceOp::kMax);
  EXPECT_EQ(k, (std::vector<int32_t>{5, 3}));
}

}  // namespace
}  // namespace dist_train
