// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "base/output_drain.h"

#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"

namespace dist_train {

bool WaitUntilOutputRead(int fd, double seconds) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) return true;
  const double end = MonotonicSeconds() + seconds;
  for (;;) {
    int unread = 0;
    // FIONREAD on either end of a pipe: the bytes in it.
    if (ioctl(fd, FIONREAD, &unread) != 0 || unread == 0) return true;
    if (MonotonicSeconds() >= end) return false;
    usleep(2000);
  }
}

}  // namespace dist_train
