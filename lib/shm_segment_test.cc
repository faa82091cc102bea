// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "shm_segment.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstring>

namespace dist_train {
namespace {

TEST(ShmSegmentTest, OthersMapWhatTheLeaderMadeAndNothingIsLeft) {
  ShmSegment made, mapped, wrong;
  std::string name;
  ASSERT_TRUE(made.Create(3, 4096, &name).ok());
  EXPECT_EQ(name.size(), 20u);  // "/dt-" + 16 hex digits
  EXPECT_NE(name, ShmSegment::RandomName());
  ASSERT_TRUE(mapped.Open(name, 3, 4096).ok());
  std::memcpy(made.slot(1, 2), "hello", 6);
  EXPECT_STREQ(mapped.slot(1, 2), "hello");
  made.wake()->store(7);
  EXPECT_EQ(mapped.wake()->load(), 7u);
  // a segment of another size is not taken for ours
  EXPECT_EQ(wrong.Open(name, 4, 4096).code(), Status::Code::kPermissionDenied);
  made.Unlink();
  EXPECT_EQ(wrong.Open(name, 3, 4096).code(), Status::Code::kIOError);
  // a name that exists is never reused
  ShmSegment again, twice;
  ASSERT_TRUE(again.CreateNamed(name + ".0", 2, 4096).ok());
  EXPECT_FALSE(twice.CreateNamed(name + ".0", 2, 4096).ok());
  again.Unlink();
}

}  // namespace
}  // namespace dist_train
