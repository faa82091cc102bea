// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The SPANK plugin's two configuration parsers (lib/contract/options.h),
// which read what users (--dist-train) and admins (plugstack.conf) write.
// Input: the first line is the --dist-train value, every further line one
// plugstack argument. Properties: an accepted --dist-train value formats
// to a canonical spelling that parses again to itself; a refused
// plugstack line leaves the configuration untouched; an accepted one has
// a usable port range and a port in it for any job.

#include <string>
#include <vector>

#include "contract/options.h"
#include "contract/port.h"
#include "fuzz/fuzz_check.h"

namespace dist_train {
namespace {

void JobWordsRoundTrip(const std::string& text) {
  JobOptions opts;
  if (!ParseJobOptions(text.c_str(), &opts).ok()) return;
  const std::string canonical = FormatJobOptions(opts);
  JobOptions again;
  Status s = ParseJobOptions(canonical.c_str(), &again);
  FuzzCheck(s.ok(), "FormatJobOptions wrote what ParseJobOptions refuses",
            "'" + text + "' -> '" + canonical + "': " + s.message());
  FuzzCheck(FormatJobOptions(again) == canonical,
            "FormatJobOptions is not canonical", text);
  EffectiveBind(PluginConfig(), opts);
}

void PlugstackArgs(const std::vector<std::string>& lines) {
  std::vector<const char*> argv;
  for (size_t i = 1; i < lines.size(); ++i) argv.push_back(lines[i].c_str());
  PluginConfig cfg;
  cfg.port_min = 1234;  // a value no parse gives back by accident
  cfg.port_max = 1234;
  Status s =
      ParsePluginConfig(static_cast<int>(argv.size()), argv.data(), &cfg);
  if (!s.ok()) {
    FuzzCheck(cfg.port_min == 1234 && cfg.port_max == 1234,
              "a refused plugstack line changed the configuration");
    return;
  }
  FuzzCheck(cfg.port_min <= cfg.port_max, "port range upside down",
            std::to_string(cfg.port_min) + "-" + std::to_string(cfg.port_max));
  uint16_t port =
      DerivePort(0xffffffffu, 0xfffffffeu, cfg.port_min, cfg.port_max);
  FuzzCheck(port >= cfg.port_min && port <= cfg.port_max,
            "DerivePort left the range");
}

}  // namespace

int FuzzOptions(const uint8_t* data, size_t size) {
  const std::vector<std::string> lines = FuzzLines(FuzzText(data, size));
  JobWordsRoundTrip(lines[0]);
  PlugstackArgs(lines);
  return 0;
}

}  // namespace dist_train

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dist_train::FuzzOptions(data, size);
}
