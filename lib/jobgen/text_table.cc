// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "jobgen/text_table.h"

#include <algorithm>

namespace dist_train {

std::string AlignedTable(const std::vector<std::vector<std::string>>& rows) {
  constexpr size_t kMaxWidth = 40;
  std::vector<size_t> w;
  for (const auto& r : rows) {
    if (r.size() > w.size()) w.resize(r.size(), 0);
    for (size_t i = 0; i < r.size(); ++i)
      w[i] = std::max(w[i], std::min(r[i].size(), kMaxWidth));
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      size_t pad = w[i] > r[i].size() ? w[i] - r[i].size() : 0;
      line += r[i] + (i + 1 < r.size() ? std::string(pad + 2, ' ') : "");
    }
    line.erase(line.find_last_not_of(' ') + 1);  // empty last cells
    out += line + "\n";
  }
  return out;
}

std::string CsvRecord(const std::vector<std::string>& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string& f = fields[i];
    if (i > 0) out += ',';
    if (f.find_first_of(",\"\r\n") == std::string::npos) {
      out += f;
      continue;
    }
    out += '"';
    for (char c : f) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    out += '"';
  }
  return out + "\n";
}

}  // namespace dist_train
