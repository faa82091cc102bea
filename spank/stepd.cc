// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "stepd.h"

#include <cstdio>
#include <string>
#include <vector>

#include "binder.h"
#include "contract.h"
#include "hostlist.h"
#include "plan_report.h"
#include "port.h"
#include "relay.h"
#include "spank_env.h"
#include "state.h"

namespace dist_train {
namespace {

template <typename T>
Status GetItem(spank_t sp, spank_item_t item, const char* name, T* out) {
  spank_err_t rc = spank_get_item(sp, item, out);
  if (rc == ESPANK_SUCCESS) return Status::OK();
  return Status::Unavailable(std::string("spank_get_item(") + name +
                             "): " + spank_strerror(rc));
}

Status GatherItems(spank_t sp, SlurmInputs* in) {
  int local_id = 0;
  DT_RETURN_IF_ERROR(GetItem(sp, S_JOB_ID, "S_JOB_ID", &in->job_id));
  DT_RETURN_IF_ERROR(GetItem(sp, S_JOB_STEPID, "S_JOB_STEPID", &in->step_id));
  DT_RETURN_IF_ERROR(
      GetItem(sp, S_JOB_NNODES, "S_JOB_NNODES", &in->step_nnodes));
  DT_RETURN_IF_ERROR(GetItem(sp, S_JOB_NODEID, "S_JOB_NODEID", &in->node_id));
  DT_RETURN_IF_ERROR(GetItem(sp, S_JOB_LOCAL_TASK_COUNT,
                             "S_JOB_LOCAL_TASK_COUNT", &in->local_tasks));
  DT_RETURN_IF_ERROR(GetItem(sp, S_JOB_TOTAL_TASK_COUNT,
                             "S_JOB_TOTAL_TASK_COUNT", &in->total_tasks));
  DT_RETURN_IF_ERROR(GetItem(sp, S_TASK_ID, "S_TASK_ID", &local_id));
  DT_RETURN_IF_ERROR(
      GetItem(sp, S_TASK_GLOBAL_ID, "S_TASK_GLOBAL_ID", &in->global_task_id));
  in->local_task_id = static_cast<uint32_t>(local_id);
  // Unknown CPUs per task only means no OMP_NUM_THREADS.
  if (!GetItem(sp, S_STEP_CPUS_PER_TASK, "S_STEP_CPUS_PER_TASK",
               &in->cpus_per_task)
           .ok()) {
    in->cpus_per_task = 0;
  }
  return Status::OK();
}

void GatherEnv(spank_t sp, EnvMap* env) {
  for (const std::string& name : InputEnvNames()) {
    std::string value;
    if (GetEnv(sp, name.c_str(), &value)) (*env)[name] = value;
  }
}

Status ApplyPlan(spank_t sp, const EnvPlan& plan) {
  for (const std::string& name : plan.unset) {
    spank_err_t rc = spank_unsetenv(sp, name.c_str());
    if (rc != ESPANK_SUCCESS && rc != ESPANK_ENV_NOEXIST) {
      return Status::IOError("unset " + name + ": " + spank_strerror(rc));
    }
  }
  for (const auto& [name, value] : plan.set) {
    spank_err_t rc = spank_setenv(sp, name.c_str(), value.c_str(), 1);
    if (rc != ESPANK_SUCCESS) {
      return Status::IOError("set " + name + ": " + spank_strerror(rc));
    }
  }
  return Status::OK();
}

// The task's stderr is the job's stderr at this point (before exec).
void Report(const PluginState& st, const EnvPlan& plan, const SlurmInputs& in,
            const std::string& affinity_warning) {
  bool first_on_node = in.local_task_id == 0;
  if (plan.verbose) fprintf(stderr, "%s\n", plan.summary.c_str());
  if (plan.verbose && first_on_node && st.bound) {
    std::string host =
        in.env.count("SLURMD_NODENAME") ? in.env.at("SLURMD_NODENAME") : "?";
    fprintf(stderr, "dist-train: binding on %s (topology: %s):\n%s",
            host.c_str(), st.topology_source.c_str(),
            PlanTable(st.model, st.plan).c_str());
  }
  if (first_on_node && !st.bind_note.empty())
    fprintf(stderr, "%s\n", st.bind_note.c_str());
  if (!affinity_warning.empty())
    fprintf(stderr, "%s\n", affinity_warning.c_str());
  if (plan.verbose || (first_on_node && in.node_id == 0)) {
    for (const std::string& w : plan.warnings)
      fprintf(stderr, "%s\n", w.c_str());
  }
  fflush(stderr);
}

Status LookupNodeAddr(spank_t sp, std::string* addr) {
  uint32_t step_id = 0;
  DT_RETURN_IF_ERROR(GetItem(sp, S_JOB_STEPID, "S_JOB_STEPID", &step_id));
  const char* var =
      step_id == kBatchStepId ? "SLURM_JOB_NODELIST" : "SLURM_STEP_NODELIST";
  std::string list, first;
  int count = 0;
  if (!GetEnv(sp, var, &list)) {
    return Status::NotFound(std::string(var) + " is not set");
  }
  DT_RETURN_IF_ERROR(FirstHost(list, var, &first, &count));
  node_info_msg_t* info = nullptr;
  if (slurm_load_node_single(&info, const_cast<char*>(first.c_str()),
                             SHOW_ALL) != 0 ||
      info == nullptr || info->record_count < 1 ||
      info->node_array[0].node_addr == nullptr) {
    if (info) slurm_free_node_info_msg(info);
    return Status::Unavailable(
        "master_addr=nodeaddr: cannot look up NodeAddr of " + first);
  }
  *addr = info->node_array[0].node_addr;
  slurm_free_node_info_msg(info);
  return Status::OK();
}

// A step without --dist-train (e.g. carry_to_steps=no, or a job submitted
// from inside a dist-train job) must not run with values an enclosing step
// exported: remove those that are unchanged. Never fails the task.
int RemoveInherited(spank_t sp) {
  std::string record;
  if (!GetEnv(sp, kExportedVar, &record)) return 0;
  SlurmInputs in;
  GatherEnv(sp, &in.env);
  JobOptions off;
  off.enabled = false;
  EnvPlan plan;
  Status s = PlanTaskEnv(State().config, off, in, &plan);
  if (s.ok()) s = ApplyPlan(sp, plan);
  if (!s.ok()) slurm_info("dist-train: %s", s.message().c_str());
  return 0;
}

// The job's end time as slurmctld has it now (after requeues and TimeLimit
// updates); 0 when unknown or unlimited. Best effort: never an error.
int64_t JobEndTime(spank_t sp) {
  uint32_t job_id = 0;
  if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS) return 0;
  job_info_msg_t* info = nullptr;
  if (slurm_load_job(&info, job_id, SHOW_ALL) != 0 || info == nullptr) return 0;
  int64_t end = 0;
  for (uint32_t i = 0; i < info->record_count; ++i) {
    const slurm_job_info_t& j = info->job_array[i];
    if (j.job_id == job_id && j.time_limit != INFINITE && j.end_time > 0)
      end = static_cast<int64_t>(j.end_time);
  }
  slurm_free_job_info_msg(info);
  return end;
}

int Fail(const SlurmInputs& in, const Status& s) {
  slurm_error("dist-train: task %u of step %u.%u: %s", in.global_task_id,
              in.job_id, in.step_id, s.message().c_str());
  fprintf(stderr, "dist-train: error: %s\n", s.message().c_str());
  return -1;
}

}  // namespace

int StepdUserInit(spank_t sp) {
  PluginState& st = State();
  if (!spank_remote(sp) || !st.option_given || !st.options.enabled ||
      !st.deferred.ok()) {
    return 0;
  }
  if (st.config.master_addr == AddrPolicy::kNodeAddr) {
    st.deferred = LookupNodeAddr(sp, &st.first_node_addr);
  }
  st.job_end_time = JobEndTime(sp);
  // The batch step is the job script itself (and whatever it runs without
  // srun): binding it like one rank would confine it to GPU 0's CPUs.
  uint32_t step_id = 0;
  spank_get_item(sp, S_JOB_STEPID, &step_id);
  if (st.options.mode.value_or(st.config.default_mode) == Mode::kTask &&
      step_id != kBatchStepId) {
    PrepareBinding(sp, &st);
  }
  return 0;
}

int StepdTaskInit(spank_t sp) {
  PluginState& st = State();
  if (!spank_remote(sp)) return 0;
  if (!st.option_given) return st.deferred.ok() ? RemoveInherited(sp) : 0;
  SlurmInputs in;
  EnvPlan plan;
  Status s = st.deferred;
  if (s.ok()) s = GatherItems(sp, &in);
  if (s.ok()) {
    GatherEnv(sp, &in.env);
    in.first_node_addr = st.first_node_addr;
    in.job_end_time = st.job_end_time;
    in.binding = RankBindingEnv(sp, st, in.local_task_id);
    s = PlanTaskEnv(st.config, st.options, in, &plan);
  }
  if (s.ok()) s = ApplyPlan(sp, plan);
  if (!s.ok()) return Fail(in, s);
  std::string affinity_warning =
      st.options.enabled ? ApplyAffinity(st, in.local_task_id) : "";
  Report(st, plan, in, affinity_warning);
  MaybeStartRelay(sp, st, in, plan.verbose);  // forks: keep it last
  return 0;
}

}  // namespace dist_train
