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
  // cap + 1: room for a value of exactly `cap` bytes and its NUL.
  std::vector<char> buf(std::min<size_t>(4096, cap + 1));
  for (;;) {
    spank_err_t rc =
        host.GetEnv(name, buf.data(), static_cast<int>(buf.size()));
    if (rc == ESPANK_SUCCESS) {
      *out = std::string(buf.data());
      return Status::OK();
    }
    if (rc != ESPANK_NOSPACE) return Status::OK();  // unset
    if (buf.size() > cap) {
      return Status::InvalidArgument(std::string(name) + " is longer than " +
                                     std::to_string(cap) + " bytes (the cap)");
    }
    buf.resize(std::min(buf.size() * 4, cap + 1));
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

}  // namespace dist_train
