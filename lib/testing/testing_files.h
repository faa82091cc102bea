// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// A fresh directory under /tmp for one test, mode 0755 (so root-only file
// checks pass on it), removed with everything in it afterwards.

#ifndef DIST_TRAIN_LIB_TESTING_TESTING_FILES_H_
#define DIST_TRAIN_LIB_TESTING_TESTING_FILES_H_

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <string>

namespace dist_train {
namespace testing_files {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/dt-test.XXXXXX";
    path_ = mkdtemp(tmpl);
    chmod(path_.c_str(), 0755);
  }
  ~TempDir() {
    std::string cmd = "rm -rf '" + path_ + "'";
    if (system(cmd.c_str()) != 0) ADD_FAILURE() << cmd;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace testing_files
}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_TESTING_TESTING_FILES_H_
