// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// An in-memory SpankHost for unit tests (LevelDB's memenv is the model):
// items, the job's environment and the submitting process's environment are
// maps; slurmctld lookups answer from maps and are counted; log lines are
// recorded. Header-only so that it never reaches the plugin.

#ifndef DIST_TRAIN_SPANK_FAKE_SPANK_HOST_H_
#define DIST_TRAIN_SPANK_FAKE_SPANK_HOST_H_

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "contract/options.h"
#include "spank_host.h"
#include "state.h"

namespace dist_train {

class FakeSpankHost : public SpankHost {
 public:
  spank_context_t context = S_CTX_REMOTE;
  std::map<spank_item_t, int64_t> items;       // numeric items
  std::map<spank_item_t, std::string> texts;   // char* items
  std::map<std::string, std::string> env;      // the job's (spank_getenv)
  std::map<std::string, std::string> process;  // srun/sbatch's own
  std::map<uint32_t, int64_t> end_times;       // job -> end time
  std::map<std::string, std::string> node_addrs;
  std::map<uint32_t, uint32_t> global_ids;  // local -> global task id
  int end_time_rpcs = 0, node_addr_rpcs = 0;
  std::vector<std::string> infos, verboses, errors;

  spank_context_t Context() override { return context; }
  bool Remote() override { return context == S_CTX_REMOTE; }

  spank_err_t GetItem(spank_item_t item, uint32_t* out) override {
    auto it = items.find(item);
    if (it == items.end()) return Rc(ESPANK_NOT_AVAIL);
    *out = static_cast<uint32_t>(it->second);
    return Rc(ESPANK_SUCCESS);
  }
  spank_err_t GetItem(spank_item_t item, int* out) override {
    auto it = items.find(item);
    if (it == items.end()) return Rc(ESPANK_NOT_AVAIL);
    *out = static_cast<int>(it->second);
    return Rc(ESPANK_SUCCESS);
  }
  spank_err_t GlobalTaskId(uint32_t local, uint32_t* global) override {
    auto it = global_ids.find(local);
    if (it == global_ids.end()) return Rc(ESPANK_NOT_AVAIL);
    *global = it->second;
    return Rc(ESPANK_SUCCESS);
  }
  spank_err_t GetItem(spank_item_t item, char** out) override {
    auto it = texts.find(item);
    if (it == texts.end()) return Rc(ESPANK_NOT_AVAIL);
    *out = it->second.data();
    return Rc(ESPANK_SUCCESS);
  }

  // Like slurmstepd: truncates into a short buffer and says so.
  spank_err_t GetEnv(const char* name, char* buf, int len) override {
    auto it = env.find(name);
    if (it == env.end()) return Rc(ESPANK_ENV_NOEXIST);
    size_t n = static_cast<size_t>(len);
    snprintf(buf, n, "%s", it->second.c_str());
    return Rc(it->second.size() >= n ? ESPANK_NOSPACE : ESPANK_SUCCESS);
  }
  spank_err_t SetEnv(const char* name, const char* value,
                     int overwrite) override {
    if (!overwrite && env.count(name)) return Rc(ESPANK_ENV_EXISTS);
    env[name] = value;
    return Rc(ESPANK_SUCCESS);
  }
  spank_err_t UnsetEnv(const char* name) override {
    env.erase(name);
    return Rc(ESPANK_SUCCESS);
  }
  bool OverwriteEnv(const char* name, const char* value) override {
    auto it = env.find(name);
    if (it == env.end() || it->second.size() < strlen(value)) return false;
    it->second = value;
    return true;
  }
  const char* StrError(spank_err_t rc) override {
    return rc == ESPANK_NOT_AVAIL ? "Item not available from this callback"
                                  : "some spank error";
  }

  const char* GetProcessEnv(const char* name) override {
    auto it = process.find(name);
    return it == process.end() ? nullptr : it->second.c_str();
  }
  int SetProcessEnv(const char* name, const char* value) override {
    process[name] = value;
    return 0;
  }
  void UnsetProcessEnv(const char* name) override { process.erase(name); }

  std::vector<std::string> JobEnvironment() override {
    std::vector<std::string> out;
    for (const auto& [name, value] : env) out.push_back(name + "=" + value);
    return out;
  }

  Status LoadJobEndTime(uint32_t job_id, int64_t* end_time) override {
    ++end_time_rpcs;
    auto it = end_times.find(job_id);
    if (it == end_times.end())
      return Status::NotFound("job " + std::to_string(job_id) + " unknown");
    *end_time = it->second;
    return Status::OK();
  }
  Status LoadNodeAddr(const std::string& node, std::string* addr) override {
    ++node_addr_rpcs;
    auto it = node_addrs.find(node);
    if (it == node_addrs.end())
      return Status::NotFound("node " + node + " unknown");
    *addr = it->second;
    return Status::OK();
  }

  void Info(const std::string& msg) override { infos.push_back(msg); }
  void Verbose(const std::string& msg) override { verboses.push_back(msg); }
  void Error(const std::string& msg) override { errors.push_back(msg); }

 private:
  // ESPANK_* are plain ints in some releases' spank.h.
  static spank_err_t Rc(int rc) { return static_cast<spank_err_t>(rc); }
};

// As if the user gave --dist-train=`text` (the plugin's option callback).
inline void GiveOption(PluginState* st, const char* text) {
  ASSERT_TRUE(ParseJobOptions(text, &st->options).ok());
  st->option_given = true;
}

}  // namespace dist_train

#endif  // DIST_TRAIN_SPANK_FAKE_SPANK_HOST_H_
