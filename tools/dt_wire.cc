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
#include "wiring/env_sink.h"
#include "wiring/node_binding.h"
#include "wiring/task_preflight.h"
#include "wiring/task_relay.h"
#include "wiring/task_wiring.h"

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
  std::string preflight;  // --preflight[=SECONDS]: "" not given
  std::string options;    // --dist-train words
  std::string config;     // plugstack.conf arguments, blank-separated
  std::vector<std::string> command;
};

// Everything one task needs: what the plugin keeps in its PluginState.
struct Wiring {
  PluginConfig config;
  JobOptions options;
  SlurmInputs in;
  NodeBinding binding;
  RelayTask relay;
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
  std::string token;
  bool made = false;
  s = JobToken(TokenRule::kJobOrFresh, getenv(kTokenVar), &token, &made);
  if (!s.ok()) {
    fprintf(stderr, "dt-wire: %s\n", s.message().c_str());
    return 1;
  }
  printf("export %s=%s\n", kTokenVar, token.c_str());
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

// The task's SLURM_* variables and the admin's XML (or live discovery):
// what the planner needs, as dt-wire learns it.
class EnvBindSource : public BindSource {
 public:
  EnvBindSource(const Wiring& w) : w_(w) {}

  Status LoadModel(NodeModel* model, std::string* source) override {
    const std::string& xml = w_.config.topology;
    *source = xml.empty() ? "live discovery" : xml;
    return LoadNodeModel(xml, model);
  }

  Status Request(const NodeModel& /*model*/, BindParts parts,
                 BindRequest* req) override {
    return BindRequestFromEnv(w_.in.env, w_.in.local_tasks, parts, req);
  }

  void NameRanks(BindPlan* plan) override {
    std::vector<uint32_t> ranks;
    if (!LocalGlobalRanks(w_.in.env, w_.in.local_tasks, w_.in.total_tasks,
                          &ranks)
             .ok()) {
      return;
    }
    for (RankPlan& r : plan->ranks)
      if (r.local_rank < ranks.size()) r.rank = ranks[r.local_rank];
  }

 private:
  const Wiring& w_;
};

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
  if (BindsStep(w->config, w->options, w->in.step_id)) {
    EnvBindSource source(*w);
    PlanNodeBinding(w->config, w->options, source, &w->binding);
  }
  ProcessEnvSink sink;
  DT_RETURN_IF_ERROR(
      WireTask(w->config, w->options, w->binding, &w->in, sink, &w->relay));
  if (EnvFind(w->in.env, kTokenVar) == nullptr && w->in.global_task_id == 0) {
    fprintf(stderr,
            "dt-wire: hint: eval \"$(dt-wire --job-env)\" in the batch script "
            "makes the job's secret (and looks up its facts once)\n");
  }
  return Status::OK();
}

// dt-preflight beside this dt-wire (the build tree, or the same bindir),
// unless --config names one.
std::string PreflightProgram(const PluginConfig& cfg) {
  if (cfg.preflight_program != DefaultPreflightProgram())
    return cfg.preflight_program;
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return cfg.preflight_program;
  std::string dir(self, static_cast<size_t>(n));
  std::string beside = dir.substr(0, dir.rfind('/') + 1) + "dt-preflight";
  return access(beside.c_str(), X_OK) == 0 ? beside : cfg.preflight_program;
}

// The preflight gate (wiring/task_preflight.h), as the plugin runs it.
Status Preflight(const Wiring& w) {
  PreflightSetting setting = EffectivePreflight(w.config, w.options);
  if (!PreflightApplies(w.options, setting, w.in.step_id)) return Status::OK();
  PreflightTask task{w.in.job_id, w.in.step_id, w.in.global_task_id,
                     w.in.total_tasks, w.in.local_task_id == 0};
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  std::string warning;
  Status s = RunTaskPreflight(PreflightProgram(w.config), setting, task,
                              std::move(env), &warning);
  if (!warning.empty() && w.in.global_task_id == 0)
    fprintf(stderr, "dt-wire: warning: %s\n", warning.c_str());
  return s;
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
  app.add_option("--preflight", a.preflight,
                 "check the step's nodes and network before PROGRAM, in at "
                 "most SECONDS (default 60); same as --dist-train=preflight")
      ->expected(0, 1)
      ->default_str("60");
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
  if (app.count("--preflight")) {
    uint32_t seconds = 0;
    if (!ParsePreflightSeconds(a.preflight, &seconds)) {
      fprintf(stderr,
              "dt-wire: --preflight: '%s' is not a number of seconds from 5 "
              "to 3600 or off\n",
              ShownValue(a.preflight).c_str());
      return 2;
    }
    std::string word =
        "preflight" + (a.preflight.empty() ? std::string() : "=" + a.preflight);
    a.options = a.options.empty() ? word : a.options + "," + word;
  }
  Wiring w;
  Status s = Wire(a, &w);
  if (s.ok()) s = Preflight(w);
  if (!s.ok()) {
    fprintf(stderr, "dt-wire: error: %s\n", s.message().c_str());
    return 1;
  }
  // In a --dist-train step the plugin's relay (or Slurm, under linuxproc)
  // already delivers warnings to this process: a second relay would deliver
  // each twice.
  if (w.options.enabled && !UnderSignalRelay()) {
    ProcessEnvSink sink;
    w.relay.shares_memory = false;
    StartTaskRelay(w.config, w.relay, EnvFind(w.in.env, "DT_PREEMPT_SIGNAL"),
                   sink);
  }
  std::vector<char*> args;
  for (std::string& c : a.command) args.push_back(c.data());
  args.push_back(nullptr);
  execvp(args[0], args.data());
  fprintf(stderr, "dt-wire: cannot run %s: %s\n", args[0], strerror(errno));
  return errno == ENOENT ? 127 : 126;
}
