// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "relay/proctrack.h"

#include "base/parse.h"
#include "base/small_file.h"

namespace dist_train {

bool ParseProctrack(std::string_view text, Proctrack* out) {
  struct {
    const char* name;
    Proctrack p;
  } const kNames[] = {{"auto", Proctrack::kAuto},
                      {"cgroup", Proctrack::kCgroup},
                      {"pgid", Proctrack::kPgid},
                      {"linuxproc", Proctrack::kLinuxproc}};
  for (const auto& n : kNames) {
    if (text == n.name) return *out = n.p, true;
  }
  return false;
}

const char* ProctrackName(Proctrack p) {
  switch (p) {
    case Proctrack::kAuto:
      return "auto";
    case Proctrack::kCgroup:
      return "cgroup";
    case Proctrack::kPgid:
      return "pgid";
    case Proctrack::kLinuxproc:
      return "linuxproc";
  }
  return "?";
}

Proctrack DetectProctrack(std::string_view cgroups) {
  for (std::string_view line : Split(cgroups, '\n')) {
    // "ID:CONTROLLERS:PATH"; v1 freezer is what proctrack/cgroup uses.
    size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string_view::npos || b == std::string_view::npos) continue;
    std::string_view controllers = line.substr(a + 1, b - a - 1);
    std::string_view path = line.substr(b + 1);
    bool step = path.find("/job_") != std::string_view::npos &&
                path.find("/step_") != std::string_view::npos;
    bool freezer = controllers.find("freezer") != std::string_view::npos;
    if (step && (freezer || controllers.empty())) return Proctrack::kCgroup;
  }
  return Proctrack::kPgid;
}

// With read(2), not an ifstream: it runs in every task process, where the
// first stream builds libstdc++'s whole classic locale (~30 facets, each a
// copy-on-write fault in a process forked from slurmstepd; perf of 16 x 4
// steps).
Proctrack ResolveProctrack(Proctrack configured) {
  return ResolveProctrack(configured, "/proc/self/cgroup");
}

namespace {

// A cgroup file too long for ResolveProctrack's first buffer, whole (its
// own frame, so that the usual case does not reach 64 KiB down the stack).
[[gnu::noinline]] Proctrack DetectFromLongFile(const char* cgroup_file) {
  char text[64 << 10];
  ssize_t len = ReadSmallFile(cgroup_file, text, sizeof(text));
  return DetectProctrack(
      std::string_view(text, len < 0 ? 0 : static_cast<size_t>(len)));
}

}  // namespace

Proctrack ResolveProctrack(Proctrack configured, const char* cgroup_file) {
  if (configured != Proctrack::kAuto) return configured;
  // One line per hierarchy: a few hundred bytes. A small buffer stays in
  // stack pages the task already used (a new one is a copy-on-write fault,
  // perf of 4 x 4 steps); a file that fills it is read again whole.
  char text[4 << 10];
  ssize_t len = ReadSmallFile(cgroup_file, text, sizeof(text));
  if (len >= 0 && static_cast<size_t>(len) + 1 >= sizeof(text))
    return DetectFromLongFile(cgroup_file);
  return DetectProctrack(
      std::string_view(text, len < 0 ? 0 : static_cast<size_t>(len)));
}

}  // namespace dist_train
