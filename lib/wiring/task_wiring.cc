// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "wiring/task_wiring.h"

#include <cstdio>

#include "binding/plan_report.h"

namespace dist_train {

std::string TaskReport(const NodeBinding& binding, const EnvPlan& plan,
                       const SlurmInputs& in,
                       const std::string& affinity_warning) {
  bool first_on_node = in.local_task_id == 0;
  std::string out;
  if (plan.verbose) out += plan.summary + "\n";
  if (plan.verbose && first_on_node && binding.bound) {
    const std::string* host = EnvFind(in.env, "SLURMD_NODENAME");
    out += "dist-train: binding on " + (host ? *host : std::string("?")) +
           " (topology: " + binding.topology_source + "):\n" +
           PlanTable(binding.model, binding.plan);
  }
  if (first_on_node && !binding.note.empty()) out += binding.note + "\n";
  if (!affinity_warning.empty()) out += affinity_warning + "\n";
  if (plan.verbose || (first_on_node && in.node_id == 0)) {
    for (const std::string& w : plan.warnings) out += w + "\n";
  }
  return out;
}

Status WireTask(const PluginConfig& cfg, const JobOptions& opts,
                const NodeBinding& binding, SlurmInputs* in, EnvSink& sink,
                RelayTask* relay) {
  in->binding = RankBindingEnv(cfg, opts, binding, in->local_task_id, in->env);
  EnvPlan plan;
  DT_RETURN_IF_ERROR(PlanTaskEnv(cfg, opts, *in, &plan));
  DT_RETURN_IF_ERROR(ApplyEnvPlan(plan, sink));
  std::string affinity_warning =
      opts.enabled ? ApplyRankAffinity(cfg, opts, binding, in->local_task_id)
                   : "";
  // The task's stderr is the job's stderr at this point (before exec).
  std::string report = TaskReport(binding, plan, *in, affinity_warning);
  if (!report.empty()) fputs(report.c_str(), stderr);
  fflush(stderr);
  relay->step_id = in->step_id;
  relay->local_task_id = in->local_task_id;
  relay->global_task_id = in->global_task_id;
  relay->verbose = plan.verbose;
  return Status::OK();
}

}  // namespace dist_train
