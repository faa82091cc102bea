// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "relay/proctrack.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "testing/testing_files.h"

namespace dist_train {
namespace {

TEST(ProctrackTest, DetectsProctrackFromTheTaskCgroup) {
  // proctrack/cgroup, cgroup v1 (the local cluster's nodes)
  EXPECT_EQ(DetectProctrack("12:memory:/user.slice\n"
                            "5:freezer:/slurm_node1/uid_1001/job_17/step_0\n"
                            "0::/user.slice/session-3.scope\n"),
            Proctrack::kCgroup);
  // cgroup v2 (one hierarchy)
  EXPECT_EQ(DetectProctrack("0::/system.slice/slurmstepd.scope/job_9/step_2/"
                            "user/task_0\n"),
            Proctrack::kCgroup);
  // task/cgroup's cpuset under pgid: not the freezer
  EXPECT_EQ(DetectProctrack("7:cpuset:/slurm/uid_5/job_3/step_0\n"
                            "5:freezer:/\n"),
            Proctrack::kPgid);
  EXPECT_EQ(DetectProctrack("0::/user.slice/user-0.slice/session-1.scope\n"),
            Proctrack::kPgid);
  EXPECT_EQ(DetectProctrack(""), Proctrack::kPgid);
}

// The whole file, over several reads: the step's line comes after 8 KiB.
TEST(ProctrackTest, ResolvesAutoFromTheWholeCgroupFile) {
  testing_files::TempDir dir;
  std::string path = dir.path() + "/cgroup";
  std::string text;
  for (int i = 0; text.size() < 8192; ++i)
    text += std::to_string(i % 12 + 1) + ":memory:/user.slice/padding\n";
  text += "5:freezer:/slurm_node1/uid_1001/job_17/step_0\n";
  ASSERT_TRUE(std::ofstream(path) << text);
  EXPECT_EQ(ResolveProctrack(Proctrack::kAuto, path.c_str()),
            Proctrack::kCgroup);
  EXPECT_EQ(ResolveProctrack(Proctrack::kAuto, (path + ".none").c_str()),
            Proctrack::kPgid);
  EXPECT_EQ(ResolveProctrack(Proctrack::kLinuxproc, path.c_str()),
            Proctrack::kLinuxproc);
}

// The first read takes 4 KiB; a file that fills it is read again whole:
// the step's line is found when it ends just before, at or after that mark.
TEST(ProctrackTest, ResolvesAutoAcrossTheFirstBufferSize) {
  testing_files::TempDir dir;
  const std::string step_line =
      "5:freezer:/slurm_node1/uid_1001/job_17/step_0\n";
  for (size_t size : {100u, 4094u, 4095u, 4096u, 4097u, 4200u}) {
    std::string path = dir.path() + "/cgroup" + std::to_string(size);
    std::string pad = "1:memory:/user.slice/";
    pad += std::string(size - step_line.size() - pad.size() - 1, 'p') + "\n";
    ASSERT_EQ(pad.size() + step_line.size(), size);
    ASSERT_TRUE(std::ofstream(path) << pad << step_line);
    EXPECT_EQ(ResolveProctrack(Proctrack::kAuto, path.c_str()),
              Proctrack::kCgroup)
        << size << " bytes";
  }
}

TEST(ProctrackTest, PlugstackWordsAndTheirNames) {
  for (Proctrack p : {Proctrack::kAuto, Proctrack::kCgroup, Proctrack::kPgid,
                      Proctrack::kLinuxproc}) {
    Proctrack back = Proctrack::kAuto;
    ASSERT_TRUE(ParseProctrack(ProctrackName(p), &back)) << ProctrackName(p);
    EXPECT_EQ(back, p);
  }
  Proctrack p = Proctrack::kPgid;
  EXPECT_FALSE(ParseProctrack("cgroups", &p));
  EXPECT_FALSE(ParseProctrack("", &p));
  EXPECT_EQ(p, Proctrack::kPgid);  // untouched
}

}  // namespace
}  // namespace dist_train
