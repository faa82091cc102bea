// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The env contract's inputs: what a task's environment and Slurm's items
// hand the plugin (lib/contract/contract.h, env_record.h, step_facts.h,
// port.h, token.h), the runtime's own reading of the environment
// (lib/runtime/runtime_env.h) and the strict reader both use
// (lib/base/env.h). Input: lines NAME=VALUE. Most are environment
// variables; `@item=N` sets one of Slurm's items (the table below),
// `@options=` the --dist-train words and `@plugstack=` space-separated
// plugstack arguments. Properties: a plan only sets non-empty names
// without '=' and records what it set; step facts round-trip.

#include <cstdlib>
#include <string>
#include <vector>

#include "base/env.h"
#include "contract/contract.h"
#include "contract/env_record.h"
#include "contract/port.h"
#include "contract/step_facts.h"
#include "contract/token.h"
#include "fuzz/fuzz_check.h"
#include "runtime/runtime_env.h"
#include "runtime/wire.h"

namespace dist_train {
namespace {

struct Item {
  const char* name;
  uint32_t SlurmInputs::*field;
};

const Item kItems[] = {
    {"@job_id", &SlurmInputs::job_id},
    {"@step_id", &SlurmInputs::step_id},
    {"@step_nnodes", &SlurmInputs::step_nnodes},
    {"@node_id", &SlurmInputs::node_id},
    {"@local_tasks", &SlurmInputs::local_tasks},
    {"@total_tasks", &SlurmInputs::total_tasks},
    {"@cpus_per_task", &SlurmInputs::cpus_per_task},
    {"@local_task_id", &SlurmInputs::local_task_id},
    {"@global_task_id", &SlurmInputs::global_task_id},
};

struct Input {
  SlurmInputs slurm;
  std::string options = "on";
  std::vector<std::string> plugstack;
};

std::vector<std::string> Words(const std::string& text) {
  std::vector<std::string> words;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) words.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return words;
}

// Items parse leniently: the point is the environment, not the items.
bool SetItem(const std::string& name, const std::string& value, Input* in) {
  for (const Item& item : kItems) {
    if (name != item.name) continue;
    in->slurm.*item.field =
        static_cast<uint32_t>(strtoull(value.c_str(), nullptr, 10));
    return true;
  }
  if (name == "@end_time") {
    in->slurm.job_end_time = strtoll(value.c_str(), nullptr, 10);
  } else if (name == "@first_node_addr") {
    in->slurm.first_node_addr = value;
  } else if (name == "@options") {
    in->options = value;
  } else if (name == "@plugstack") {
    in->plugstack = Words(value);
  } else {
    return false;
  }
  return true;
}

Input Read(std::string_view text) {
  Input in;
  for (const std::string& line : FuzzLines(text)) {
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string name = line.substr(0, eq), value = line.substr(eq + 1);
    if (!SetItem(name, value, &in)) in.slurm.env[name] = value;
  }
  return in;
}

void CheckPlan(const EnvPlan& plan) {
  for (const auto& var : plan.set) {
    FuzzCheck(!var.first.empty() && var.first.find('=') == std::string::npos,
              "the plan sets a variable that cannot exist", var.first);
  }
  ExportRecord record;
  if (plan.set.empty()) return;
  const auto& last = plan.set.back();
  FuzzCheck(last.first == kExportedVar, "the plan does not record itself");
  Status s = ParseExportRecord(last.second, &record);
  FuzzCheck(s.ok(), "the plan's own DT_EXPORTED does not parse", s.message());
}

void PlanTask(const Input& in) {
  PluginConfig cfg;
  std::vector<const char*> argv;
  for (const std::string& w : in.plugstack) argv.push_back(w.c_str());
  if (!ParsePluginConfig(static_cast<int>(argv.size()), argv.data(), &cfg)
           .ok()) {
    return;
  }
  JobOptions opts;
  if (!ParseJobOptions(in.options.c_str(), &opts).ok()) return;
  EnvPlan plan;
  if (PlanTaskEnv(cfg, opts, in.slurm, &plan).ok()) CheckPlan(plan);
}

void StepFactsRoundTrip(const EnvMap& env) {
  const std::string* text = EnvFind(env, kStepFactsVar);
  StepFacts facts, again;
  if (text == nullptr || !ParseStepFacts(*text, &facts).ok()) return;
  Status s = ParseStepFacts(FormatStepFacts(facts), &again);
  FuzzCheck(s.ok() && FormatStepFacts(again) == FormatStepFacts(facts),
            "step facts do not round-trip", *text);
}

// Every strict reader on every value: none may crash or accept garbage
// silently (their messages are unit-tested).
void Readers(const EnvMap& env) {
  for (const auto& var : env) {
    std::optional<uint64_t> n;
    std::optional<bool> b;
    std::optional<int64_t> epoch;
    std::optional<double> seconds;
    std::optional<size_t> index;
    EnvUint(env, var.first, 1, 65535, &n).IgnoreError();
    EnvCount(env, var.first, &n).IgnoreError();
    EnvBool(env, var.first, &b).IgnoreError();
    EnvEpochSeconds(env, var.first, &epoch).IgnoreError();
    if (EnvSeconds(env, var.first, &seconds).ok() && seconds) {
      FuzzCheck(*seconds > 0 && *seconds < 1e300 * 1e300,
                "EnvSeconds accepted a value that is not a positive number",
                var.second);
    }
    EnvOneOf(env, var.first, {"a", "b"}, &index).IgnoreError();
  }
}

void Contract(const EnvMap& env) {
  uint16_t port = 0;
  if (const std::string* resv = EnvFind(env, "SLURM_STEP_RESV_PORTS")) {
    if (FirstReservedPort(*resv, &port).ok()) {
      FuzzCheck(port >= 1, "port 0 reserved");
    }
  }
  if (const std::string* token = EnvFind(env, kTokenVar)) {
    CheckToken(*token).IgnoreError();
  }
  Options out;
  if (ResolveOptions(Options(), env, &out).ok()) {
    FuzzCheck(out.rank >= 0 && out.rank < out.world_size,
              "ResolveOptions gave a rank outside the world");
    FuzzCheck(out.master_port > 0 && out.master_port < 65536,
              "ResolveOptions gave no usable port");
    // DT_TIMEOUT becomes every wait's deadline: it must lie ahead.
    FuzzCheck(DeadlineIn(out.timeout_seconds) > Clock::now(),
              "DT_TIMEOUT gives a deadline in the past",
              std::to_string(out.timeout_seconds));
  }
}

}  // namespace

int FuzzEnvContract(const uint8_t* data, size_t size) {
  const Input in = Read(FuzzText(data, size));
  PlanTask(in);
  StepFactsRoundTrip(in.slurm.env);
  Readers(in.slurm.env);
  Contract(in.slurm.env);
  return 0;
}

}  // namespace dist_train

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dist_train::FuzzEnvContract(data, size);
}
