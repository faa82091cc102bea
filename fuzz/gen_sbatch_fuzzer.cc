// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// gen-sbatch from YAML to script (lib/jobgen): the input is the config
// file; its comment lines `#set KEY=VALUE` are also given as --set
// overrides. An accepted config is expanded (at most kMaxPoints sweep
// points, to keep each run short) and rendered with the stock template of
// its launch style. The config's verbatim `setup:` lines are dropped, so
// that what remains is gen-sbatch's own output, where no value may start
// a command: the first line that is not a comment must be the templates'
// `set -euo pipefail` (a newline smuggled into an #SBATCH value would come
// first), and the command line must start with a program, not an
// assignment or shell syntax. With DT_FUZZ_SCRIPTS=DIR every rendered
// script is also written there, for fuzz/run's `bash -n` pass over the
// corpus.

#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "jobgen/job_spec.h"
#include "jobgen/sbatch_script.h"
#include "jobgen/sweep.h"

namespace dist_train {
namespace {

constexpr size_t kMaxPoints = 4096;

const std::string& Template(LaunchStyle style) {
  static std::map<LaunchStyle, std::string> cache;
  std::string& text = cache[style];
  if (text.empty()) {
    std::ifstream f(std::string(DT_SOURCE_DIR) + "/templates/" +
                    LaunchStyleName(style) + ".sbatch");
    std::stringstream ss;
    ss << f.rdbuf();
    text = ss.str();
    FuzzCheck(!text.empty(), "cannot read the template",
              LaunchStyleName(style));
  }
  return text;
}

std::vector<std::string> Sets(const std::string& yaml) {
  std::vector<std::string> sets;
  for (const std::string& line : FuzzLines(yaml)) {
    if (line.rfind("#set ", 0) == 0) sets.push_back(line.substr(5));
  }
  return sets;
}

// The first line that is neither blank nor a comment.
std::string FirstCommand(const std::string& script) {
  for (const std::string& line : FuzzLines(script)) {
    size_t start = line.find_first_not_of(" \t");
    if (start != std::string::npos && line[start] != '#') return line;
  }
  return "";
}

// The script's last line runs launch.command (every stock template ends
// so): its first word must be a program, not an assignment or a word that
// bash reads as syntax (a custom style's command starts the line).
// The last command of the script, from the start of its line: a quoted
// word may hold newlines, so lines are counted outside quotes only (the
// generated script quotes with '...' and escapes a quote as \').
std::string LastCommand(const std::string& script) {
  size_t start = 0, last = 0;
  bool quoted = false;
  for (size_t i = 0; i < script.size(); ++i) {
    char c = script[i];
    if (quoted) {
      quoted = c != '\'';
    } else if (c == '\\') {
      ++i;
    } else if (c == '\'') {
      quoted = true;
    } else if (c == '\n') {
      std::string line = script.substr(start, i - start);
      if (line.find_first_not_of(" \t") != std::string::npos) last = start;
      start = i + 1;
    }
  }
  std::string tail = script.substr(start);
  if (tail.find_first_not_of(" \t\n") != std::string::npos) last = start;
  return script.substr(last);
}

bool RunsAProgram(const std::string& script) {
  std::string last = LastCommand(script);
  const std::string word = last.substr(0, last.find(' '));
  static const char* const kSyntax[] = {
      "!",     "case",  "coproc",   "do", "done", "elif",   "else", "esac",
      "fi",    "for",   "function", "if", "in",   "select", "then", "time",
      "until", "while", "{",        "}",  "[[",   "]]"};
  for (const char* s : kSyntax) {
    if (word == s) return false;
  }
  size_t eq = word.find('=');
  if (eq == std::string::npos || eq == 0) return true;
  std::string name = word.substr(0, word[eq - 1] == '+' ? eq - 1 : eq);
  return name.empty() || (name[0] >= '0' && name[0] <= '9') ||
         name.find_first_not_of(
             "abcdefghijklmnopqrstuvwxyz"
             "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != std::string::npos;
}

void Keep(const std::string& script) {
  const char* dir = getenv("DT_FUZZ_SCRIPTS");
  if (dir == nullptr) return;
  std::string name = std::to_string(std::hash<std::string>()(script));
  std::ofstream(std::string(dir) + "/" + name + ".sbatch") << script;
}

void Render(const JobSpec& spec, const std::vector<SweepPoint>& points,
            const ScriptPart& part) {
  std::string script;
  const std::string& text = Template(spec.style);
  if (!RenderScript(spec, points, part, text, "fuzz.sbatch", &script).ok())
    return;
  FuzzCheck(FirstCommand(script) == "set -euo pipefail",
            "a value starts a command in the script", FirstCommand(script));
  FuzzCheck(RunsAProgram(script),
            "launch.command does not start with a program", script);
  Keep(script);
}

}  // namespace

int FuzzGenSbatch(const uint8_t* data, size_t size) {
  const std::string yaml(FuzzText(data, size));
  JobSpec spec;
  if (!ParseJobSpec(yaml, "fuzz.yaml", Sets(yaml), &spec).ok()) return 0;
  spec.setup.clear();  // verbatim shell by design
  std::vector<SweepPoint> points;
  if (spec.has_sweep && !ExpandSweep(spec.sweep, kMaxPoints, &points).ok())
    return 0;
  std::vector<ScriptPart> parts =
      SplitSweep(points.size(), spec.max_array_size);
  Render(spec, points, parts.front());
  if (parts.size() > 1) Render(spec, points, parts.back());
  return 0;
}

}  // namespace dist_train

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dist_train::FuzzGenSbatch(data, size);
}
