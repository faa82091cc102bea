// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// gen-sbatch: sbatch scripts and job-array sweeps from one YAML file.
// Exit codes: 0 ok, 1 error, 2 usage.
//
// Over 400 lines: the CLI11 definitions of every flag and subcommand, with
// their help text; the logic is in lib/jobgen.

#include <dirent.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <new>
#include <string>

#include "base/parse.h"
#include "base/slurm_compat.h"
#include "jobgen/collect.h"
#include "jobgen/input_file.h"
#include "jobgen/job_spec.h"
#include "jobgen/sbatch_script.h"
#include "jobgen/sweep.h"

namespace dist_train {
namespace {

// The most job arrays one sweep is split into.
constexpr size_t kMaxParts = 1000;

struct Args {
  std::string config, output, template_file, collect;
  std::vector<std::string> sets;
  bool submit = false, dry_run = false, list_sweep = false;
  bool csv = false, json = false;
};

std::string TemplateDir() {
  std::string installed = DT_TEMPLATE_DIR;
  if (access((installed + "/srun.sbatch").c_str(), R_OK) == 0) return installed;
  char exe[4096] = {0};
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  std::string dir = n > 0 ? std::string(exe, n) : "";
  dir = dir.substr(0, dir.rfind('/'));
  return dir + "/../../templates";  // the build tree: build/tools/gen-sbatch
}

Status LoadTemplate(const Args& a, const JobSpec& spec, std::string* name,
                    std::string* text) {
  *name = !a.template_file.empty()
              ? a.template_file
              : TemplateDir() + "/" + LaunchStyleName(spec.style) + ".sbatch";
  return ReadInputFile(*name, kMaxInputBytes, text);
}

// The cluster's MaxArraySize when --submit talks to it (only when a Slurm
// configuration exists: libslurm would otherwise retry for a minute).
void QueryMaxArraySize(JobSpec* spec) {
  uint32_t max = 0;
  if (SlurmInitOnce().ok() && LoadMaxArraySize(&max).ok() && max > 0)
    spec->max_array_size = max;
}

Status Submit(const std::string& script, const std::string& extra,
              std::string* job) {
  char path[] = "/tmp/gen-sbatch.XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return Status::IOError("mkstemp failed");
  bool written = write(fd, script.data(), script.size()) ==
                 static_cast<ssize_t>(script.size());
  close(fd);
  if (!written) return Status::IOError(std::string(path) + ": write failed");
  // stdout only: sbatch's warnings on stderr reach the user unchanged.
  std::string cmd = std::string("sbatch --parsable ") + extra + " " + path;
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  while (p != nullptr && fgets(buf, sizeof(buf), p) != nullptr) out += buf;
  int rc = p ? pclose(p) : -1;
  unlink(path);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  if (rc != 0)
    return Status::Unavailable("sbatch failed (exit " +
                               std::to_string(rc >> 8) + ")");
  std::string last = out.substr(
      out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1);
  *job = last.substr(0, last.find(';'));
  if (job->empty() ||
      job->find_first_not_of("0123456789") != std::string::npos) {
    return Status::Unavailable("sbatch printed no job id: '" + out + "'");
  }
  return Status::OK();
}

Status Write(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  if (!f) return Status::IOError(path + ": cannot write");
  return Status::OK();
}

// `dir` and its parents, like mkdir -p.
Status MakeDirs(const std::string& dir) {
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos < dir.size() && dir[pos] != '/') continue;
    std::string part = dir.substr(0, pos);
    if (mkdir(part.c_str(), 0777) != 0 && errno != EEXIST)
      return Status::IOError(part + ": " + strerror(errno));
  }
  return Status::OK();
}

// The sweep's run directory as the job sees it from its working directory
// (the one gen-sbatch --submit ran in).
std::string SweepDir(const JobSpec& spec, const std::string& job) {
  std::string root = spec.run_dir;
  const char* home = getenv("HOME");
  if (home != nullptr && (root == "~" || root.rfind("~/", 0) == 0))
    root = home + root.substr(1);
  return root + "/" + spec.name + "-" + job;
}

// --submit: all points of one job array in its run directory, so that
// --collect lists the points that have not started too.
Status WriteManifest(const JobSpec& spec, const std::vector<SweepPoint>& points,
                     const ScriptPart& part, const std::string& job) {
  SweepManifest m;
  uint64_t id = 0;
  ParseUint(job, 1, UINT32_MAX, &id);
  m.array_job_id = static_cast<uint32_t>(id);
  m.first = part.first;
  for (size_t i = part.first; i < part.first + part.count; ++i)
    m.points.push_back(Json::parse(PointParamsJson(points[i])));
  std::string dir = SweepDir(spec, job);
  DT_RETURN_IF_ERROR(MakeDirs(dir));
  return Write(dir + "/" + kManifestFile, FormatManifest(m));
}

// A JSON object file of a point, when there is one; a bad one is said on
// stderr and left out (one broken point must not hide the others).
Json ReadObject(const std::string& path) {
  Json j = Json::object();
  if (access(path.c_str(), F_OK) != 0) return j;
  std::string text;
  Status s = ReadInputFile(path, kMaxInputBytes, &text);
  if (s.ok()) s = ParseObjectFile(text, path, &j);
  if (!s.ok())
    fprintf(stderr, "gen-sbatch: --collect: %s\n", s.message().c_str());
  return s.ok() ? j : Json::object();
}

bool IsDir(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The points of a sweep directory: from its manifest, else from the point
// folders that exist (a script submitted by hand has no manifest).
Status CollectPoints(const std::string& dir, SweepManifest* m,
                     std::vector<CollectedPoint>* points) {
  std::string manifest = dir + "/" + kManifestFile;
  if (access(manifest.c_str(), F_OK) == 0) {
    std::string text;
    DT_RETURN_IF_ERROR(ReadInputFile(manifest, kMaxInputBytes, &text));
    DT_RETURN_IF_ERROR(ParseManifest(text, manifest, m));
    for (size_t i = 0; i < m->points.size(); ++i) {
      CollectedPoint p;
      p.index = m->first + i;
      p.params = m->points[i];
      points->push_back(p);
    }
    return Status::OK();
  }
  if (!ArrayJobIdOfDir(dir, &m->array_job_id))
    return Status::InvalidArgument(
        dir +
        ": not a sweep's run directory (RUN_DIR/<job name>-<array job "
        "id>, with " +
        kManifestFile + " or point folders)");
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return Status::IOError(dir + ": " + strerror(errno));
  std::vector<size_t> found;
  while (dirent* e = readdir(d)) {
    uint64_t n = 0;
    if (ParseUint(e->d_name, 0, UINT32_MAX, &n)) found.push_back(n);
  }
  closedir(d);
  std::sort(found.begin(), found.end());
  m->first = found.empty() ? 0 : found.front();
  for (size_t n : found) {
    CollectedPoint p;
    p.index = n;
    points->push_back(p);
  }
  return Status::OK();
}

// Each point's state from slurmctld (nothing when it no longer knows the
// array), its run folder's params and metrics.
void FillPoints(const std::string& dir, const SweepManifest& m,
                std::vector<CollectedPoint>* points) {
  std::map<uint32_t, std::string> states;
  std::string pending;
  Status s = SlurmInitOnce();
  if (s.ok()) s = LoadArrayTaskStates(m.array_job_id, &states, &pending);
  std::vector<uint32_t> waiting;
  if (s.ok() && !pending.empty() && ParseArrayTasks(pending, &waiting).ok())
    for (uint32_t t : waiting) states[t] = "PENDING";
  for (CollectedPoint& p : *points) {
    std::string run = dir + "/" + std::to_string(p.index);
    p.started = IsDir(run);
    auto it = states.find(static_cast<uint32_t>(p.index - m.first));
    if (it != states.end()) p.slurm_state = it->second;
    if (p.started) {
      Json params = ReadObject(run + "/" + kParamsFile);
      if (!params.empty()) p.params = params;
      p.metrics = ReadObject(run + "/" + kMetricsFile);
    }
  }
}

Status Collect(const Args& a) {
  std::string dir = a.collect;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (!IsDir(dir)) return Status::NotFound(dir + ": no such directory");
  SweepManifest m;
  std::vector<CollectedPoint> points;
  DT_RETURN_IF_ERROR(CollectPoints(dir, &m, &points));
  FillPoints(dir, m, &points);
  CollectFormat f = a.json  ? CollectFormat::kJson
                    : a.csv ? CollectFormat::kCsv
                            : CollectFormat::kTable;
  fputs(FormatCollected(points, f).c_str(), stdout);
  return Status::OK();
}

// With sweep.workdir: run a point's program starts in its run directory: a
// command word naming a file here by a relative path would not be found
// there. Said once, with the two ways out.
void NoteRelativeWords(const JobSpec& spec) {
  if (!spec.has_sweep || !spec.workdir_run) return;
  std::string words;
  for (const auto* list : {&spec.launcher, &spec.command}) {
    for (const std::string& w : *list) {
      if (w.empty() || w[0] == '/' || w[0] == '-' || w[0] == '~' ||
          w.find('$') != std::string::npos || access(w.c_str(), F_OK) != 0)
        continue;
      words += (words.empty() ? "'" : ", '") + w + "'";
    }
  }
  if (words.empty()) return;
  fprintf(stderr,
          "gen-sbatch: note: each sweep point runs in its run directory "
          "(sweep.workdir: run), where %s cannot be found by the relative "
          "path: write ${DT_SUBMIT_DIR}/... (the directory sbatch ran in), or "
          "set sweep.workdir: submit\n",
          words.c_str());
}

// A random sweep without a seed gets a fresh one, said on stderr and
// recorded in the script, so its points can be drawn again.
Status DrawSeed(JobSpec* spec) {
  SweepSpec& sw = spec->sweep;
  if (!spec->has_sweep || sw.random.empty() || sw.seed_given)
    return Status::OK();
  uint32_t seed = 0;
  if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
    return Status::IOError(std::string("getrandom: ") + strerror(errno));
  sw.seed = seed;
  sw.seed_given = true;
  fprintf(stderr,
          "gen-sbatch: sweep.random.seed not given: drew %u (the script "
          "records it; add seed: %u to sweep.random to draw these points "
          "again)\n",
          seed, seed);
  return Status::OK();
}

Status Run(const Args& a) {
  JobSpec spec;
  DT_RETURN_IF_ERROR(LoadJobSpec(a.config, a.sets, &spec));
  DT_RETURN_IF_ERROR(DrawSeed(&spec));
  NoteRelativeWords(spec);
  std::vector<SweepPoint> points;
  if (spec.has_sweep)
    DT_RETURN_IF_ERROR(ExpandSweep(spec.sweep, kMaxSweepPoints, &points));
  if (a.list_sweep) {
    fputs(SweepTable(points).c_str(), stdout);
    return Status::OK();
  }
  bool submit = a.submit && !a.dry_run;
  if (submit) QueryMaxArraySize(&spec);
  std::vector<ScriptPart> parts =
      SplitSweep(points.size(), spec.max_array_size);
  if (parts.size() > kMaxParts) {
    return Status::InvalidArgument(
        "the sweep has " + std::to_string(points.size()) +
        " points: with MaxArraySize " + std::to_string(spec.max_array_size) +
        " it needs " + std::to_string(parts.size()) +
        " job arrays; the limit is " + std::to_string(kMaxParts));
  }
  if (parts.size() > 1 && a.output.empty() && !submit) {
    return Status::InvalidArgument(
        "the sweep has " + std::to_string(points.size()) +
        " points, more than MaxArraySize " +
        std::to_string(spec.max_array_size) + ": it needs " +
        std::to_string(parts.size()) +
        " job arrays; use -o FILE (writes FILE, FILE.1, ...) or --submit");
  }
  std::string tname, ttext;
  DT_RETURN_IF_ERROR(LoadTemplate(a, spec, &tname, &ttext));
  std::string previous;
  for (size_t k = 0; k < parts.size(); ++k) {
    std::string script;
    DT_RETURN_IF_ERROR(
        RenderScript(spec, points, parts[k], ttext, tname, &script));
    if (!a.output.empty()) {
      DT_RETURN_IF_ERROR(
          Write(a.output + (k == 0 ? "" : "." + std::to_string(k)), script));
    } else if (!submit) {
      fputs(script.c_str(), stdout);
    }
    if (submit) {
      // With a parallel limit, each array starts after the previous one so
      // the limit holds across all of them.
      std::string extra = spec.parallel > 0 && !previous.empty()
                              ? "--dependency=afterany:" + previous
                              : "";
      DT_RETURN_IF_ERROR(Submit(script, extra, &previous));
      printf("%s\n", previous.c_str());
      if (spec.has_sweep) {
        Status s = WriteManifest(spec, points, parts[k], previous);
        if (!s.ok())
          fprintf(stderr,
                  "gen-sbatch: warning: no %s (--collect lists only started "
                  "points): %s\n",
                  kManifestFile, s.message().c_str());
      }
    }
  }
  return Status::OK();
}

}  // namespace
}  // namespace dist_train

int main(int argc, char** argv) {
  dist_train::Args a;
  CLI::App app{
      "gen-sbatch: an sbatch script (or job-array sweep) from one YAML file. "
      "See docs/gen-sbatch.md for every key."};
  app.set_version_flag("--version", DT_VERSION);
  app.add_option("config", a.config, "the YAML file");
  app.add_option("-o,--output", a.output,
                 "write the script here (sweeps split in parts: FILE.1, ...)");
  app.add_option("--set", a.sets,
                 "override a key, e.g. --set job.nodes=4 (repeatable)");
  app.add_flag("--submit", a.submit,
               "submit with sbatch and print the job id(s)");
  app.add_flag("--dry-run", a.dry_run, "validate and print, never submit");
  app.add_flag("--list-sweep", a.list_sweep,
               "print the table of sweep points and exit");
  app.add_option(
      "--template", a.template_file,
      "render with this template instead of templates/<style>.sbatch");
  auto* collect = app.add_option(
      "--collect", a.collect,
      "print a submitted sweep's points (state from Slurm, parameters, "
      "metrics.json): DIR is its run directory, RUN_DIR/<name>-<array job "
      "id>");
  auto* csv = app.add_flag("--csv", a.csv, "--collect: CSV instead of a table");
  auto* json =
      app.add_flag("--json", a.json, "--collect: JSON instead of a table");
  csv->needs(collect)->excludes(json);
  json->needs(collect);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (a.config.empty() == a.collect.empty()) {
    fprintf(stderr,
            "gen-sbatch: give a config file, or --collect DIR (not both)\n%s",
            app.help().c_str());
    return 2;
  }
  dist_train::Status s;
  try {
    s = a.collect.empty() ? dist_train::Run(a) : dist_train::Collect(a);
  } catch (const std::bad_alloc&) {
    s = dist_train::Status::InvalidArgument("out of memory");
  }
  if (!s.ok()) {
    // One line per error (a config's errors come all at once).
    std::string msg = s.message();
    for (size_t start = 0; start <= msg.size();) {
      size_t end = std::min(msg.find('\n', start), msg.size());
      fprintf(stderr, "gen-sbatch: %s\n",
              msg.substr(start, end - start).c_str());
      start = end + 1;
    }
    return 1;
  }
  return 0;
}
