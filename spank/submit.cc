// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "submit.h"

#include <string>

#include "base/hostlist.h"
#include "contract/step_facts.h"
#include "contract/token.h"
#include "state.h"

namespace dist_train {
namespace {

// Slurm hands a batch script's option to the batch step only. srun, sbatch
// and salloc also read an option from SLURM_SPANK__<option variable> (the
// command line wins), so exporting it into the job's environment makes a
// bare `srun` inside the script wired too, while `srun --dist-train=...`
// still overrides it.
int CarryToSteps(SpankHost& host, const PluginState& st) {
  std::string value = FormatJobOptions(st.options);
  if (host.SetProcessEnv(kOptionEnvVar, value.c_str()) != 0) {
    host.Error(std::string("dist-train: cannot export ") + kOptionEnvVar);
    return -1;
  }
  return 0;
}

// sbatch/salloc make a new token, srun keeps its job's (contract/token.h).
int EnsureToken(SpankHost& host, bool fresh) {
  std::string token;
  bool made = false;
  Status s = JobToken(fresh ? TokenRule::kNewJob : TokenRule::kJobStep,
                      host.GetProcessEnv(kTokenVar), &token, &made);
  if (!s.ok()) {
    host.Error("dist-train: " + s.message());
    return -1;
  }
  if (made && host.SetProcessEnv(kTokenVar, token.c_str()) != 0) {
    host.Error(std::string("dist-train: cannot export ") + kTokenVar);
    return -1;
  }
  return 0;
}

// srun's node list of the step being launched: srun exports it as
// SLURM_NODELIST before local_user_init. Each slurmstepd checks that the
// node matches the first of its own SLURM_STEP_NODELIST.
Status StepFirstNode(SpankHost& host, std::string* first) {
  const char* list = host.GetProcessEnv("SLURM_NODELIST");
  if (list == nullptr) return Status::NotFound("SLURM_NODELIST is not set");
  int count = 0;
  return FirstHost(list, "SLURM_NODELIST", first, &count);
}

Status LookUpStep(SpankHost& host, const PluginState& st, uint32_t job_id,
                  StepFacts* facts) {
  facts->job_id = job_id;
  DT_RETURN_IF_ERROR(host.LoadJobEndTime(job_id, &facts->job_end_time));
  if (st.config.master_addr != AddrPolicy::kNodeAddr) return Status::OK();
  std::string first, addr;
  if (StepFirstNode(host, &first).ok() &&
      host.LoadNodeAddr(first, &addr).ok()) {
    facts->node = first;
    facts->node_addr = addr;
  }
  return Status::OK();
}

}  // namespace

int SrunLocalUserInit(SpankHost& host, const PluginState& st) {
  host.UnsetProcessEnv(kStepFactsVar);  // never an enclosing step's
  if (!st.option_given || !st.options.enabled) return 0;
  uint32_t job_id = 0;
  if (host.GetItem(S_JOB_ID, &job_id) != ESPANK_SUCCESS) return 0;
  // Best effort: without the facts every node looks them up itself.
  StepFacts facts;
  Status s = LookUpStep(host, st, job_id, &facts);
  if (s.ok() &&
      host.SetProcessEnv(kStepFactsVar, FormatStepFacts(facts).c_str()) != 0)
    s = Status::IOError(std::string("cannot export ") + kStepFactsVar);
  if (!s.ok()) host.Verbose("dist-train: " + s.message());
  return 0;
}

int SubmitPostOpt(SpankHost& host, const PluginState& st, bool allocator) {
  if (!st.option_given || !st.options.enabled) return 0;
  if (allocator && st.config.carry_to_steps && CarryToSteps(host, st) != 0)
    return -1;
  return EnsureToken(host, allocator);
}

}  // namespace dist_train
