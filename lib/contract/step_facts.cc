// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "contract/step_facts.h"

#include <map>

#include "base/parse.h"

namespace dist_train {

const char kStepFactsVar[] = "DT_STEP_FACTS";

namespace {

Status Bad(std::string_view text, const std::string& why) {
  return Status::InvalidArgument(std::string(kStepFactsVar) + "='" +
                                 std::string(text) + "': " + why);
}

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '.' || c == '_' || c == ':' || c == '-';
}

bool IsName(std::string_view s) {
  if (s.empty() || s.size() > 255) return false;
  for (char c : s) {
    if (!IsNameChar(c)) return false;
  }
  return true;
}

Status SplitFields(std::string_view text,
                   std::map<std::string, std::string>* fields) {
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string_view item = text.substr(pos, comma == std::string_view::npos
                                                 ? std::string_view::npos
                                                 : comma - pos);
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return Bad(text, "'" + std::string(item) + "' is not key=value");
    }
    std::string key(item.substr(0, eq));
    if (key != "job" && key != "end" && key != "node" && key != "addr") {
      return Bad(text, "unknown key '" + key + "'");
    }
    if (!fields->emplace(key, std::string(item.substr(eq + 1))).second) {
      return Bad(text, "'" + key + "' given twice");
    }
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return Status::OK();
}

}  // namespace

std::string FormatStepFacts(const StepFacts& f) {
  std::string out = "job=" + std::to_string(f.job_id) +
                    ",end=" + std::to_string(f.job_end_time);
  if (!f.node.empty()) out += ",node=" + f.node + ",addr=" + f.node_addr;
  return out;
}

Status ParseStepFacts(std::string_view text, StepFacts* facts) {
  std::map<std::string, std::string> fields;
  DT_RETURN_IF_ERROR(SplitFields(text, &fields));
  uint64_t job = 0, end = 0;
  if (!fields.count("job") || !ParseUint(fields["job"], 1, UINT32_MAX, &job)) {
    return Bad(text, "job must be a job id");
  }
  if (!fields.count("end") ||
      !ParseUint(fields["end"], 0, UINT64_MAX >> 1, &end)) {
    return Bad(text, "end must be seconds since the epoch (0: no limit)");
  }
  if (fields.count("node") != fields.count("addr")) {
    return Bad(text, "node and addr go together");
  }
  if (fields.count("node") &&
      (!IsName(fields["node"]) || !IsName(fields["addr"]))) {
    return Bad(text, "node and addr must be host names or addresses");
  }
  StepFacts parsed;
  parsed.job_id = static_cast<uint32_t>(job);
  parsed.job_end_time = static_cast<int64_t>(end);
  parsed.node = fields["node"];
  parsed.node_addr = fields["addr"];
  *facts = parsed;
  return Status::OK();
}

}  // namespace dist_train
