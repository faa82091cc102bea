// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// dt-wire: what the SPANK plugin does for a --dist-train task, in user
// space, for clusters where the plugin is not installed:
//
//   eval "$(dt-wire --job-env [--dist-train=WORDS])"   # in the batch script
//   srun dt-wire -- python3 train.py                    # each task
//
// The same env contract (lib/contract/contract.h), binding plan
// (lib/binding) and warning relay (lib/relay) as the plugin, computed from
// the task's SLURM_* variables (lib/launcher/task_inputs.h) instead of
// SPANK items; then it becomes the relay and execs PROGRAM in its child.
// docs/user-guide.md, "Without the plugin".

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "base/env.h"
#include "base/hostlist.h"
#include "base/parse.h"
#include "base/slurm_compat.h"
#include "base/slurm_ids.h"
#include "binding/binding_env.h"
#include "binding/plan_report.h"
#include "binding/topology.h"
#include "contract/contract.h"
#include "contract/job_deadline.h"
#include "contract/options.h"
#include "contract/step_facts.h"
#include "contract/token.h"
#include "jobgen/shell_quote.h"
#include "launcher/hostfile.h"
#include "launcher/task_inputs.h"
#include "relay/signal_relay.h"

namespace dist_train {
namespace {

constexpr char kOptionsVar[] = "DT_WIRE_OPTIONS";  // the --dist-train words
constexpr char kConfigVar[] = "DT_WIRE_CONFIG";    // plugstack.conf words
// The job's facts --job-env looked up once (lib/contract/step_facts.h's
// format), so that tasks need no RPC of their own.
constexpr char kFactsVar[] = "DT_WIRE_FACTS";

struct Args {
  bool job_env = false;
  bool hostfile = false;
  std::string options;  // --dist-train words
  std::string config;   // plugstack.conf arguments, blank-separated
  std::vector<std::string> command;
};

// Everything one task needs: what the plugin keeps in its PluginState.
struct Wiring {
  PluginConfig config;
  JobOptions options;
  SlurmInputs in;
  NodeModel model;
  BindPlan plan;
  bool bound = false;
  std::string bind_note;  // why not bound, or the plan's warnings
  std::string topology_source;
};

Status ParseConfig(const std::string& text, PluginConfig* cfg) {
  std::istringstream words(text);
  std::vector<std::string> args;
  for (std::string w; words >> w;) args.push_back(w);
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  Status s = ParsePluginConfig(static_cast<int>(argv.size()), argv.data(), cfg);
  if (s.ok()) return s;
  return Status::InvalidArgument(std::string(kConfigVar) + ": " + s.message());
}

// The cluster's proctrack as a plugstack word ("proctrack=linuxproc"),
// unless the words name one already: what the relay must know, and what
// /proc/self/cgroup cannot tell apart (pgid and linuxproc).
std::string ProctrackWord(const std::string& config) {
  std::string type;
  if (config.find("proctrack=") != std::string::npos || !SlurmInitOnce().ok() ||
      !LoadProctrackType(&type).ok()) {
    return "";
  }
  Proctrack p;
  std::string name = type.substr(type.find('/') + 1);
  return ParseProctrack(name, &p) ? "proctrack=" + name : "";
}

// The job's end time, once for all its tasks (0: none or unknown).
void PrintFacts() {
  const char* job = getenv("SLURM_JOB_ID");
  uint64_t id = 0;
  JobTimes times;
  if (job == nullptr || !ParseUint(job, 1, UINT32_MAX, &id) ||
      !SlurmInitOnce().ok() ||
      !LoadJobTimes(static_cast<uint32_t>(id), &times).ok()) {
    return;
  }
  StepFacts facts;
  facts.job_id = static_cast<uint32_t>(id);
  facts.job_end_time = JobDeadline(times);
  printf("export %s=%s\n", kFactsVar,
         ShellQuote(FormatStepFacts(facts)).c_str());
}

// `eval "$(dt-wire --job-env)"`: the job's secret (kept when the job
// already has a valid one), its facts and the words for every task.
int PrintJobEnv(const Args& a) {
  PluginConfig cfg;
  JobOptions opts;
  Status s = ParseConfig(a.config, &cfg);
  if (s.ok()) s = ParseJobOptions(a.options.c_str(), &opts);
  if (!s.ok()) {
    fprintf(stderr, "dt-wire: %s\n", s.message().c_str());
    return 2;
  }
  const char* token = getenv(kTokenVar);
  std::string fresh;
  if (token == nullptr || !CheckToken(token).ok()) {
    s = GenerateToken(&fresh);
    if (!s.ok()) {
      fprintf(stderr, "dt-wire: %s\n", s.message().c_str());
      return 1;
    }
    token = fresh.c_str();
  }
  printf("export %s=%s\n", kTokenVar, token);
  if (!a.options.empty())
    printf("export %s=%s\n", kOptionsVar, ShellQuote(a.options).c_str());
  std::string config = a.config, word = ProctrackWord(a.config);
  if (!word.empty()) config += (config.empty() ? "" : " ") + word;
  if (!config.empty())
    printf("export %s=%s\n", kConfigVar, ShellQuote(config).c_str());
  PrintFacts();
  return 0;
}

// Best effort, as in the plugin: without it DT_JOB_DEADLINE is not set.
// From --job-env's facts when they are this job's, else one RPC.
void LoadDeadline(Wiring* w) {
  StepFacts facts;
  const std::string* text = EnvFind(w->in.env, kFactsVar);
  if (text != nullptr && ParseStepFacts(*text, &facts).ok() &&
      facts.job_id == w->in.job_id) {
    w->in.job_end_time = facts.job_end_time;
    return;
  }
  JobTimes times;
  if (SlurmInitOnce().ok() && LoadJobTimes(w->in.job_id, &times).ok())
    w->in.job_end_time = JobDeadline(times);
}

Status LoadFirstNodeAddr(Wiring* w) {
  if (w->config.master_addr != AddrPolicy::kNodeAddr) return Status::OK();
  std::string var = JobOrStepVar(w->in.step_id, "NODELIST");
  const std::string* list = EnvFind(w->in.env, var);
  if (list == nullptr) return Status::NotFound(var + " is not set");
  std::string first;
  int count = 0;
  DT_RETURN_IF_ERROR(FirstHost(*list, var.c_str(), &first, &count));
  Status s = SlurmInitOnce();
  if (s.ok()) s = LoadNodeAddr(first, &w->in.first_node_addr);
  if (s.ok()) return s;
  return Status::Unavailable("master_addr=nodeaddr: " + s.message());
}

Status PlanNode(Wiring* w) {
  const std::string& xml = w->config.topology;
  w->topology_source = xml.empty() ? "live discovery" : xml;
  DT_RETURN_IF_ERROR(LoadNodeModel(xml, &w->model));
  BindRequest req;
  DT_RETURN_IF_ERROR(BindRequestFromEnv(w->in.env, w->in.local_tasks,
                                        EffectiveBind(w->config, w->options),
                                        &req));
  DT_RETURN_IF_ERROR(PlanBinding(w->model, req, &w->plan));
  std::vector<uint32_t> ranks;
  if (LocalGlobalRanks(w->in.env, w->in.local_tasks, w->in.total_tasks, &ranks)
          .ok()) {
    for (RankPlan& r : w->plan.ranks)
      if (r.local_rank < ranks.size()) r.rank = ranks[r.local_rank];
  }
  return Status::OK();
}

// Task mode only, as in the plugin; a failure means no binding and a note.
void Bind(Wiring* w) {
  BindParts parts = EffectiveBind(w->config, w->options);
  if (w->options.mode.value_or(w->config.default_mode) != Mode::kTask ||
      (!parts.cpu && !parts.gpu && !parts.nic)) {
    return;
  }
  Status s = PlanNode(w);
  w->bind_note = BindingNote(s, w->plan);
  w->bound = s.ok();
  if (!s.ok()) return;
  const RankPlan* mine = nullptr;
  for (const RankPlan& r : w->plan.ranks)
    if (r.local_rank == w->in.local_task_id) mine = &r;
  if (mine == nullptr) return;
  BindingEnvInputs in;
  in.parts = parts;
  in.nccl_ib_hca = w->config.nccl_ib_hca;
  const std::string* cvd = EnvFind(w->in.env, "CUDA_VISIBLE_DEVICES");
  if (cvd != nullptr) in.slurm_cuda_visible_devices = *cvd;
  w->in.binding = BindingEnv(w->model, w->plan, *mine, in);
}

Status Apply(const EnvPlan& plan) {
  for (const std::string& name : plan.unset) unsetenv(name.c_str());
  for (const auto& [name, value] : plan.set) {
    if (setenv(name.c_str(), value.c_str(), 1) != 0)
      return Status::IOError("set " + name + ": " + strerror(errno));
  }
  return Status::OK();
}

std::string ApplyAffinity(const Wiring& w) {
  if (!w.bound || !EffectiveBind(w.config, w.options).cpu) return "";
  for (const RankPlan& r : w.plan.ranks) {
    if (r.local_rank != w.in.local_task_id || r.cpus.empty()) continue;
    Status s = ApplyCpuAffinity(r.cpus);
    if (!s.ok()) {
      return "dist-train: warning: local rank " + std::to_string(r.local_rank) +
             ": " + s.message();
    }
  }
  return "";
}

// The same lines the plugin prints on the task's stderr.
void Report(const Wiring& w, const EnvPlan& plan,
            const std::string& affinity_warning) {
  bool first_on_node = w.in.local_task_id == 0;
  if (plan.verbose) fprintf(stderr, "%s\n", plan.summary.c_str());
  if (plan.verbose && first_on_node && w.bound) {
    const std::string* host = EnvFind(w.in.env, "SLURMD_NODENAME");
    fprintf(stderr, "dist-train: binding on %s (topology: %s):\n%s",
            host ? host->c_str() : "?", w.topology_source.c_str(),
            PlanTable(w.model, w.plan).c_str());
  }
  if (first_on_node && !w.bind_note.empty())
    fprintf(stderr, "%s\n", w.bind_note.c_str());
  if (!affinity_warning.empty())
    fprintf(stderr, "%s\n", affinity_warning.c_str());
  if (plan.verbose || (first_on_node && w.in.node_id == 0)) {
    for (const std::string& warning : plan.warnings)
      fprintf(stderr, "%s\n", warning.c_str());
  }
  fflush(stderr);
}

// Forks the warning relay like the plugin's task_init; returns in the
// child (the program to exec) or when no relay is needed or possible. In a
// --dist-train step the plugin's relay (or Slurm, under linuxproc) already
// delivers warnings to this process: a second relay would deliver each twice.
void StartRelay(const Wiring& w) {
  if (!w.config.signal_relay || UnderSignalRelay()) return;
  RelayConfig cfg;
  cfg.proctrack = ResolveProctrack(w.config.proctrack);
  if (cfg.proctrack == Proctrack::kLinuxproc) {
    // Slurm signals every process itself: launchers must not forward.
    setenv(kRelayVar, std::to_string(getpid()).c_str(), 1);
    return;
  }
  if (!CanListChildren()) {
    fprintf(stderr,
            "dist-train: warning: this kernel does not list "
            "/proc/PID/task/TID/children; preemption warnings reach only "
            "what Slurm signals itself\n");
    return;
  }
  cfg.warning_mask = WithJobWarningSignal(
      w.config.warning_signals, EnvFind(w.in.env, "DT_PREEMPT_SIGNAL"));
  setenv(kRelayVar, std::to_string(getpid()).c_str(), 1);
  fflush(stdout);
  fflush(stderr);
  pid_t relay = 0;
  Status s = StartSignalRelay(cfg, &relay);
  if (!s.ok()) {
    unsetenv(kRelayVar);
    fprintf(stderr, "dist-train: warning: no preemption relay: %s\n",
            s.message().c_str());
    return;
  }
  setenv("SLURM_TASK_PID", std::to_string(getpid()).c_str(), 1);
}

// Computes and applies this task's wiring; an error fails the task.
Status Wire(const Args& a, Wiring* w) {
  DT_RETURN_IF_ERROR(ParseConfig(a.config, &w->config));
  Status s = ParseJobOptions(a.options.c_str(), &w->options);
  if (!s.ok())
    return Status::InvalidArgument(std::string(kOptionsVar) + ": " +
                                   s.message());
  if (!w->options.enabled) return Status::OK();
  DT_RETURN_IF_ERROR(TaskInputsFromEnv(ProcessEnv(), &w->in));
  LoadDeadline(w);
  DT_RETURN_IF_ERROR(LoadFirstNodeAddr(w));
  Bind(w);
  EnvPlan plan;
  DT_RETURN_IF_ERROR(PlanTaskEnv(w->config, w->options, w->in, &plan));
  DT_RETURN_IF_ERROR(Apply(plan));
  Report(*w, plan, ApplyAffinity(*w));
  if (EnvFind(w->in.env, kTokenVar) == nullptr && w->in.global_task_id == 0) {
    fprintf(stderr,
            "dt-wire: hint: eval \"$(dt-wire --job-env)\" in the batch script "
            "makes the job's secret (and looks up its facts once)\n");
  }
  return Status::OK();
}

// --hostfile: DeepSpeed's hostfile for the job, slots from the nproc word.
int PrintHostfile(const Args& a) {
  JobOptions opts;
  Status s = ParseJobOptions(a.options.c_str(), &opts);
  std::string text;
  if (s.ok()) s = DeepSpeedHostfile(ProcessEnv(), opts.nproc, &text);
  if (!s.ok()) {
    fprintf(stderr, "dt-wire: %s\n", s.message().c_str());
    return 1;
  }
  fputs(text.c_str(), stdout);
  return 0;
}

std::string FromEnv(const char* name) {
  const char* v = getenv(name);
  return v ? v : "";
}

int Usage(CLI::App& app, const CLI::ParseError& e) {
  int rc = app.exit(e);
  return rc == 0 ? 0 : 2;
}

}  // namespace
}  // namespace dist_train

int main(int argc, char** argv) {
  using namespace dist_train;  // NOLINT: a thin main
  Args a;
  a.options = FromEnv(kOptionsVar);
  a.config = FromEnv(kConfigVar);
  CLI::App app{
      "dt-wire: the dist-train plugin's contract, binding and warning relay "
      "for one srun task, without the plugin"};
  app.set_version_flag("--version", DT_VERSION);
  app.footer(
      "In the batch script: eval \"$(dt-wire --job-env)\" once, then "
      "srun dt-wire -- PROGRAM ARGS... Exit status: PROGRAM's (dt-wire "
      "execs it); 1 when the task cannot be wired, 2 for usage errors.");
  app.add_flag("--job-env", a.job_env,
               "print the job's exports (DT_JOB_TOKEN, and the words of "
               "--dist-train/--config for every task) for eval");
  app.add_flag("--hostfile", a.hostfile,
               "print DeepSpeed's hostfile for the job (\"host slots=N\", "
               "node order; N: nproc=, else GPUs, else tasks per node)");
  app.add_option("--dist-train", a.options,
                 "the --dist-train words (" + JobWordSyntax() +
                     "); default: $DT_WIRE_OPTIONS");
  app.add_option("--config", a.config,
                 "plugstack.conf arguments an admin would give the plugin, "
                 "blank-separated; default: $DT_WIRE_CONFIG");
  app.add_option("command", a.command, "the program and its arguments");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return Usage(app, e);
  }
  if (a.job_env) return PrintJobEnv(a);
  if (a.hostfile) return PrintHostfile(a);
  if (a.command.empty()) {
    fprintf(stderr, "dt-wire: no program: srun dt-wire -- PROGRAM ARGS...\n");
    return 2;
  }
  Wiring w;
  Status s = Wire(a, &w);
  if (!s.ok()) {
    fprintf(stderr, "dt-wire: error: %s\n", s.message().c_str());
    return 1;
  }
  if (w.options.enabled) StartRelay(w);
  std::vector<char*> args;
  for (std::string& c : a.command) args.push_back(c.data());
  args.push_back(nullptr);
  execvp(args[0], args.data());
  fprintf(stderr, "dt-wire: cannot run %s: %s\n", args[0], strerror(errno));
  return errno == ENOENT ? 127 : 126;
}
