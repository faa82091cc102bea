// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "base/slurm_compat.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

namespace dist_train {
namespace {

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
slurm_step_id_t JobStepId(uint32_t job_id) {
  slurm_step_id_t id = SLURM_STEP_ID_INITIALIZER;
  id.job_id = job_id;
  return id;
}
#define DT_JOB_ARG(id) JobStepId(id)
#define DT_FREE_CTL_CONF slurm_free_conf
#else
#define DT_JOB_ARG(id) (id)
#define DT_FREE_CTL_CONF slurm_free_ctl_conf
#endif

std::string SlurmError(int err) {
  return std::string(slurm_strerror(err)) + " (errno " + std::to_string(err) +
         ")";
}

// Where libslurm finds its configuration without DNS SRV lookups.
const char* const kDefaultConfs[] = {"/etc/slurm/slurm.conf",
                                     "/run/slurm/conf/slurm.conf"};

Status FindConfig() {
  const char* env = getenv("SLURM_CONF");
  if (env != nullptr && *env != '\0') {
    if (access(env, R_OK) == 0) return Status::OK();
    return Status::NotFound(std::string("SLURM_CONF='") + env +
                            "' cannot be read");
  }
  for (const char* path : kDefaultConfs) {
    if (access(path, R_OK) == 0) return Status::OK();
  }
  return Status::NotFound(
      "no Slurm configuration: SLURM_CONF is unset and neither "
      "/etc/slurm/slurm.conf nor /run/slurm/conf/slurm.conf can be read");
}

}  // namespace

std::string SlurmReleaseOf(uint32_t v) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%u.%02u", (v >> 16) & 0xff, (v >> 8) & 0xff);
  return buf;
}

std::string SlurmBuildVersion() {
  return SlurmReleaseOf(SLURM_VERSION_NUMBER) + "." +
         std::to_string(SLURM_VERSION_NUMBER & 0xff);
}

Status SlurmInitOnce() {
  static std::once_flag once;
  static Status result;
  std::call_once(once, [] {
    result = FindConfig();
    if (result.ok()) slurm_init(nullptr);
  });
  return result;
}

namespace {

// One slurm_load_job of `job_id` (SHOW_LOCAL: no federation lookup first,
// or SHOW_ALL); `each` sees every record before the answer is freed.
Status WithJobRecords(
    uint32_t job_id, uint16_t show,
    const std::function<void(const slurm_job_info_t&)>& each) {
  job_info_msg_t* info = nullptr;
  if (slurm_load_job(&info, DT_JOB_ARG(job_id), show) != 0 || info == nullptr) {
    int err = errno;
    return Status::Unavailable("cannot load job " + std::to_string(job_id) +
                               " from slurmctld: " + SlurmError(err));
  }
  for (uint32_t i = 0; i < info->record_count; ++i) each(info->job_array[i]);
  slurm_free_job_info_msg(info);
  return Status::OK();
}

Status Requeue(uint32_t job_id, uint32_t flags) {
  if (slurm_requeue(DT_JOB_ARG(job_id), flags) == 0) return Status::OK();
  int err = errno;
  return Status::Unavailable("requeue of job " + std::to_string(job_id) +
                             " failed: " + SlurmError(err));
}

}  // namespace

Status LoadJobTimes(uint32_t job_id, JobTimes* times) {
  *times = JobTimes{};  // no record (already purged): nothing known
  return WithJobRecords(job_id, SHOW_LOCAL, [&](const slurm_job_info_t& j) {
    if (j.job_id != job_id) return;
    times->time_limit = j.time_limit;
    times->start_time = static_cast<int64_t>(j.start_time);
    times->end_time = static_cast<int64_t>(j.end_time);
  });
}

namespace {

// squeue's names of the base states (libslurm exports no job_state_string).
const char* JobStateName(uint32_t state) {
  if (state & JOB_COMPLETING) return "COMPLETING";
  if (state & JOB_CONFIGURING) return "CONFIGURING";
  switch (state & JOB_STATE_BASE) {
    case JOB_PENDING:
      return (state & JOB_REQUEUE) ? "REQUEUED" : "PENDING";
    case JOB_RUNNING:
      return "RUNNING";
    case JOB_SUSPENDED:
      return "SUSPENDED";
    case JOB_COMPLETE:
      return "COMPLETED";
    case JOB_CANCELLED:
      return "CANCELLED";
    case JOB_FAILED:
      return "FAILED";
    case JOB_TIMEOUT:
      return "TIMEOUT";
    case JOB_NODE_FAIL:
      return "NODE_FAIL";
    case JOB_PREEMPTED:
      return "PREEMPTED";
    case JOB_BOOT_FAIL:
      return "BOOT_FAIL";
    case JOB_DEADLINE:
      return "DEADLINE";
    case JOB_OOM:
      return "OUT_OF_MEMORY";
  }
  return "UNKNOWN";
}

}  // namespace

Status LoadArrayTaskStates(uint32_t array_job_id,
                           std::map<uint32_t, std::string>* states,
                           std::string* pending_expr) {
  return WithJobRecords(array_job_id, SHOW_ALL, [&](const slurm_job_info_t& j) {
    if (j.array_job_id != array_job_id) return;
    if (j.array_task_id != NO_VAL) {
      (*states)[j.array_task_id] = JobStateName(j.job_state);
    } else if (j.array_task_str != nullptr) {
      *pending_expr = j.array_task_str;
    }
  });
}

Status LoadNodeAddr(const std::string& node, std::string* addr) {
  node_info_msg_t* info = nullptr;
  if (slurm_load_node_single(&info, const_cast<char*>(node.c_str()),
                             SHOW_ALL) != 0 ||
      info == nullptr || info->record_count < 1 ||
      info->node_array[0].node_addr == nullptr) {
    if (info) slurm_free_node_info_msg(info);
    return Status::Unavailable("cannot look up NodeAddr of " + node);
  }
  *addr = info->node_array[0].node_addr;
  slurm_free_node_info_msg(info);
  return Status::OK();
}

Status SlurmRequeue(uint32_t job_id) { return Requeue(job_id, 0); }

Status LoadJobExcludedNodes(uint32_t job_id, std::string* nodes) {
  bool found = false;
  DT_RETURN_IF_ERROR(
      WithJobRecords(job_id, SHOW_LOCAL, [&](const slurm_job_info_t& j) {
        if (j.job_id != job_id) return;
        found = true;
        *nodes = j.exc_nodes != nullptr ? j.exc_nodes : "";
      }));
  if (!found)
    return Status::NotFound("slurmctld has no job " + std::to_string(job_id));
  return Status::OK();
}

namespace {

// One slurm_update_job2 on job `job_id` with what `set` puts in the
// message (slurm_update_job with a job id string logs that update_job2
// should be used); an error of the job's own entry in the answer counts.
Status UpdateJob(uint32_t job_id, const char* what,
                 const std::function<void(job_desc_msg_t*)>& set) {
  job_desc_msg_t msg;
  slurm_init_job_desc_msg(&msg);
  std::string id = std::to_string(job_id);
  msg.job_id_str = id.data();
  set(&msg);
  job_array_resp_msg_t* resp = nullptr;
  int err = slurm_update_job2(&msg, &resp) == 0 ? 0 : errno;
  for (uint32_t i = 0; err == 0 && resp && i < resp->job_array_count; ++i)
    err = static_cast<int>(resp->error_code[i]);
  if (resp) slurm_free_job_array_resp(resp);
  if (err == 0) return Status::OK();
  return Status::Unavailable(std::string(what) + " of job " + id +
                             " failed: " + SlurmError(err));
}

}  // namespace

Status SlurmSetExcludedNodes(uint32_t job_id, const std::string& nodes) {
  std::string copy = nodes;
  return UpdateJob(job_id, "setting ExcNodeList",
                   [&](job_desc_msg_t* m) { m->exc_nodes = copy.data(); });
}

namespace {

// One slurm_load_ctl_conf; `read` takes what it needs before it is freed.
Status WithCtlConf(const std::function<void(const slurm_conf_t&)>& read) {
  slurm_conf_t* conf = nullptr;
  if (slurm_load_ctl_conf(0, &conf) != 0 || conf == nullptr) {
    int err = errno;
    return Status::Unavailable("cannot load the controller's configuration: " +
                               SlurmError(err));
  }
  read(*conf);
  DT_FREE_CTL_CONF(conf);
  return Status::OK();
}

}  // namespace

Status LoadMaxArraySize(uint32_t* max_array_size) {
  return WithCtlConf(
      [&](const slurm_conf_t& conf) { *max_array_size = conf.max_array_sz; });
}

Status LoadProctrackType(std::string* type) {
  return WithCtlConf([&](const slurm_conf_t& conf) {
    *type = conf.proctrack_type ? conf.proctrack_type : "";
  });
}

Status LoadJobPlace(uint32_t job_id, JobPlace* place) {
  *place = JobPlace{};
  return WithJobRecords(job_id, SHOW_LOCAL, [&](const slurm_job_info_t& j) {
    if (j.job_id != job_id) return;
    place->found = true;
    place->user_id = j.user_id;
    place->work_dir = j.work_dir != nullptr ? j.work_dir : "";
    place->state = JobStateName(j.job_state);
  });
}

}  // namespace dist_train
