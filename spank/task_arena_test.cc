// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "task_arena.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace dist_train {
namespace {

constexpr size_t kAlign = alignof(std::max_align_t);

class TaskArenaTest : public ::testing::Test {
 protected:
  alignas(64) char storage_[1024] = {};
  TaskArena arena_{storage_, sizeof(storage_)};
};

TEST_F(TaskArenaTest, OffItServesNothing) {
  EXPECT_EQ(arena_.Allocate(16), nullptr);
  arena_.On();
  arena_.Off();
  EXPECT_EQ(arena_.Allocate(16), nullptr);
  EXPECT_EQ(arena_.used(), 0u);
}

TEST_F(TaskArenaTest, BlocksAreAlignedInsideAndApart) {
  arena_.On();
  const size_t sizes[] = {1, 3, 17, 0, 64};
  char* blocks[5];
  for (int i = 0; i < 5; ++i) {
    blocks[i] = static_cast<char*>(arena_.Allocate(sizes[i]));
    ASSERT_NE(blocks[i], nullptr) << i;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(blocks[i]) % kAlign, 0u) << i;
    EXPECT_TRUE(arena_.Owns(blocks[i]));
    memset(blocks[i], 'a' + i, sizes[i]);
  }
  for (int i = 0; i + 1 < 5; ++i)  // each ends before the next begins
    EXPECT_LE(blocks[i] + sizes[i], blocks[i + 1]) << i;
  EXPECT_NE(blocks[3], blocks[4]);  // a 0-byte block is a block too
  for (int i = 0; i < 5; ++i) {
    for (size_t b = 0; b < sizes[i]; ++b)
      ASSERT_EQ(blocks[i][b], 'a' + i) << i << " byte " << b;
  }
  EXPECT_EQ(arena_.live(), 5u);
}

TEST_F(TaskArenaTest, ReleasingTheNewestBlockTakesItBack) {
  arena_.On();
  void* a = arena_.Allocate(32);
  void* b = arena_.Allocate(100);
  EXPECT_TRUE(arena_.Release(b));
  EXPECT_EQ(arena_.used(), 32u);
  EXPECT_EQ(arena_.Allocate(48), b);  // the same bytes again
  EXPECT_EQ(arena_.live(), 2u);
  EXPECT_TRUE(arena_.Owns(a));
}

TEST_F(TaskArenaTest, AnOlderBlockStaysUsedUntilTheLastIsReleased) {
  arena_.On();
  void* a = arena_.Allocate(32);
  void* b = arena_.Allocate(32);
  void* c = arena_.Allocate(32);
  EXPECT_TRUE(arena_.Release(a));
  EXPECT_EQ(arena_.used(), 96u);
  EXPECT_TRUE(arena_.Release(c));  // the newest: taken back
  EXPECT_EQ(arena_.used(), 64u);
  EXPECT_TRUE(arena_.Release(b));  // none live: empty again
  EXPECT_EQ(arena_.used(), 0u);
  EXPECT_EQ(arena_.live(), 0u);
  EXPECT_EQ(arena_.Allocate(8), storage_);
}

TEST_F(TaskArenaTest, WhatDoesNotFitIsLeftToMalloc) {
  arena_.On();
  void* big = arena_.Allocate(1000);
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(arena_.Allocate(32), nullptr);  // 1008 used of 1024
  EXPECT_NE(arena_.Allocate(16), nullptr);
  EXPECT_EQ(arena_.Allocate(1), nullptr);
  EXPECT_EQ(arena_.Allocate(SIZE_MAX), nullptr);
  EXPECT_EQ(arena_.Allocate(SIZE_MAX - 7), nullptr);  // no wrap-around
  EXPECT_EQ(arena_.live(), 2u);
}

TEST_F(TaskArenaTest, BlocksOutliveOffAndOnlyItsOwnAreReleased) {
  arena_.On();
  char* a = static_cast<char*>(arena_.Allocate(8));
  arena_.Off();
  strcpy(a, "kept");
  EXPECT_STREQ(a, "kept");
  void* foreign = malloc(8);
  EXPECT_FALSE(arena_.Release(foreign));
  free(foreign);
  EXPECT_FALSE(arena_.Release(storage_ + sizeof(storage_)));  // one past
  EXPECT_TRUE(arena_.Release(a));
  EXPECT_EQ(arena_.live(), 0u);
  EXPECT_TRUE(arena_.Release(a));  // a stray second release changes nothing
  EXPECT_EQ(arena_.live(), 0u);
  EXPECT_EQ(arena_.used(), 0u);
}

TEST(TaskArenaScopeTest, TurnsThePluginsArenaOnForTheScope) {
  TaskArena& arena = PluginTaskArena();
  EXPECT_FALSE(arena.on());
  EXPECT_EQ(arena.Allocate(8), nullptr);
  {
    TaskArenaScope scope;
    EXPECT_TRUE(arena.on());
    void* p = arena.Allocate(8);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(arena.Release(p));
  }
  EXPECT_FALSE(arena.on());
}

}  // namespace
}  // namespace dist_train
