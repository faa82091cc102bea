// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "wiring/env_sink.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace dist_train {

Status ProcessEnvSink::Set(const std::string& name, const std::string& value) {
  if (setenv(name.c_str(), value.c_str(), 1) != 0)
    return Status::IOError("set " + name + ": " + strerror(errno));
  return Status::OK();
}

Status ProcessEnvSink::Unset(const std::string& name) {
  if (unsetenv(name.c_str()) != 0)
    return Status::IOError("unset " + name + ": " + strerror(errno));
  return Status::OK();
}

Status ApplyEnvPlan(const EnvPlan& plan, EnvSink& sink) {
  for (const std::string& name : plan.unset)
    DT_RETURN_IF_ERROR(sink.Unset(name));
  for (const auto& [name, value] : plan.set)
    DT_RETURN_IF_ERROR(sink.Set(name, value));
  return Status::OK();
}

}  // namespace dist_train
