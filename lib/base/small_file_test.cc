// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "base/small_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>

#include "testing/testing_files.h"

namespace dist_train {
namespace {

std::string WriteFile(const testing_files::TempDir& dir, const char* name,
                      const std::string& text) {
  std::string path = dir.path() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(SmallFileTest, ReadsTheWholeFileNulTerminated) {
  testing_files::TempDir dir;
  std::string path = WriteFile(dir, "state", "4: ACTIVE\nsecond line\n");
  char buf[64];
  memset(buf, 'x', sizeof(buf));
  EXPECT_EQ(ReadSmallFile(path.c_str(), buf, sizeof(buf)), 22);
  EXPECT_STREQ(buf, "4: ACTIVE\nsecond line\n");
}

TEST(SmallFileTest, CutsAtTheBufferLeavingRoomForTheNul) {
  testing_files::TempDir dir;
  std::string path = WriteFile(dir, "long", "0123456789");
  char buf[5];
  EXPECT_EQ(ReadSmallFile(path.c_str(), buf, sizeof(buf)), 4);
  EXPECT_STREQ(buf, "0123");
}

TEST(SmallFileTest, EmptyFileIsZeroMissingFileIsMinusOne) {
  testing_files::TempDir dir;
  std::string path = WriteFile(dir, "empty", "");
  char buf[8] = "old";
  EXPECT_EQ(ReadSmallFile(path.c_str(), buf, sizeof(buf)), 0);
  EXPECT_STREQ(buf, "");
  EXPECT_EQ(ReadSmallFile((dir.path() + "/none").c_str(), buf, sizeof(buf)),
            -1);
}

// /proc files report size 0 and come in pieces: read until the end.
TEST(SmallFileTest, ReadsProcFilesWhoseSizeIsZero) {
  char buf[4096];
  ssize_t n = ReadSmallFile("/proc/self/status", buf, sizeof(buf));
  ASSERT_GT(n, 0);
  EXPECT_EQ(static_cast<size_t>(n), strlen(buf));
  std::string text(buf);
  EXPECT_NE(text.find("Pid:\t" + std::to_string(getpid()) + "\n"),
            std::string::npos);
}

}  // namespace
}  // namespace dist_train
