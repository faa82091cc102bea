// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The C API's checkpoint files: begin / write / commit across forked
// ranks, a failing rank, and files planted by someone else.

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "dist_train/dist_train.h"
#include "dist_train/preemption.h"
#include "testing/testing_env.h"
#include "testing/testing_ranks.h"

namespace dist_train {
namespace {

using namespace testing_ranks;  // NOLINT: test helpers
using testing_env::ExportOptions;
using testing_env::ScopedEnv;

class CApiCheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/dt-capi-ckpt.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    EXPECT_EQ(std::system(("rm -rf " + dir_).c_str()), 0);
  }

  // What this rank's file of the latest complete step holds, or the error.
  std::string Latest(int rank, uint64_t* step) {
    return LatestIn(dir_, rank, step);
  }
  static std::string LatestIn(const std::string& dir, int rank,
                              uint64_t* step) {
    int fd = -1;
    if (dt_checkpoint_open_latest(dir.c_str(), rank, step, &fd) != DT_OK)
      return std::string("error: ") + dt_last_error();
    std::string text;
    char buf[256];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0) text.append(buf, n);
    int flags = fcntl(fd, F_GETFD);
    close(fd);
    return (flags & FD_CLOEXEC) ? text : "error: not close-on-exec";
  }

  std::string dir_;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Names in `dir` that start with a dot (temp files), sorted.
std::vector<std::string> Hidden(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name[0] == '.' && name != "." && name != "..") names.push_back(name);
    }
    closedir(d);
  }
  return names;
}

bool WriteFile(const char* path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);  // as torch.save opens it
  out << text;
  return static_cast<bool>(out.flush());
}

// One rank's save of `step`: begin, write by path, commit.
int Save(dt_comm* c, const std::string& dir, uint64_t step) {
  const int r = dt_comm_rank(c);
  dt_checkpoint* ck = nullptr;
  CHILD_CHECK(dt_checkpoint_begin(dir.c_str(), step, r, &ck) == DT_OK, "%s",
              dt_last_error());
  const std::string path = dt_checkpoint_path(ck);
  // The path is the step's as begin made it: dir without a trailing slash.
  const std::string top = dir.substr(0, dir.find_last_not_of('/') + 1);
  const std::string prefix = top + "/step-" + std::to_string(step) + "/.rank-" +
                             std::to_string(r) + ".bin.tmp.";
  struct stat st {};
  CHILD_CHECK(path.compare(0, prefix.size(), prefix) == 0 &&
                  path.size() == prefix.size() + 16,
              "temp path %s", path.c_str());
  CHILD_CHECK(lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
                  (st.st_mode & 07777) == 0600 && st.st_size == 0,
              "temp file mode %o size %ld", st.st_mode, long(st.st_size));
  CHILD_CHECK(WriteFile(path.c_str(), "rank " + std::to_string(r) + " step " +
                                          std::to_string(step)),
              "write");
  int rc = dt_checkpoint_commit(ck, c);
  CHILD_CHECK(rc == DT_OK, "commit: %s", dt_last_error());
  dt_checkpoint_free(ck);
  return 0;
}

TEST_F(CApiCheckpointTest, EveryRankCommitsThenEachOpensItsOwnFile) {
  const std::string dir = dir_ + "/ckpt/";  // made, trailing slash and all
  auto fn = [dir](const Options& o) {
    ScopedEnv env;
    ExportOptions(o, &env);
    dt_comm* c = nullptr;
    CHILD_CHECK(dt_comm_create(&c) == DT_OK, "%s", dt_last_error());
    int failed = Save(c, dir, 4);
    if (!failed) failed = Save(c, dir, 5);
    dt_comm_destroy(c);
    return failed;
  };
  ASSERT_EQ(RunRanks(3, Base(3, FreePort()), fn), std::vector<int>(3, 0));
  const std::string top = dir_ + "/ckpt";
  EXPECT_EQ(Slurp(top + "/LATEST"), "5\n");
  for (int r = 0; r < 3; ++r) {
    uint64_t step = 0;
    EXPECT_EQ(LatestIn(top, r, &step), "rank " + std::to_string(r) + " step 5");
    EXPECT_EQ(step, 5u);
    struct stat st {};
    const std::string file = top + "/step-5/rank-" + std::to_string(r) + ".bin";
    ASSERT_EQ(stat(file.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u);
  }
  struct stat st {};
  ASSERT_EQ(stat((top + "/step-5").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(Hidden(top + "/step-5"), std::vector<std::string>{});
  EXPECT_EQ(Hidden(top), std::vector<std::string>{});
}

TEST_F(CApiCheckpointTest, ARankThatFailsLeavesTheStepUnmarked) {
  const std::string dir = dir_;
  auto fn = [dir](const Options& o) {
    ScopedEnv env;
    ExportOptions(o, &env);
    dt_comm* c = nullptr;
    CHILD_CHECK(dt_comm_create(&c) == DT_OK, "%s", dt_last_error());
    CHILD_CHECK(Save(c, dir, 6) == 0, "step 6");
    dt_checkpoint* ck = nullptr;
    CHILD_CHECK(dt_checkpoint_begin(dir.c_str(), 7, o.rank, &ck) == DT_OK, "%s",
                dt_last_error());
    // Rank 1's temp file is gone before it is finished.
    if (o.rank == 1) unlink(dt_checkpoint_path(ck));
    const int rc = dt_checkpoint_commit(ck, c);
    const std::string error = dt_last_error();
    const std::string path = dt_checkpoint_path(ck);
    dt_checkpoint_free(ck);
    dt_comm_destroy(c);
    if (o.rank == 1) {
      CHILD_CHECK(rc == DT_NOT_FOUND && error == path + ": does not exist",
                  "rank 1: %d %s", rc, error.c_str());
    } else {
      CHILD_CHECK(rc == DT_UNAVAILABLE &&
                      error ==
                          "checkpoint of step 7 failed on another rank; not "
                          "marked complete",
                  "rank %d: %d %s", o.rank, rc, error.c_str());
    }
    return 0;
  };
  ASSERT_EQ(RunRanks(3, Base(3, FreePort()), fn), std::vector<int>(3, 0));
  EXPECT_EQ(Slurp(dir_ + "/LATEST"), "6\n");
  uint64_t step = 0;
  EXPECT_EQ(Latest(2, &step), "rank 2 step 6");
  EXPECT_EQ(step, 6u);
  // The ranks that did finish step 7 keep their files; nothing is left
  // half-written.
  EXPECT_EQ(Slurp(dir_ + "/step-7/rank-0.bin"), "");
  EXPECT_EQ(Hidden(dir_ + "/step-7"), std::vector<std::string>{});
}

// The torch.distributed way: each rank finishes, then rank 0 marks.
TEST_F(CApiCheckpointTest, FinishThenMarkCompleteWithoutTheCommunicator) {
  for (int r = 0; r < 2; ++r) {
    dt_checkpoint* ck = nullptr;
    ASSERT_EQ(dt_checkpoint_begin(dir_.c_str(), 9, r, &ck), DT_OK)
        << dt_last_error();
    ASSERT_TRUE(WriteFile(dt_checkpoint_path(ck), "r" + std::to_string(r)));
    ASSERT_EQ(dt_checkpoint_finish(ck), DT_OK) << dt_last_error();
    EXPECT_EQ(dt_checkpoint_finish(ck), DT_OK) << "again: a no-op";
    dt_checkpoint_free(ck);
  }
  uint64_t step = 0;
  EXPECT_EQ(Latest(0, &step), "error: " + dir_ + ": no complete checkpoint");
  EXPECT_EQ(dt_checkpoint_mark_complete(dir_.c_str(), 10), DT_NOT_FOUND);
  EXPECT_STREQ(dt_last_error(), (dir_ + "/step-10: does not exist").c_str());
  ASSERT_EQ(dt_checkpoint_mark_complete(dir_.c_str(), 9), DT_OK)
      << dt_last_error();
  EXPECT_EQ(Latest(1, &step), "r1");
  EXPECT_EQ(step, 9u);
  EXPECT_EQ(Latest(2, &step),
            "error: " + dir_ + "/step-9/rank-2.bin: does not exist, but " +
                dir_ +
                "/LATEST marks step 9 complete (did the job come back with "
                "another number of ranks?)");
}

TEST_F(CApiCheckpointTest, FreeRemovesAnUnfinishedTempFile) {
  dt_checkpoint* ck = nullptr;
  ASSERT_EQ(dt_checkpoint_begin(dir_.c_str(), 1, 0, &ck), DT_OK)
      << dt_last_error();
  EXPECT_EQ(Hidden(dir_ + "/step-1").size(), 1u);
  dt_checkpoint_free(ck);
  EXPECT_EQ(Hidden(dir_ + "/step-1"), std::vector<std::string>{});
  dt_checkpoint_free(nullptr);
}

TEST_F(CApiCheckpointTest, OpenLatestRefusesASymlinkedRankFile) {
  ASSERT_EQ(mkdir((dir_ + "/step-3").c_str(), 0700), 0);
  ASSERT_TRUE(WriteFile((dir_ + "/secret").c_str(), "not a checkpoint"));
  ASSERT_EQ(symlink((dir_ + "/secret").c_str(),
                    (dir_ + "/step-3/rank-0.bin").c_str()),
            0);
  ASSERT_EQ(dt_checkpoint_mark_complete(dir_.c_str(), 3), DT_OK)
      << dt_last_error();
  uint64_t step = 0;
  int fd = 12345;
  EXPECT_EQ(dt_checkpoint_open_latest(dir_.c_str(), 0, &step, &fd),
            DT_PERMISSION_DENIED);
  EXPECT_STREQ(
      dt_last_error(),
      (dir_ + "/step-3/rank-0.bin: is a symbolic link; not following it")
          .c_str());
  EXPECT_EQ(fd, 12345);
}

TEST_F(CApiCheckpointTest, FinishDoesNotWriteThroughAPlantedSymlink) {
  dt_checkpoint* ck = nullptr;
  ASSERT_EQ(dt_checkpoint_begin(dir_.c_str(), 2, 0, &ck), DT_OK)
      << dt_last_error();
  const std::string path = dt_checkpoint_path(ck);
  ASSERT_TRUE(WriteFile((dir_ + "/elsewhere").c_str(), "theirs"));
  ASSERT_EQ(unlink(path.c_str()), 0);
  ASSERT_EQ(symlink((dir_ + "/elsewhere").c_str(), path.c_str()), 0);
  EXPECT_EQ(dt_checkpoint_finish(ck), DT_PERMISSION_DENIED);
  EXPECT_STREQ(dt_last_error(),
               (path + ": is a symbolic link; not following it").c_str());
  dt_checkpoint_free(ck);
  struct stat st {};
  EXPECT_NE(lstat((dir_ + "/step-2/rank-0.bin").c_str(), &st), 0);
  EXPECT_EQ(Slurp(dir_ + "/elsewhere"), "theirs");
}

TEST_F(CApiCheckpointTest, DirectoriesThatAreNotSafeAreRefused) {
  dt_checkpoint* ck = nullptr;
  ASSERT_EQ(chmod(dir_.c_str(), 0777), 0);
  EXPECT_EQ(dt_checkpoint_begin(dir_.c_str(), 1, 0, &ck), DT_PERMISSION_DENIED);
  EXPECT_STREQ(dt_last_error(),
               (dir_ + ": writable by other users (mode 0777, no sticky bit); "
                       "refusing it for checkpoints")
                   .c_str());
  EXPECT_EQ(ck, nullptr);
  ASSERT_EQ(chmod(dir_.c_str(), 0700), 0);
  ASSERT_EQ(symlink(dir_.c_str(), (dir_ + "/link").c_str()), 0);
  EXPECT_EQ(dt_checkpoint_begin((dir_ + "/link").c_str(), 1, 0, &ck),
            DT_PERMISSION_DENIED);
  EXPECT_STREQ(dt_last_error(),
               (dir_ + "/link: is a symbolic link; not following it").c_str());
}

TEST_F(CApiCheckpointTest, NoCompleteStepIsNotFound) {
  uint64_t step = 0;
  EXPECT_EQ(Latest(0, &step), "error: " + dir_ + ": no complete checkpoint");
  const std::string missing = dir_ + "/none";
  int fd = -1;
  EXPECT_EQ(dt_checkpoint_open_latest(missing.c_str(), 0, &step, &fd),
            DT_NOT_FOUND);
  EXPECT_STREQ(dt_last_error(), (missing + ": no complete checkpoint").c_str());
}

TEST_F(CApiCheckpointTest, BadArgumentsAreNamed) {
  dt_checkpoint* ck = nullptr;
  uint64_t step = 0;
  int fd = -1;
  struct Case {
    int rc;
    const char* error;
  };
  for (const Case& c : {
           Case{dt_checkpoint_begin(nullptr, 1, 0, &ck),
                "dt_checkpoint_begin: dir is NULL"},
           Case{dt_checkpoint_begin("", 1, 0, &ck),
                "dt_checkpoint_begin: dir is empty"},
           Case{dt_checkpoint_begin(dir_.c_str(), 1, -1, &ck),
                "dt_checkpoint_begin: rank -1 is negative"},
           Case{dt_checkpoint_begin(dir_.c_str(), 1, 0, nullptr),
                "dt_checkpoint_begin: out is NULL"},
           Case{dt_checkpoint_finish(nullptr),
                "dt_checkpoint_finish: ck is NULL"},
           Case{dt_checkpoint_commit(nullptr, nullptr),
                "dt_checkpoint_commit: ck is NULL"},
           Case{dt_checkpoint_mark_complete(nullptr, 1),
                "dt_checkpoint_mark_complete: dir is NULL"},
           Case{dt_checkpoint_open_latest(dir_.c_str(), 0, nullptr, &fd),
                "dt_checkpoint_open_latest: step is NULL"},
           Case{dt_checkpoint_open_latest(dir_.c_str(), 0, &step, nullptr),
                "dt_checkpoint_open_latest: fd is NULL"},
       }) {
    EXPECT_EQ(c.rc, DT_INVALID_ARGUMENT) << c.error;
  }
  // Each message, in order: the last call's is the last failure's.
  EXPECT_STREQ(dt_last_error(), "dt_checkpoint_open_latest: fd is NULL");
  EXPECT_EQ(dt_checkpoint_begin("", 1, 0, &ck), DT_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_last_error(), "dt_checkpoint_begin: dir is empty");
  EXPECT_EQ(dt_checkpoint_begin(dir_.c_str(), 1, -1, &ck), DT_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_last_error(), "dt_checkpoint_begin: rank -1 is negative");
  EXPECT_STREQ(dt_checkpoint_path(nullptr), "");
}

// Both formats share LATEST: a C++ SaveCheckpoint of a later step is the
// latest for both, and the C API then names the missing .bin file.
TEST_F(CApiCheckpointTest, SharesLatestWithTheCppFormat) {
  dt_checkpoint* ck = nullptr;
  ASSERT_EQ(dt_checkpoint_begin(dir_.c_str(), 1, 0, &ck), DT_OK);
  ASSERT_EQ(dt_checkpoint_finish(ck), DT_OK);
  dt_checkpoint_free(ck);
  ASSERT_EQ(dt_checkpoint_mark_complete(dir_.c_str(), 1), DT_OK);
  auto fn = [this](const Options& o) {
    std::unique_ptr<Communicator> c;
    CHILD_CHECK(Communicator::Create(o, &c).ok(), "create");
    Status s = SaveCheckpoint(c.get(), dir_, 2, "cpp");
    CHILD_CHECK(s.ok(), "%s", s.ToString().c_str());
    return 0;
  };
  ASSERT_EQ(RunRanks(1, Base(1, FreePort()), fn), std::vector<int>{0});
  uint64_t step = 0;
  std::string data;
  ASSERT_TRUE(LoadLatestCheckpoint(dir_, 0, &step, &data).ok());
  EXPECT_EQ(data, "cpp");
  EXPECT_EQ(Latest(0, &step).rfind(
                "error: " + dir_ + "/step-2/rank-0.bin: does not exist", 0),
            0u);
}

}  // namespace
}  // namespace dist_train
