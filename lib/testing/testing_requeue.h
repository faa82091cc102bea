// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Fake libslurm requeue calls (runtime/node_exclusion.h's RequeueOps) that
// append each call to a file, one line each ("load 42", "requeue 42",
// "set 42 nodeB,nodeZ"): the code under test makes them in
// another process (a forked task, the watchdog). The job already excludes
// "nodeZ".

#ifndef DIST_TRAIN_LIB_TESTING_TESTING_REQUEUE_H_
#define DIST_TRAIN_LIB_TESTING_TESTING_REQUEUE_H_

#include <fstream>
#include <string>

#include "runtime/node_exclusion.h"

namespace dist_train {
namespace testing_requeue {

inline RequeueOps RecordingOps(const std::string& path) {
  auto note = [path](const std::string& line) {
    std::ofstream(path, std::ios::app) << line << "\n";
    return Status::OK();
  };
  RequeueOps ops;
  ops.load_excluded = [note](uint32_t job, std::string* nodes) {
    *nodes = "nodeZ";
    return note("load " + std::to_string(job));
  };
  ops.requeue = [note](uint32_t job) {
    return note("requeue " + std::to_string(job));
  };
  ops.set_excluded = [note](uint32_t job, const std::string& nodes) {
    return note("set " + std::to_string(job) + " " + nodes);
  };
  return ops;
}

}  // namespace testing_requeue
}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_TESTING_TESTING_REQUEUE_H_
