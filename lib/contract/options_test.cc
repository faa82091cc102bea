// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "contract/options.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace dist_train {
namespace {

TEST(JobOptionsTest, FlagWithoutValueMeansOnInEveryForm) {
  for (const char* text :
       {static_cast<const char*>(nullptr), "", "(null)", "on"}) {
    JobOptions opts;
    opts.enabled = false;
    ASSERT_TRUE(ParseJobOptions(text, &opts).ok()) << (text ? text : "NULL");
    EXPECT_TRUE(opts.enabled);
    EXPECT_FALSE(opts.mode.has_value());
    EXPECT_EQ(FormatJobOptions(opts), "on");
  }
}

TEST(JobOptionsTest, ParsesAllWords) {
  JobOptions opts;
  ASSERT_TRUE(ParseJobOptions("mode=node,nproc=8,verbose", &opts).ok());
  EXPECT_TRUE(opts.enabled);
  EXPECT_EQ(opts.mode, Mode::kNode);
  EXPECT_EQ(opts.nproc, 8u);
  EXPECT_EQ(opts.verbose, true);
  EXPECT_EQ(FormatJobOptions(opts), "mode=node,nproc=8,verbose");

  ASSERT_TRUE(ParseJobOptions("quiet,mode=task,nproc=auto", &opts).ok());
  EXPECT_EQ(opts.mode, Mode::kTask);
  EXPECT_FALSE(opts.nproc.has_value());
  EXPECT_EQ(opts.verbose, false);

  ASSERT_TRUE(ParseJobOptions("off", &opts).ok());
  EXPECT_FALSE(opts.enabled);
  EXPECT_EQ(FormatJobOptions(opts), "off");
}

TEST(JobOptionsTest, FormatRoundTrips) {
  for (const char* text :
       {"on", "off", "mode=node", "nproc=3,quiet", "mode=task,nproc=1,verbose",
        "bind=cpu+gpu,cpu-share=domain", "bind=nic"}) {
    JobOptions a, b;
    ASSERT_TRUE(ParseJobOptions(text, &a).ok()) << text;
    ASSERT_TRUE(ParseJobOptions(FormatJobOptions(a).c_str(), &b).ok());
    EXPECT_EQ(FormatJobOptions(a), FormatJobOptions(b)) << text;
  }
}

struct ErrorCase {
  const char* input;
  const char* message;
};

TEST(JobOptionsTest, EveryErrorMessageExactly) {
  const std::vector<ErrorCase> cases = {
      {"mdoe=task",
       "--dist-train: unknown word 'mdoe=task' (did you mean 'mode'?); valid "
       "words: on, off, mode=task|node, nproc=N|auto, "
       "bind=all|none|cpu+gpu+nic, "
       "cpu-share=exclusive|domain, preflight[=SECONDS|off], "
       "preflight-policy=warn|fail|requeue, watchdog=SECONDS|off, "
       "watchdog-policy=fail|requeue, node-loss=fail|requeue, verbose, "
       "quiet"},
      {"banana",
       "--dist-train: unknown word 'banana'; valid words: on, off, "
       "mode=task|node, nproc=N|auto, bind=all|none|cpu+gpu+nic, "
       "cpu-share=exclusive|domain, preflight[=SECONDS|off], "
       "preflight-policy=warn|fail|requeue, watchdog=SECONDS|off, "
       "watchdog-policy=fail|requeue, node-loss=fail|requeue, verbose, "
       "quiet"},
      {"verbos",
       "--dist-train: unknown word 'verbos' (did you mean 'verbose'?); valid "
       "words: on, off, mode=task|node, nproc=N|auto, "
       "bind=all|none|cpu+gpu+nic, "
       "cpu-share=exclusive|domain, preflight[=SECONDS|off], "
       "preflight-policy=warn|fail|requeue, watchdog=SECONDS|off, "
       "watchdog-policy=fail|requeue, node-loss=fail|requeue, verbose, "
       "quiet"},
      {"mode=gpu",
       "--dist-train: bad value 'gpu' for 'mode'; valid values: task or node"},
      {"node-loss=later",
       "--dist-train: bad value 'later' for 'node-loss'; valid values: fail "
       "or requeue"},
      {"watchdog-policy=maybe",
       "--dist-train: bad value 'maybe' for 'watchdog-policy'; valid values: "
       "fail or requeue"},
      // a value someone else may read in a log: escaped, never a new line
      {"mode=\n\x1b[31mok",
       "--dist-train: bad value '\\x0a\\x1b[31mok' for 'mode'; valid values: "
       "task or node"},
      {"mode=",
       "--dist-train: bad value '' for 'mode'; valid values: task or node"},
      {"nproc=0",
       "--dist-train: bad value '0' for 'nproc'; valid values: a number from "
       "1 to 1024 or auto"},
      {"nproc=8x",
       "--dist-train: bad value '8x' for 'nproc'; valid values: a number "
       "from 1 to 1024 or auto"},
      {"mode", "--dist-train: 'mode' needs a value, e.g. mode=node"},
      {"nproc", "--dist-train: 'nproc' needs a value, e.g. nproc=8"},
      {"bind", "--dist-train: 'bind' needs a value, e.g. bind=cpu+nic"},
      {"cpu-share",
       "--dist-train: 'cpu-share' needs a value, e.g. cpu-share=domain"},
      {"bind=cpu+gpu+cpu",
       "--dist-train: bad value 'cpu+gpu+cpu' for 'bind'; valid values: all, "
       "none "
       "or a +-list of cpu, gpu, nic (e.g. bind=cpu+nic)"},
      {"bind=disk",
       "--dist-train: bad value 'disk' for 'bind'; valid values: all, none or "
       "a "
       "+-list of cpu, gpu, nic (e.g. bind=cpu+nic)"},
      {"cpu-share=none",
       "--dist-train: bad value 'none' for 'cpu-share'; valid values: "
       "exclusive "
       "or domain"},
      {"preflight=4",
       "--dist-train: bad value '4' for 'preflight'; valid values: a number "
       "of seconds from 5 to 3600 or off"},
      {"preflight=60s",
       "--dist-train: bad value '60s' for 'preflight'; valid values: a "
       "number of seconds from 5 to 3600 or off"},
      {"preflight=",
       "--dist-train: bad value '' for 'preflight'; valid values: a number "
       "of seconds from 5 to 3600 or off"},
      {"preflight-policy=retry",
       "--dist-train: bad value 'retry' for 'preflight-policy'; valid "
       "values: warn, fail or requeue"},
      {"preflight-policy",
       "--dist-train: 'preflight-policy' needs a value, e.g. "
       "preflight-policy=fail"},
      {"preflight,preflight=30", "--dist-train: 'preflight' given twice"},
      {"nproc=auto,nproc=4", "--dist-train: 'nproc' given twice"},
      {"bind=none,bind=all", "--dist-train: 'bind' given twice"},
      {"on,on", "--dist-train: 'on' given twice"},
      {"mode=task,mode=node", "--dist-train: 'mode' given twice"},
      {"verbose,quiet", "--dist-train: 'verbose/quiet' given twice"},
      {"quiet,quiet", "--dist-train: 'verbose/quiet' given twice"},
      {"verbose,,mode=task",
       "--dist-train: empty word in 'verbose,,mode=task'"},
      {",", "--dist-train: empty word in ','"},
      {"off,verbose",
       "--dist-train: 'off' cannot be combined with other words in "
       "'off,verbose'"},
  };
  for (const ErrorCase& c : cases) {
    JobOptions opts;
    opts.mode = Mode::kNode;
    Status s = ParseJobOptions(c.input, &opts);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << c.input;
    EXPECT_EQ(s.message(), c.message) << c.input;
    EXPECT_EQ(opts.mode, Mode::kNode) << "output changed on error: " << c.input;
  }
}

TEST(JobWordsTest, EveryWordFormatsBackToItself) {
  for (const JobWord& w : JobWords()) {
    std::string word = w.example ? w.example : w.name;
    JobOptions opts;
    ASSERT_TRUE(ParseJobOptions(word.c_str(), &opts).ok()) << word;
    EXPECT_EQ(FormatJobOptions(opts), word);
  }
}

TEST(JobWordsTest, HelpTextListsEveryWord) {
  EXPECT_EQ(JobWordSyntax(),
            "on, off, mode=task|node, nproc=N|auto, bind=all|none|cpu+gpu+nic, "
            "cpu-share=exclusive|domain, preflight[=SECONDS|off], "
            "preflight-policy=warn|fail|requeue, watchdog=SECONDS|off, "
            "watchdog-policy=fail|requeue, node-loss=fail|requeue, verbose, "
            "quiet");
  EXPECT_EQ(
      OptionHelpText(),
      "Wire tasks for distributed training (MASTER_ADDR/PORT, RANK, "
      "WORLD_SIZE, LOCAL_RANK, PET_*...). OPTIONS: comma-separated words: "
      "on: enable with the site defaults (same as no value); "
      "off: do not wire this step; "
      "mode=task|node: each Slurm task is one worker, or one task per node "
      "runs a launcher; "
      "nproc=N|auto: workers per node announced in node mode (auto: the "
      "node's GPUs, else 1); "
      "bind=all|none|cpu+gpu+nic: which parts of the topology binding apply: "
      "CPU share, GPU, nearest NIC; "
      "cpu-share=exclusive|domain: disjoint whole-core shares of the GPU's "
      "CPUs, or all of them per rank; "
      "preflight[=SECONDS|off]: check every node and the network before the "
      "program starts, in at most SECONDS (default 60); "
      "preflight-policy=warn|fail|requeue: when preflight names a bad or "
      "slow node: report and go on, end the step, or end it and requeue the "
      "job without that node; "
      "watchdog=SECONDS|off: when no rank progressed for SECONDS, dump every "
      "rank's stacks, name the ranks that hung and end the step "
      "(DT_WATCHDOG); "
      "watchdog-policy=fail|requeue: after a hang: end the step, or end it "
      "and requeue the job without the nodes of the ranks that hung; "
      "node-loss=fail|requeue: when a rank's machine stops answering (no TCP "
      "reply for 10 s): end the step, or end it and requeue the job without "
      "that node; "
      "verbose: print one wiring line per task to the job's stderr; "
      "quiet: do not print it even if the site made verbose the default. "
      "See dist-train's docs/user-guide.md.");
}

std::string UserGuide() {
  std::ifstream in(std::string(DT_SOURCE_DIR) + "/docs/user-guide.md");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The first cell of each row between the guide's word markers, with
// Markdown's `\|` (a | inside a table cell) read as |.
std::vector<std::string> GuideWords(const std::string& guide) {
  size_t begin = guide.find("<!-- dist-train words:");
  size_t end = guide.find("<!-- end of dist-train words -->", begin);
  if (begin == std::string::npos || end == std::string::npos) return {};
  std::istringstream rows(guide.substr(begin, end - begin));
  std::vector<std::string> words;
  for (std::string row; std::getline(rows, row);) {
    if (row.rfind("| `", 0) != 0) continue;  // marker, header, separator
    std::string cell = row.substr(3, row.find("` |") - 3);
    for (size_t bar; (bar = cell.find("\\|")) != std::string::npos;) {
      cell.erase(bar, 1);
    }
    words.push_back(cell);
  }
  return words;
}

TEST(JobWordsTest, UserGuideListsExactlyTheTableWords) {
  std::vector<std::string> want;
  for (const JobWord& w : JobWords()) want.push_back(WordUsage(w));
  EXPECT_EQ(GuideWords(UserGuide()), want)
      << "docs/user-guide.md's word table differs from JobWords()";
}

TEST(JobWordsTest, UserGuideShowsTheRealTypoMessage) {
  JobOptions opts;
  std::string line =
      "sbatch: error: " + ParseJobOptions("mdoe=node", &opts).message() + "\n";
  EXPECT_NE(UserGuide().find(line), std::string::npos) << line;
}

Status ParseArgs(std::vector<const char*> args, PluginConfig* cfg) {
  return ParsePluginConfig(static_cast<int>(args.size()), args.data(), cfg);
}

TEST(PluginConfigTest, DefaultsWithoutArguments) {
  PluginConfig cfg;
  ASSERT_TRUE(ParseArgs({}, &cfg).ok());
  EXPECT_EQ(cfg.port_min, 20000);
  EXPECT_EQ(cfg.port_max, 32767);
  EXPECT_EQ(cfg.default_mode, Mode::kTask);
  EXPECT_EQ(cfg.master_addr, AddrPolicy::kHostname);
  EXPECT_EQ(cfg.master_addr_suffix, "");
  EXPECT_FALSE(cfg.verbose);
  EXPECT_TRUE(cfg.omp_num_threads);
  EXPECT_TRUE(cfg.carry_to_steps);
  EXPECT_EQ(cfg.preflight_seconds, 0u);
  EXPECT_EQ(cfg.preflight_policy, PreflightPolicy::kWarn);
  EXPECT_EQ(cfg.preflight_program[0], '/');
}

TEST(PluginConfigTest, PreflightMinimumsReachEveryStep) {
  PluginConfig cfg;
  ASSERT_TRUE(
      ParseArgs({"preflight_min_cpu_gflops=2.5", "preflight_min_mem_gbps=12",
                 "preflight_min_link_mbps=100000"},
                &cfg)
          .ok());
  JobOptions opts;
  ASSERT_TRUE(ParseJobOptions("preflight=30", &opts).ok());
  PreflightSetting p = EffectivePreflight(cfg, opts);
  EXPECT_EQ(p.baseline.cpu_gflops, 2.5);
  EXPECT_EQ(p.baseline.mem_gbps, 12);
  EXPECT_EQ(p.baseline.link_mbps, 100000u);
}

TEST(PluginConfigTest, PreflightKeysAndJobWordsOverThem) {
  PluginConfig cfg;
  ASSERT_TRUE(ParseArgs({"preflight=90", "preflight_policy=fail",
                         "preflight_program=/opt/dt/bin/dt-preflight"},
                        &cfg)
                  .ok());
  EXPECT_EQ(cfg.preflight_seconds, 90u);
  EXPECT_EQ(cfg.preflight_program, "/opt/dt/bin/dt-preflight");
  JobOptions opts;
  PreflightSetting p = EffectivePreflight(cfg, opts);
  EXPECT_EQ(p.seconds, 90u);
  EXPECT_EQ(p.policy, PreflightPolicy::kFail);
  ASSERT_TRUE(ParseJobOptions("preflight=off", &opts).ok());
  EXPECT_EQ(EffectivePreflight(cfg, opts).seconds, 0u);
  EXPECT_EQ(FormatJobOptions(opts), "preflight=off");
  ASSERT_TRUE(ParseJobOptions("preflight,preflight-policy=warn", &opts).ok());
  p = EffectivePreflight(cfg, opts);
  EXPECT_EQ(p.seconds, 60u);
  EXPECT_EQ(p.policy, PreflightPolicy::kWarn);
  EXPECT_EQ(FormatJobOptions(opts), "preflight=60,preflight-policy=warn");
  EXPECT_EQ(p.baseline.cpu_gflops, 0);  // no site floor unless set
  EXPECT_EQ(p.baseline.link_mbps, 0u);
  ASSERT_TRUE(ParseArgs({"preflight=off"}, &cfg).ok());
  EXPECT_EQ(cfg.preflight_seconds, 0u);
}

TEST(PluginConfigTest, ParsesEveryKey) {
  PluginConfig cfg;
  ASSERT_TRUE(
      ParseArgs({"port_range=61000-65535", "mode=node", "master_addr=hostname",
                 "master_addr_suffix=-ib", "verbose=yes", "omp_num_threads=no",
                 "carry_to_steps=0"},
                &cfg)
          .ok());
  EXPECT_EQ(cfg.port_min, 61000);
  EXPECT_EQ(cfg.port_max, 65535);
  EXPECT_EQ(cfg.default_mode, Mode::kNode);
  EXPECT_EQ(cfg.master_addr_suffix, "-ib");
  EXPECT_TRUE(cfg.verbose);
  EXPECT_FALSE(cfg.omp_num_threads);
  EXPECT_FALSE(cfg.carry_to_steps);
  ASSERT_TRUE(ParseArgs({"master_addr=nodeaddr"}, &cfg).ok());
  EXPECT_EQ(cfg.master_addr, AddrPolicy::kNodeAddr);
  ASSERT_TRUE(
      ParseArgs({"bind=cpu+nic", "cpu_share=domain", "topology=/t.xml",
                 "topology_cache=none", "nccl_ib_hca=yes", "signal_relay=no",
                 "proctrack=pgid", "warning_signals=USR2,SIGURG"},
                &cfg)
          .ok());
  EXPECT_FALSE(cfg.signal_relay);
  EXPECT_EQ(cfg.proctrack, Proctrack::kPgid);
  EXPECT_EQ(cfg.warning_signals, SignalBit(SIGUSR2) | SignalBit(SIGURG));
  EXPECT_TRUE(cfg.bind.cpu);
  EXPECT_FALSE(cfg.bind.gpu);
  EXPECT_TRUE(cfg.bind.nic);
  EXPECT_EQ(cfg.bind.share, CpuShare::kDomain);
  EXPECT_EQ(cfg.topology, "/t.xml");
  EXPECT_EQ(cfg.topology_cache, "none");
  EXPECT_TRUE(cfg.nccl_ib_hca);
}

TEST(JobOptionsTest, BindWordsOverrideAdminDefaults) {
  PluginConfig cfg;
  cfg.bind.gpu = false;
  cfg.bind.share = CpuShare::kDomain;
  JobOptions opts;
  BindParts p = EffectiveBind(cfg, opts);
  EXPECT_TRUE(p.cpu);
  EXPECT_FALSE(p.gpu);
  EXPECT_EQ(p.share, CpuShare::kDomain);
  ASSERT_TRUE(ParseJobOptions("bind=gpu+nic,cpu-share=exclusive", &opts).ok());
  p = EffectiveBind(cfg, opts);
  EXPECT_FALSE(p.cpu);
  EXPECT_TRUE(p.gpu);
  EXPECT_TRUE(p.nic);
  EXPECT_EQ(p.share, CpuShare::kExclusive);
  EXPECT_EQ(FormatJobOptions(opts), "bind=gpu+nic,cpu-share=exclusive");
  ASSERT_TRUE(ParseJobOptions("bind=none", &opts).ok());
  EXPECT_EQ(FormatJobOptions(opts), "bind=none");
  ASSERT_TRUE(ParseJobOptions("bind=all", &opts).ok());
  EXPECT_EQ(FormatJobOptions(opts), "bind=all");
}

TEST(PluginConfigTest, EveryErrorMessageExactly) {
  const std::string p = "plugstack.conf: dist-train: argument ";
  const std::vector<ErrorCase> cases = {
      {"prot_range=1-2",
       "'prot_range=1-2': unknown key 'prot_range' (did you mean "
       "'port_range'?); valid keys: port_range, mode, master_addr, "
       "master_addr_suffix, verbose, omp_num_threads, carry_to_steps, bind, "
       "cpu_share, topology, topology_cache, nccl_ib_hca, signal_relay, "
       "proctrack, warning_signals, preflight, preflight_policy, "
       "preflight_program, preflight_min_cpu_gflops, preflight_min_mem_gbps "
       "or preflight_min_link_mbps"},
      {"preflight=",
       "'preflight=': expected off or a number of seconds "
       "from 5 to 3600"},
      {"preflight=9999",
       "'preflight=9999': expected off or a number of "
       "seconds from 5 to 3600"},
      {"preflight_policy=retry",
       "'preflight_policy=retry': expected warn, fail or requeue"},
      {"preflight_program=dt-preflight",
       "'preflight_program=dt-preflight': expected an absolute path"},
      {"preflight_min_cpu_gflops=0",
       "'preflight_min_cpu_gflops=0': expected a decimal number above 0 and "
       "at most 1000000, e.g. 2.5"},
      {"preflight_min_mem_gbps=1e3",
       "'preflight_min_mem_gbps=1e3': expected a decimal number above 0 and "
       "at most 1000000, e.g. 2.5"},
      {"preflight_min_mem_gbps=-4",
       "'preflight_min_mem_gbps=-4': expected a decimal number above 0 and "
       "at most 1000000, e.g. 2.5"},
      {"preflight_min_link_mbps=25G",
       "'preflight_min_link_mbps=25G': expected Mb/s from 1 to 10000000, "
       "e.g. 100000"},
      {"preflight_polcy=fail",
       "'preflight_polcy=fail': unknown key 'preflight_polcy' (did you mean "
       "'preflight_policy'?); valid keys: port_range, mode, master_addr, "
       "master_addr_suffix, verbose, omp_num_threads, carry_to_steps, bind, "
       "cpu_share, topology, topology_cache, nccl_ib_hca, signal_relay, "
       "proctrack, warning_signals, preflight, preflight_policy, "
       "preflight_program, preflight_min_cpu_gflops, preflight_min_mem_gbps "
       "or preflight_min_link_mbps"},
      {"mode=node", "'mode=node': 'mode' given twice"},
      {"port_range=40000-50000",
       "'port_range=40000-50000': overlaps the kernel's ephemeral port range "
       "32768-60999, where outgoing connections take ports at random"},
      {"port_range=30000-32768",
       "'port_range=30000-32768': overlaps the kernel's ephemeral port range "
       "32768-60999, where outgoing connections take ports at random"},
      {"bind=cpu+cpu",
       "'bind=cpu+cpu': expected all, none or a +-list of cpu, gpu, nic"},
      {"bind=", "'bind=': expected all, none or a +-list of cpu, gpu, nic"},
      {"cpu_share=none", "'cpu_share=none': expected exclusive or domain"},
      {"topology=relative.xml",
       "'topology=relative.xml': expected an absolute path"},
      {"topology=none", "'topology=none': expected an absolute path"},
      {"topology_cache=",
       "'topology_cache=': expected an absolute path or none"},
      {"nccl_ib_hca=2", "'nccl_ib_hca=2': expected yes or no"},
      {"signal_relay=maybe", "'signal_relay=maybe': expected yes or no"},
      {"proctrack=cgroups",
       "'proctrack=cgroups': expected auto, cgroup, pgid or linuxproc"},
      {"warning_signals=USR1,TERM",
       "'warning_signals=USR1,TERM': 'TERM' cannot be a warning signal; use "
       "one or more of HUP, QUIT, USR1, USR2, ALRM, URG, XCPU, VTALRM, PROF, "
       "WINCH, PWR"},
      {"verbose", "'verbose': expected key=value"},
      {"=5", "'=5': expected key=value"},
      {"port_range=30000",
       "'port_range=30000': expected MIN-MAX with 1024 <= "
       "MIN <= MAX <= 65535"},
      {"port_range=500-600",
       "'port_range=500-600': expected MIN-MAX with "
       "1024 <= MIN <= MAX <= 65535"},
      {"port_range=3000-2000",
       "'port_range=3000-2000': expected MIN-MAX with "
       "1024 <= MIN <= MAX <= 65535"},
      {"port_range=20000-20010",
       "'port_range=20000-20010': range holds 11 ports; at least 64 needed"},
      {"mode=gpu", "'mode=gpu': expected task or node"},
      {"master_addr=ip", "'master_addr=ip': expected hostname or nodeaddr"},
      {"master_addr_suffix=a b",
       "'master_addr_suffix=a b': expected 1-63 characters of A-Z a-z 0-9 . -"},
      {"master_addr_suffix=",
       "'master_addr_suffix=': expected 1-63 characters of A-Z a-z 0-9 . -"},
      {"verbose=maybe", "'verbose=maybe': expected yes or no"},
      {"omp_num_threads=", "'omp_num_threads=': expected yes or no"},
  };
  for (const ErrorCase& c : cases) {
    PluginConfig cfg;
    cfg.port_min = 1234;
    Status s = ParseArgs({"mode=task", c.input}, &cfg);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << c.input;
    EXPECT_EQ(s.message(), p + c.message) << c.input;
    EXPECT_EQ(cfg.port_min, 1234) << "output changed on error: " << c.input;
  }
  PluginConfig cfg;
  EXPECT_EQ(ParseArgs({"master_addr=nodeaddr", "master_addr_suffix=-ib"}, &cfg)
                .message(),
            "plugstack.conf: dist-train: master_addr_suffix applies to "
            "master_addr=hostname only, not nodeaddr");
}

TEST(JobOptionsTest, WatchdogPolicyRequeueIsExportedWithTheWatchdog) {
  JobOptions o;
  ASSERT_TRUE(ParseJobOptions("watchdog=30,watchdog-policy=requeue", &o).ok());
  EXPECT_EQ(WatchdogVars(o),
            (EnvAssignments{{"DT_WATCHDOG", "30"},
                            {"DT_WATCHDOG_POLICY", "requeue"}}));
  EXPECT_EQ(FormatJobOptions(o), "watchdog=30,watchdog-policy=requeue");
  ASSERT_TRUE(ParseJobOptions("watchdog=30,watchdog-policy=fail", &o).ok());
  EXPECT_EQ(WatchdogVars(o), (EnvAssignments{{"DT_WATCHDOG", "30"}}));
  ASSERT_TRUE(ParseJobOptions("watchdog=off,watchdog-policy=requeue", &o).ok());
  EXPECT_TRUE(WatchdogVars(o).empty());
}

TEST(JobOptionsTest, NodeLossRequeueIsExportedAlone) {
  JobOptions o;
  ASSERT_TRUE(ParseJobOptions("node-loss=requeue", &o).ok());
  EXPECT_EQ(NodeLossVars(o), (EnvAssignments{{"DT_NODE_LOSS", "requeue"}}));
  EXPECT_TRUE(WatchdogVars(o).empty());
  EXPECT_EQ(FormatJobOptions(o), "node-loss=requeue");
  ASSERT_TRUE(ParseJobOptions("node-loss=fail", &o).ok());
  EXPECT_TRUE(NodeLossVars(o).empty());
  EXPECT_EQ(FormatJobOptions(o), "node-loss=fail");
}

}  // namespace
}  // namespace dist_train
