// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "base/slurm_compat.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

namespace dist_train {
namespace {

TEST(SlurmCompatTest, ReleaseOfDecodesVersionNumbers) {
  EXPECT_EQ(SlurmReleaseOf(0x160508), "22.05");
  EXPECT_EQ(SlurmReleaseOf(0x180b05), "24.11");
  EXPECT_EQ(SlurmReleaseOf(0x1a0505), "26.05");
}

// configure decodes SLURM_VERSION_NUMBER with sed and printf; the library
// with shifts: both must name the release the build is for.
TEST(SlurmCompatTest, BuildVersionIsWhatConfigureFound) {
  EXPECT_EQ(SlurmBuildVersion(), DT_SLURM_VERSION);
}

// libslurm fatal()s (exits the program) without a configuration: the check
// before slurm_init must turn that into an error. In a child, as the result
// is per process.
TEST(SlurmCompatTest, InitWithoutConfigurationIsAnErrorNotAnExit) {
  EXPECT_EXIT(
      {
        setenv("SLURM_CONF", "/nonexistent/slurm.conf", 1);
        Status s = SlurmInitOnce();
        Status again = SlurmInitOnce();
        fprintf(stderr, "%s|%s", s.message().c_str(), again.message().c_str());
        exit(s.ok() ? 1 : 3);
      },
      testing::ExitedWithCode(3),
      "SLURM_CONF='/nonexistent/slurm.conf' cannot be read\\|"
      "SLURM_CONF='/nonexistent/slurm.conf' cannot be read");
}

}  // namespace
}  // namespace dist_train
