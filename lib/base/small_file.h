// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Reading a small file with open/read/close only: async-signal-safe, no
// allocation, no stream (the first ifstream in a process forked from
// slurmstepd builds libstdc++'s whole classic locale, ~30 copy-on-write
// faults). The relay reads /proc with it after its fork; ResolveProctrack
// in every task; the RDMA check reads sysfs with it in the plugin.

#ifndef DIST_TRAIN_LIB_BASE_SMALL_FILE_H_
#define DIST_TRAIN_LIB_BASE_SMALL_FILE_H_

#include <sys/types.h>

#include <cstddef>

namespace dist_train {

// Reads up to cap-1 bytes of `path` into `buf`, NUL-terminated; returns the
// length, or -1 if it cannot be opened.
ssize_t ReadSmallFile(const char* path, char* buf, size_t cap);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_BASE_SMALL_FILE_H_
