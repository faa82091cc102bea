// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "wiring/node_presets.h"

#include <map>
#include <utility>

namespace dist_train {

std::vector<Preset> CommonAssignments(const std::vector<EnvPlan>& plans) {
  std::vector<Preset> out;
  if (plans.size() < 2) return out;
  // name -> value in every plan so far; "" never stands for "absent".
  std::map<std::string, std::optional<std::string>> common;
  for (const auto& [name, value] : plans[0].set) common[name] = value;
  for (const EnvPlan& plan : plans) {
    std::map<std::string, std::string> mine(plan.set.begin(), plan.set.end());
    for (auto& [name, value] : common) {
      auto it = mine.find(name);
      if (!value || it == mine.end() || it->second != *value) value.reset();
    }
    for (const std::string& name : plan.unset) common[name].reset();
  }
  for (const auto& [name, value] : plans[0].set) {
    auto it = common.find(name);
    if (it == common.end() || !it->second || *it->second != value) continue;
    out.push_back(Preset{name, value, std::nullopt});
    common.erase(it);  // a name set twice is preset once
  }
  return out;
}

void UndoPresets(const std::vector<Preset>& presets, EnvMap* env) {
  for (const Preset& p : presets) {
    auto it = env->find(p.name);
    if (it == env->end() || it->second != p.value) continue;
    if (p.before)
      it->second = *p.before;
    else
      env->erase(it);
  }
}

Status PresetSink::Set(const std::string& name, const std::string& value) {
  touched_.insert(name);
  std::optional<std::string> now = current_(name);
  if (now && *now == value) {
    ++skipped_;
    return Status::OK();
  }
  return out_.Set(name, value);
}

Status PresetSink::Unset(const std::string& name) {
  touched_.insert(name);
  return out_.Unset(name);
}

Status PresetSink::Finish() {
  for (const Preset& p : presets_) {
    if (touched_.count(p.name)) continue;
    std::optional<std::string> now = current_(p.name);
    if (now != p.value) continue;  // Slurm's per-task setup changed it
    DT_RETURN_IF_ERROR(p.before ? out_.Set(p.name, *p.before)
                                : out_.Unset(p.name));
  }
  return Status::OK();
}

}  // namespace dist_train
