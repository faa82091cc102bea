// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Variables set once per node instead of once per task. Slurm's
// spank_setenv (its setenvf) allocates and zeroes a 256 KiB buffer for
// every value, and a task gets ~25 variables: most of what --dist-train
// added to a 64 x 4 step (docs/admin-guide.md, "What a step costs"). More
// than half of them have one value on the whole node (MASTER_ADDR,
// WORLD_SIZE, NODE_RANK, ...). user_init plans every task of the node,
// sets the assignments all plans share in the step's environment, which
// each task inherits, and task_init then skips a variable that already
// holds its value.
//
// task_init does not trust the presets: it plans from its inputs as they
// were before them (UndoPresets), sets every variable whose value differs
// from what the environment holds (Slurm's per-task setup runs between
// the two), and gives a preset its task did not set back its value from
// before (PresetSink::Finish). A wrong preset costs one more setenv, never
// a wrong value.

#ifndef DIST_TRAIN_LIB_WIRING_NODE_PRESETS_H_
#define DIST_TRAIN_LIB_WIRING_NODE_PRESETS_H_

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/env.h"
#include "contract/contract.h"
#include "wiring/env_sink.h"

namespace dist_train {

struct Preset {
  std::string name, value;
  std::optional<std::string> before;  // the value the step had, if any
};

// The assignments every plan sets, to the same value, and no plan unsets;
// in the first plan's order, `before` not filled in (the caller reads it).
// Fewer than two plans: none (nothing would be saved).
std::vector<Preset> CommonAssignments(const std::vector<EnvPlan>& plans);

// The task's inputs as they were before the presets: a variable that still
// holds its preset's value gets its value from before back (or goes).
void UndoPresets(const std::vector<Preset>& presets, EnvMap* env);

// An EnvSink in front of the task's: a Set whose value the environment
// already holds (`current`) is skipped; Finish gives every preset the task
// neither set nor unset its value from before.
class PresetSink : public EnvSink {
 public:
  using Lookup =
      std::function<std::optional<std::string>(const std::string& name)>;
  PresetSink(const std::vector<Preset>& presets, Lookup current, EnvSink& out)
      : presets_(presets), current_(std::move(current)), out_(out) {}
  Status Set(const std::string& name, const std::string& value) override;
  Status Unset(const std::string& name) override;
  Status SetTaskPid(const std::string& pid) override {
    return out_.SetTaskPid(pid);
  }
  Status Finish();
  int skipped() const { return skipped_; }

 private:
  const std::vector<Preset>& presets_;
  Lookup current_;
  EnvSink& out_;
  std::set<std::string> touched_;
  int skipped_ = 0;
};

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_WIRING_NODE_PRESETS_H_
