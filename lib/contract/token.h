// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The per-job secret DT_JOB_TOKEN: 256 random bits as 64 lowercase hex
// digits, made once on the submit side (sbatch/salloc, or a job-creating
// srun) and carried in the job's environment, which only the job's owner
// and root can read.

#ifndef DIST_TRAIN_LIB_CONTRACT_TOKEN_H_
#define DIST_TRAIN_LIB_CONTRACT_TOKEN_H_

#include <string>
#include <string_view>

#include "dist_train/status.h"

namespace dist_train {

constexpr char kTokenVar[] = "DT_JOB_TOKEN";
constexpr size_t kTokenHexDigits = 64;

// Fills `token` from the kernel's CSPRNG (getrandom).
Status GenerateToken(std::string* token);

// Error unless `token` is exactly 64 lowercase hex digits. Never echoes the
// value (it is a secret).
Status CheckToken(std::string_view token);

// Whose token a job or step gets: the one rule per caller, here only.
enum class TokenRule {
  // Always a fresh one (sbatch, salloc): a job submitted from inside
  // another must not share its secret.
  kNewJob,
  // The job's own, which must be valid; a fresh one when there is none (a
  // job-creating srun). srun, dt-run outside Slurm.
  kJobStep,
  // The job's own when valid, else a fresh one (dt-wire --job-env in a
  // batch script, which may have inherited anything).
  kJobOrFresh,
};

// The token under `rule`, given the environment's value (`existing`, null
// when unset). *made says whether it is a fresh one (to export). Errors
// name DT_JOB_TOKEN and never echo the value.
Status JobToken(TokenRule rule, const char* existing, std::string* token,
                bool* made);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_CONTRACT_TOKEN_H_
