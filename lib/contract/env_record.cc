// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "contract/env_record.h"

#include <cstdio>

#include "base/parse.h"

namespace dist_train {
namespace {

bool ParseHex64(std::string_view text, uint64_t* out) {
  if (text.size() != 16) return false;
  uint64_t v = 0;
  for (char c : text) {
    int d = (c >= '0' && c <= '9')   ? c - '0'
            : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                                     : -1;
    if (d < 0) return false;
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  *out = v;
  return true;
}

bool ValidName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  }
  return true;
}

}  // namespace

uint64_t ValueHash(std::string_view value) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : value) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::string FormatExportRecord(const EnvAssignments& assignments) {
  std::string out;
  for (const auto& [name, value] : assignments) {
    char hex[17];
    snprintf(hex, sizeof(hex), "%016llx",
             static_cast<unsigned long long>(ValueHash(value)));
    out += (out.empty() ? "" : ",") + name + ":" + hex;
  }
  return out;
}

Status ParseExportRecord(std::string_view text, ExportRecord* out) {
  ExportRecord record;
  if (!text.empty()) {
    for (std::string_view entry : Split(text, ',')) {
      size_t colon = entry.find(':');
      uint64_t hash = 0;
      if (colon == std::string_view::npos ||
          !ValidName(entry.substr(0, colon)) ||
          !ParseHex64(entry.substr(colon + 1), &hash)) {
        return Status::InvalidArgument(
            std::string(kExportedVar) + ": malformed entry '" +
            std::string(entry) + "' (expected NAME:16 hex digits)");
      }
      record[std::string(entry.substr(0, colon))] = hash;
    }
  }
  *out = std::move(record);
  return Status::OK();
}

bool WasExportedUnchanged(const ExportRecord& record, const std::string& name,
                          const std::string& value) {
  auto it = record.find(name);
  return it != record.end() && it->second == ValueHash(value);
}

}  // namespace dist_train
