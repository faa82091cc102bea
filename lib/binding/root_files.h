// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Files slurmd writes as root and slurmstepd reads (the topology cache and
// the node model saved beside it): read only when root alone could have
// written them, written atomically without following a planted symlink.

#ifndef DIST_TRAIN_LIB_BINDING_ROOT_FILES_H_
#define DIST_TRAIN_LIB_BINDING_ROOT_FILES_H_

#include <sys/stat.h>

#include <cstddef>
#include <string>

#include "dist_train/status.h"

namespace dist_train {

// The largest topology file read (a big 8-socket node with hundreds of PCI
// devices writes a few MiB of XML).
constexpr size_t kMaxTopologyFile = size_t{32} << 20;

// "PATH: DOING: strerror(errno)" as InvalidArgument.
Status ErrnoError(const std::string& path, const char* doing);

// The whole of a regular file of at most kMaxTopologyFile bytes.
Status ReadFileCapped(const std::string& path, std::string* out);

// Reads `path` only if the file could not have been written by anyone but
// root: a regular file (the last component not a symlink) with one link,
// owned by root, not writable by group or others, at most kMaxTopologyFile
// bytes, in a directory owned by root that is not writable by group or
// others (or is sticky). The file is read once from the descriptor it was
// checked on; `st` (when given) gets that descriptor's fstat. Errors start
// with the path.
Status ReadRootOnlyFile(const std::string& path, std::string* out,
                        struct stat* st = nullptr);

// Writes `data` to `path` atomically: a new temp file beside it (created
// with O_EXCL|O_NOFOLLOW, so a planted symlink is never followed), synced,
// mode 0644 whatever the umask, renamed over `path`.
Status WriteFileAtomically(const std::string& path, const std::string& data);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_BINDING_ROOT_FILES_H_
