// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// gen-sbatch --collect DIR: one row per point of a submitted sweep, with
// its state from Slurm, its parameters and the metrics its program wrote
// (docs/gen-sbatch.md, "Collecting results"). Pure: the tool reads the
// files and asks slurmctld, this decides and formats.
//
// DIR is a sweep's run directory, RUN_DIR/<job name>-<array job id>, with
// one folder per point (params.json, and metrics.json when the program
// wrote one) and sweep.json, the list of all points --submit writes, so
// that points that have not started are listed too:
//
//   {"array_job_id":812,"first":0,"points":[{"lr":0.1},{"lr":0.01}]}

#ifndef DIST_TRAIN_LIB_JOBGEN_COLLECT_H_
#define DIST_TRAIN_LIB_JOBGEN_COLLECT_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "dist_train/status.h"

namespace dist_train {

using Json = nlohmann::ordered_json;

constexpr char kManifestFile[] = "sweep.json";
constexpr char kParamsFile[] = "params.json";
constexpr char kMetricsFile[] = "metrics.json";

struct SweepManifest {
  uint32_t array_job_id = 0;
  size_t first = 0;          // the point the array's task 0 runs
  std::vector<Json> points;  // each an object: name -> value
};

std::string FormatManifest(const SweepManifest& m);
// Strict: the three keys, points objects. `what` names the file in errors.
Status ParseManifest(std::string_view text, const std::string& what,
                     SweepManifest* m);

// A metrics.json or params.json: one JSON object. `what` names the file.
Status ParseObjectFile(std::string_view text, const std::string& what,
                       Json* object);

// The array job id of a sweep directory "<job name>-<array job id>".
bool ArrayJobIdOfDir(std::string_view dir_name, uint32_t* id);

// The task ids of Slurm's array task expression ("3-5%2", "1,4-8:2").
Status ParseArrayTasks(std::string_view expr, std::vector<uint32_t>* tasks);

struct CollectedPoint {
  size_t index = 0;
  Json params = Json::object();
  Json metrics = Json::object();
  std::string slurm_state;  // "COMPLETED", ...; "" = slurmctld does not know
  bool started = false;     // its run directory exists
};

// pending, running, done, failed:STATE, ended (started; slurmctld no longer
// knows how it ended: see sacct) or unknown (neither).
std::string PointState(const CollectedPoint& p);

enum class CollectFormat { kTable, kCsv, kJson };

// Columns: index, state, every parameter, every metric (a metric named like
// a parameter gets "metric:" in front), in order of first appearance.
std::string FormatCollected(const std::vector<CollectedPoint>& points,
                            CollectFormat format);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_JOBGEN_COLLECT_H_
