// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "stepd.h"

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "base/hostlist.h"
#include "base/slurm_ids.h"
#include "binder.h"
#include "binding/gpu_vendor.h"
#include "contract/contract.h"
#include "contract/step_facts.h"
#include "spank_env.h"
#include "state.h"
#include "task_arena.h"
#include "wiring/task_preflight.h"
#include "wiring/task_relay.h"
#include "wiring/task_wiring.h"

namespace dist_train {
namespace {

template <typename T>
Status GetItem(SpankHost& host, spank_item_t item, const char* name, T* out) {
  spank_err_t rc = host.GetItem(item, out);
  if (rc == ESPANK_SUCCESS) return Status::OK();
  return Status::Unavailable(std::string("spank_get_item(") + name +
                             "): " + host.StrError(rc));
}

Status GatherItems(SpankHost& host, SlurmInputs* in) {
  int local_id = 0;
  DT_RETURN_IF_ERROR(GetItem(host, S_JOB_ID, "S_JOB_ID", &in->job_id));
  DT_RETURN_IF_ERROR(GetItem(host, S_JOB_STEPID, "S_JOB_STEPID", &in->step_id));
  DT_RETURN_IF_ERROR(
      GetItem(host, S_JOB_NNODES, "S_JOB_NNODES", &in->step_nnodes));
  DT_RETURN_IF_ERROR(GetItem(host, S_JOB_NODEID, "S_JOB_NODEID", &in->node_id));
  DT_RETURN_IF_ERROR(GetItem(host, S_JOB_LOCAL_TASK_COUNT,
                             "S_JOB_LOCAL_TASK_COUNT", &in->local_tasks));
  DT_RETURN_IF_ERROR(GetItem(host, S_JOB_TOTAL_TASK_COUNT,
                             "S_JOB_TOTAL_TASK_COUNT", &in->total_tasks));
  DT_RETURN_IF_ERROR(GetItem(host, S_TASK_ID, "S_TASK_ID", &local_id));
  DT_RETURN_IF_ERROR(
      GetItem(host, S_TASK_GLOBAL_ID, "S_TASK_GLOBAL_ID", &in->global_task_id));
  in->local_task_id = static_cast<uint32_t>(local_id);
  // Unknown CPUs per task only means no OMP_NUM_THREADS.
  if (!GetItem(host, S_STEP_CPUS_PER_TASK, "S_STEP_CPUS_PER_TASK",
               &in->cpus_per_task)
           .ok()) {
    in->cpus_per_task = 0;
  }
  return Status::OK();
}

Status GatherEnv(SpankHost& host, EnvMap* env) {
  for (const std::string& name : InputEnvNames()) {
    std::optional<std::string> value;
    DT_RETURN_IF_ERROR(ReadEnv(host, name.c_str(), &value));
    if (value) (*env)[name] = std::move(*value);
  }
  return Status::OK();
}

// The first node of the step (of the job for the batch step), and the
// node list it came from (if `list_out`).
Status FirstStepNode(SpankHost& host, uint32_t step_id, std::string* first,
                     std::string* list_out = nullptr) {
  std::string var = JobOrStepVar(step_id, "NODELIST");
  std::optional<std::string> list;
  int count = 0;
  DT_RETURN_IF_ERROR(ReadEnv(host, var.c_str(), &list));
  if (!list) return Status::NotFound(var + " is not set");
  DT_RETURN_IF_ERROR(FirstHost(*list, var.c_str(), first, &count));
  if (list_out != nullptr) *list_out = std::move(*list);
  return Status::OK();
}

// The facts srun looked up for this step (DT_STEP_FACTS), when they are
// there, well-formed and for this job.
bool FactsFromSrun(SpankHost& host, uint32_t job_id, StepFacts* facts) {
  std::string text;
  if (!GetEnv(host, kStepFactsVar, &text)) return false;
  Status s = ParseStepFacts(text, facts);
  if (!s.ok()) {
    host.Info("dist-train: ignored: " + s.message());
    return false;
  }
  return facts->job_id == job_id;
}

Status ResolveStepFacts(SpankHost& host, PluginState* st) {
  uint32_t job_id = 0, step_id = 0;
  DT_RETURN_IF_ERROR(GetItem(host, S_JOB_ID, "S_JOB_ID", &job_id));
  DT_RETURN_IF_ERROR(GetItem(host, S_JOB_STEPID, "S_JOB_STEPID", &step_id));
  StepFacts facts;
  bool from_srun = FactsFromSrun(host, job_id, &facts);
  if (from_srun) {
    st->job_end_time = facts.job_end_time;
  } else {
    // Best effort: without it DT_JOB_DEADLINE is just not set.
    int64_t end = 0;
    Status s = host.LoadJobEndTime(job_id, &end);
    if (s.ok()) st->job_end_time = end;
    if (!s.ok()) host.Info("dist-train: " + s.message());
  }
  if (st->config.master_addr != AddrPolicy::kNodeAddr) return Status::OK();
  std::string first;
  DT_RETURN_IF_ERROR(FirstStepNode(host, step_id, &first));
  if (from_srun && facts.node == first) {
    st->first_node_addr = facts.node_addr;
    return Status::OK();
  }
  Status s = host.LoadNodeAddr(first, &st->first_node_addr);
  if (!s.ok())
    return Status::Unavailable("master_addr=nodeaddr: " + s.message());
  return Status::OK();
}

// A step without --dist-train (e.g. carry_to_steps=no, or a job submitted
// from inside a dist-train job) must not run with values an enclosing step
// exported: remove those that are unchanged. Never fails the task.
int RemoveInherited(SpankHost& host, const PluginConfig& cfg) {
  std::string record;
  if (!GetEnv(host, kExportedVar, &record)) return 0;
  SlurmInputs in;
  JobOptions off;
  off.enabled = false;
  EnvPlan plan;
  SpankEnvSink sink(host);
  Status s = GatherEnv(host, &in.env);
  if (s.ok()) s = PlanTaskEnv(cfg, off, in, &plan);
  if (s.ok()) s = ApplyEnvPlan(plan, sink);
  if (!s.ok()) host.Info("dist-train: " + s.message());
  return 0;
}

int Fail(SpankHost& host, const SlurmInputs& in, const Status& s) {
  host.Error("dist-train: task " + std::to_string(in.global_task_id) +
             " of step " + std::to_string(in.job_id) + "." +
             std::to_string(in.step_id) + ": " + s.message());
  fprintf(stderr, "dist-train: error: %s\n", s.message().c_str());
  return -1;
}

// What every task of this node would otherwise work out again, done once
// here, before slurmstepd forks them: in a task, each page written is a
// copy-on-write fault (15-40 us on a VM; a 4 x 4 step under perf). The
// contract's tables of names (function-local statics) are built, and the
// step's first host parsed (Slurm's hostlist code mallocs). A node list the
// task cannot parse is left to task_init, which reports it.
void PrepareForTasks(SpankHost& host, uint32_t step_id, PluginState* st) {
  InputEnvNames();
  GpuVendors();
  std::string first, list;
  if (FirstStepNode(host, step_id, &first, &list).ok()) {
    st->first_host_of = std::move(list);
    st->first_host = std::move(first);
  }
}

}  // namespace

int StepdInitPostOpt(SpankHost& host, PluginState& st) {
  if (!st.option_given || !st.options.enabled || !st.deferred.ok()) return 0;
  st.deferred = ResolveStepFacts(host, &st);
  return 0;
}

// No libslurm RPC from here on: since Slurm 23.02 slurmstepd holds its auth
// lock for writing while user_init runs, and an RPC kills it.
int StepdUserInit(SpankHost& host, PluginState& st) {
  if (!host.Remote() || !st.option_given || !st.options.enabled ||
      !st.deferred.ok()) {
    return 0;
  }
  uint32_t step_id = 0;
  host.GetItem(S_JOB_STEPID, &step_id);
  if (BindsStep(st.config, st.options, step_id)) PrepareBinding(host, &st);
  PrepareForTasks(host, step_id, &st);
  return 0;
}

namespace {

// task_init up to the relay (wiring/task_wiring.h), from SPANK's view of
// the task.
int ApplyTask(SpankHost& host, const PluginState& st, RelayTask* task) {
  SlurmInputs in;
  SpankEnvSink sink(host);
  Status s = st.deferred;
  if (s.ok()) s = GatherItems(host, &in);
  if (s.ok()) s = GatherEnv(host, &in.env);
  if (s.ok()) {
    in.first_node_addr = st.first_node_addr;
    in.first_host_of = st.first_host_of;
    in.first_host = st.first_host;
    in.job_end_time = st.job_end_time;
    s = WireTask(st.config, st.options, st.binding, &in, sink, task);
  }
  if (!s.ok()) return Fail(host, in, s);
  return 0;
}

// The relay's view of the job's DT_PREEMPT_SIGNAL, then the relay itself
// (wiring/task_relay.h).
void StartRelay(SpankHost& host, const PluginState& st, const RelayTask& task) {
  if (!st.options.enabled) return;
  std::string signal;
  bool set = GetEnv(host, "DT_PREEMPT_SIGNAL", &signal);
  SpankEnvSink sink(host);
  StartTaskRelay(st.config, task, set ? &signal : nullptr, sink);
}

// The preflight gate (wiring/task_preflight.h) of an srun step whose job
// asked for it: every task runs dt-preflight and waits; under policy fail
// a failed check fails the task. The report comes from task 0's check.
int RunTaskPreflight(SpankHost& host, const PluginState& st,
                     const RelayTask& task) {
  PreflightSetting setting = EffectivePreflight(st.config, st.options);
  if (!PreflightApplies(st.options, setting, task.step_id)) return 0;
  PreflightTask pt;
  pt.step_id = task.step_id;
  pt.rank = task.global_task_id;
  pt.probes = task.local_task_id == 0;
  SlurmInputs in;
  in.global_task_id = task.global_task_id;
  in.step_id = task.step_id;
  Status s = GetItem(host, S_JOB_ID, "S_JOB_ID", &pt.job_id);
  if (s.ok())
    s = GetItem(host, S_JOB_TOTAL_TASK_COUNT, "S_JOB_TOTAL_TASK_COUNT",
                &pt.size);
  in.job_id = pt.job_id;
  std::string warning;
  s = s.ok() ? RunTaskPreflight(st.config.preflight_program, setting, pt,
                                host.JobEnvironment(), &warning)
             : PreflightOutcome(setting, s, -1, &warning);
  if (!warning.empty() && task.global_task_id == 0)
    fprintf(stderr, "dist-train: warning: %s\n", warning.c_str());
  if (s.ok()) return 0;
  if (task.global_task_id == 0) return Fail(host, in, s);
  // Task 0 tells the user; the others only slurmd's log.
  host.Verbose("dist-train: task " + std::to_string(task.global_task_id) +
               ": " + s.message());
  return -1;
}

}  // namespace

int StepdTaskInit(SpankHost& host, PluginState& st) {
  if (!host.Remote()) return 0;
  RelayTask task;
  {
    // This process was forked from slurmstepd: keep our allocations off
    // its heap's pages (task_arena.h).
    TaskArenaScope arena;
    // srun's lookups are for the slurmstepds, not for the program.
    host.UnsetEnv(kStepFactsVar);
    if (!st.option_given)
      return st.deferred.ok() ? RemoveInherited(host, st.config) : 0;
    if (ApplyTask(host, st, &task) != 0) return -1;
    if (RunTaskPreflight(host, st, task) != 0) return -1;
  }
  // Forks: last, once ApplyTask's memory is freed (freed in the child, each
  // page would be a copy-on-write fault: 4x4 steps measured under perf).
  StartRelay(host, st, task);
  return 0;
}

}  // namespace dist_train
