// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "spank_env.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace dist_train {

size_t EnvValueCap(std::string_view name) {
  constexpr std::string_view kNodeList = "NODELIST";
  bool node_list = name.size() >= kNodeList.size() &&
                   name.substr(name.size() - kNodeList.size()) == kNodeList;
  return node_list ? kMaxNodeListEnvValue : kMaxEnvValue;
}

Status ReadEnv(SpankHost& host, const char* name,
               std::optional<std::string>* out) {
  out->reset();
  const size_t cap = EnvValueCap(name);
  // Most values fit on the stack: no heap block to zero for each of the
  // ~50 names task_init reads (task_arena.h). cap + 1: room for a value of
  // exactly `cap` bytes and its NUL.
  char small[4096];
  char* buf = small;
  size_t size = std::min(sizeof(small), cap + 1);
  std::vector<char> big;
  for (;;) {
    spank_err_t rc = host.GetEnv(name, buf, static_cast<int>(size));
    if (rc == ESPANK_SUCCESS) {
      *out = std::string(buf);
      return Status::OK();
    }
    if (rc != ESPANK_NOSPACE) return Status::OK();  // unset
    if (size > cap) {
      return Status::InvalidArgument(std::string(name) + " is longer than " +
                                     std::to_string(cap) + " bytes (the cap)");
    }
    size = std::min(size * 4, cap + 1);
    big.resize(size);
    buf = big.data();
  }
}

bool GetEnv(SpankHost& host, const char* name, std::string* out) {
  std::optional<std::string> value;
  if (!ReadEnv(host, name, &value).ok() || !value) return false;
  *out = std::move(*value);
  return true;
}

bool OverwriteEnvEntry(char** env, std::string_view name,
                       std::string_view value) {
  if (env == nullptr || name.empty()) return false;
  for (char** entry = env; *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    if (text.size() <= name.size() || text[name.size()] != '=' ||
        text.substr(0, name.size()) != name) {
      continue;
    }
    if (text.size() - name.size() - 1 < value.size()) return false;
    char* old = *entry + name.size() + 1;
    memcpy(old, value.data(), value.size());
    old[value.size()] = '\0';
    return true;
  }
  return false;
}

Status SpankEnvSink::Set(const std::string& name, const std::string& value) {
  spank_err_t rc = host_.SetEnv(name.c_str(), value.c_str(), 1);
  if (rc == ESPANK_SUCCESS) return Status::OK();
  return Status::IOError("set " + name + ": " + host_.StrError(rc));
}

Status SpankEnvSink::Unset(const std::string& name) {
  spank_err_t rc = host_.UnsetEnv(name.c_str());
  if (rc == ESPANK_SUCCESS || rc == ESPANK_ENV_NOEXIST) return Status::OK();
  return Status::IOError("unset " + name + ": " + host_.StrError(rc));
}

// Slurm set SLURM_TASK_PID to the relay's pid; the child's has as many
// digits but after a wrap to a longer pid. Overwritten in place:
// spank_setenv xmallocs and zeroes a quarter MiB (Slurm's setenvf), which in
// a forked child were ~64 copy-on-write faults (a third of what the forked
// relay cost a step, under perf).
Status SpankEnvSink::SetTaskPid(const std::string& pid) {
  if (host_.OverwriteEnv("SLURM_TASK_PID", pid.c_str())) return Status::OK();
  return Set("SLURM_TASK_PID", pid);
}

}  // namespace dist_train
