// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "jobgen/input_file.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

namespace dist_train {
namespace {

std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(InputFileTest, ReadsAFileUpToTheCapExactly) {
  std::string path = WriteTemp("input_file_cap.yaml", std::string(10, 'x'));
  std::string text;
  ASSERT_TRUE(ReadInputFile(path, 10, &text).ok());
  EXPECT_EQ(text, std::string(10, 'x'));
  ASSERT_TRUE(ReadInputFile(path, kMaxInputBytes, &text).ok());
  std::remove(path.c_str());
}

TEST(InputFileTest, RefusesMoreThanTheCapNamingFileAndCap) {
  std::string path = WriteTemp("input_file_big.yaml", std::string(11, 'x'));
  std::string text = "untouched";
  Status st = ReadInputFile(path, 10, &text);
  EXPECT_EQ(st.message(),
            path + ": larger than the 10-byte limit for a gen-sbatch input");
  EXPECT_EQ(text, "untouched");
  std::remove(path.c_str());
}

TEST(InputFileTest, AnEndlessDeviceStopsAtTheCap) {
  std::string text;
  EXPECT_EQ(ReadInputFile("/dev/zero", kMaxInputBytes, &text).message(),
            "/dev/zero: larger than the 1048576-byte limit for a gen-sbatch "
            "input");
}

TEST(InputFileTest, MissingFilesAndDirectoriesCannotBeRead) {
  std::string text;
  Status st = ReadInputFile("/nonexistent/x.yaml", 10, &text);
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_EQ(st.message(), "/nonexistent/x.yaml: cannot read the file");
  EXPECT_EQ(ReadInputFile("/", 10, &text).message(), "/: cannot read the file");
}

}  // namespace
}  // namespace dist_train
