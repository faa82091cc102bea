// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "base/output_drain.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

#include "base/clock.h"

namespace dist_train {
namespace {

TEST(OutputDrainTest, NotAPipeIsDrainedAtOnce) {
  int fd = open("/dev/null", O_WRONLY);
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(WaitUntilOutputRead(fd, 5));
  close(fd);
}

TEST(OutputDrainTest, BytesNobodyReadsWaitOutTheBound) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  ASSERT_EQ(write(p[1], "report\n", 7), 7);
  double t0 = MonotonicSeconds();
  EXPECT_FALSE(WaitUntilOutputRead(p[1], 0.1));
  EXPECT_GE(MonotonicSeconds() - t0, 0.1);
  close(p[0]);
  close(p[1]);
}

TEST(OutputDrainTest, ReturnsOnceTheReaderTookEverything) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  ASSERT_EQ(write(p[1], "report\n", 7), 7);
  std::thread reader([&] {
    usleep(50 * 1000);
    char buf[16];
    EXPECT_EQ(read(p[0], buf, sizeof(buf)), 7);
  });
  EXPECT_TRUE(WaitUntilOutputRead(p[1], 10));
  reader.join();
  close(p[0]);
  close(p[1]);
}

}  // namespace
}  // namespace dist_train
