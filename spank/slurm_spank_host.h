// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The SpankHost of a real Slurm process: Slurm's spank_* functions on the
// handle of the current hook. Used by plugin.cc only.

#ifndef DIST_TRAIN_SPANK_SLURM_SPANK_HOST_H_
#define DIST_TRAIN_SPANK_SLURM_SPANK_HOST_H_

#include <cstdint>
#include <string>

#include "spank_host.h"

namespace dist_train {

class SlurmSpankHost : public SpankHost {
 public:
  explicit SlurmSpankHost(spank_t sp) : sp_(sp) {}

  spank_context_t Context() override;
  bool Remote() override;
  spank_err_t GetItem(spank_item_t item, uint32_t* out) override;
  spank_err_t GetItem(spank_item_t item, int* out) override;
  spank_err_t GetItem(spank_item_t item, char** out) override;
  spank_err_t GlobalTaskId(uint32_t local, uint32_t* global) override;
  spank_err_t GetEnv(const char* name, char* buf, int len) override;
  spank_err_t SetEnv(const char* name, const char* value,
                     int overwrite) override;
  spank_err_t UnsetEnv(const char* name) override;
  bool OverwriteEnv(const char* name, const char* value) override;
  const char* StrError(spank_err_t rc) override;
  const char* GetProcessEnv(const char* name) override;
  int SetProcessEnv(const char* name, const char* value) override;
  void UnsetProcessEnv(const char* name) override;
  std::vector<std::string> JobEnvironment() override;
  Status LoadJobEndTime(uint32_t job_id, int64_t* end_time) override;
  Status LoadNodeAddr(const std::string& node, std::string* addr) override;
  void Info(const std::string& msg) override;
  void Verbose(const std::string& msg) override;
  void Error(const std::string& msg) override;

 private:
  spank_t sp_;
};

}  // namespace dist_train

#endif  // DIST_TRAIN_SPANK_SLURM_SPANK_HOST_H_
