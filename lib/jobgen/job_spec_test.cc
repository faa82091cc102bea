// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "jobgen/job_spec.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <map>

namespace dist_train {
namespace {

JobSpec Parse(const std::string& yaml, std::vector<std::string> sets = {}) {
  JobSpec s;
  Status st = ParseJobSpec(yaml, "t.yaml", sets, &s);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return s;
}

std::string Error(const std::string& yaml, std::vector<std::string> sets = {}) {
  JobSpec s;
  s.name = "untouched";
  Status st = ParseJobSpec(yaml, "t.yaml", sets, &s);
  EXPECT_EQ(s.name, "untouched");
  return st.message();
}

const char kMinimal[] = "launch:\n  command: [python3, train.py]\n";

TEST(JobSpecTest, DefaultsForEachLaunchStyle) {
  JobSpec s = Parse(std::string(kMinimal) + "job:\n  gpus_per_node: 8\n");
  EXPECT_EQ(s.name, "t");
  EXPECT_EQ(s.tasks_per_node, 8u) << "srun: one task per GPU";
  EXPECT_EQ(s.output, "%x-%j.out");
  EXPECT_EQ(s.dist_train_options, "");
  s = Parse(
      "job: {gpus_per_node: 8}\nlaunch: {style: torchrun, command: "
      "[train.py]}\n");
  EXPECT_EQ(s.tasks_per_node, 1u);
  EXPECT_EQ(s.dist_train_options, "mode=node,nproc=8");
  s = Parse("launch: {style: dt-run, command: [./app], nproc_per_node: 3}\n");
  EXPECT_EQ(s.dist_train_options, "mode=node,nproc=3");
}

TEST(JobSpecTest, SetOverridesAnyKey) {
  JobSpec s = Parse(kMinimal,
                    {"job.nodes=4", "dist_train.verbose=true", "env.FOO=a b"});
  EXPECT_EQ(s.nodes, 4u);
  EXPECT_EQ(s.dist_train_options, "verbose");
  ASSERT_EQ(s.env.size(), 1u);
  EXPECT_EQ(s.env[0].second, "a b");
}

TEST(JobSpecTest, PreflightKeysBecomeWords) {
  JobSpec s = Parse(std::string(kMinimal) +
                    "dist_train: {preflight: 90, preflight_policy: fail}\n");
  EXPECT_EQ(s.dist_train_options, "preflight=90,preflight-policy=fail");
  s = Parse(std::string(kMinimal) + "dist_train: {preflight: off}\n");
  EXPECT_EQ(s.dist_train_options, "preflight=off");
  EXPECT_EQ(Error(std::string(kMinimal) + "dist_train: {preflight: 2}\n"),
            "t.yaml:3:13: dist_train: --dist-train: bad value '2' for "
            "'preflight'; valid values: a number of seconds from 5 to 3600 "
            "or off");
  s = Parse(std::string(kMinimal) +
            "dist_train: {preflight: 30, preflight_policy: requeue}\n"
            "preemption: {requeue: true, max_requeues: 2}\n");
  EXPECT_EQ(s.dist_train_options, "preflight=30,preflight-policy=requeue");
  EXPECT_EQ(s.max_requeues, 2u);
  s = Parse(std::string(kMinimal) + "dist_train: {watchdog: 120}\n");
  EXPECT_EQ(s.dist_train_options, "watchdog=120");
  EXPECT_EQ(Error(std::string(kMinimal) + "dist_train: {watchdog: 1}\n"),
            "t.yaml:3:13: dist_train: --dist-train: bad value '1' for "
            "'watchdog'; valid values: a number of seconds from 5 to 86400 "
            "or off");
}

TEST(JobSpecTest, RequeuePolicyNeedsARequeueableJob) {
  EXPECT_EQ(Error(std::string(kMinimal) +
                  "dist_train: {preflight: 30, preflight_policy: requeue}\n"),
            "t.yaml:3:13: dist_train.preflight_policy: requeue needs "
            "preemption.requeue: true (the job must be requeueable, its "
            "output appended)");
  EXPECT_EQ(Error(std::string(kMinimal) +
                  "dist_train: {watchdog: 60, watchdog_policy: requeue}\n"),
            "t.yaml:3:13: dist_train.watchdog_policy: requeue needs "
            "preemption.requeue: true (the job must be requeueable, its "
            "output appended)");
  JobSpec s = Parse(std::string(kMinimal) +
                    "dist_train: {watchdog: 60, watchdog_policy: requeue}\n"
                    "preemption: {requeue: true}\n");
  EXPECT_EQ(s.dist_train_options, "watchdog=60,watchdog-policy=requeue");
  EXPECT_EQ(Error(std::string(kMinimal) + "dist_train: {node_loss: requeue}\n"),
            "t.yaml:3:13: dist_train.node_loss: requeue needs "
            "preemption.requeue: true (the job must be requeueable, its "
            "output appended)");
  EXPECT_EQ(Parse(std::string(kMinimal) + "dist_train: {node_loss: requeue}\n"
                                          "preemption: {requeue: true}\n")
                .dist_train_options,
            "node-loss=requeue");
  EXPECT_EQ(Error(std::string(kMinimal) +
                  "dist_train: {watchdog: 60, watchdog_policy: later}\n"),
            "t.yaml:3:13: dist_train: --dist-train: bad value 'later' for "
            "'watchdog-policy'; valid values: fail or requeue");
}

TEST(JobSpecTest, AcceptedTimesMemoryAndBooleans) {
  for (const char* t : {"30", "30:00", "04:00:00", "2-00", "2-12:00",
                        "1-00:00:00", "infinite"}) {
    EXPECT_EQ(
        Parse(std::string(kMinimal) + "job: {time: \"" + t + "\"}\n").time, t);
  }
  EXPECT_EQ(Parse(std::string(kMinimal) + "job: {mem: 480G}\n").mem, "480G");
  EXPECT_TRUE(
      Parse(std::string(kMinimal) + "job: {exclusive: True}\n").exclusive);
  EXPECT_EQ(Error(std::string(kMinimal) + "---\njob: {nodes: 2}\n"),
            "t.yaml holds 2 YAML documents; gen-sbatch reads exactly one");
}

TEST(JobSpecTest, SetChangesOneKeyNotItsAliases) {
  JobSpec s = Parse(std::string(kMinimal) + "env: {A: &v x, B: *v}\n",
                    {"env.A=changed"});
  ASSERT_EQ(s.env.size(), 2u);
  std::map<std::string, std::string> env(s.env.begin(), s.env.end());
  EXPECT_EQ(env["A"], "changed");
  EXPECT_EQ(env["B"], "x");
}

TEST(JobSpecTest, SweepKinds) {
  JobSpec s = Parse(
      std::string(kMinimal) +
      "sweep:\n  grid: {lr: [0.1, 0.2]}\n  zip: {a: [1, 2, 3], b: [x, y, z]}\n"
      "  range: {epoch: {start: 1, stop: 3}}\n");
  ASSERT_TRUE(s.has_sweep);
  ASSERT_EQ(s.sweep.product.size(), 3u);
  EXPECT_EQ(s.output, "%x-%A_%a.out");
  s = Parse(std::string(kMinimal) +
            "sweep:\n  random: {samples: 5, seed: 7, params: {lr: {loguniform: "
            "[1e-4, 1e-2]}}}\n");
  EXPECT_EQ(s.sweep.samples, 5u);
  EXPECT_EQ(s.sweep.seed, 7u);
}

struct Case {
  const char* yaml;
  const char* message;
};

TEST(JobSpecTest, EveryErrorMessageExactly) {
  const std::vector<Case> cases = {
      {"job:\n  nodse: 2\nlaunch: {command: [a]}\n",
       "t.yaml:2:3: job: unknown key 'nodse' (did you mean 'nodes'?); valid "
       "keys: name, nodes, "
       "gpus_per_node, tasks_per_node, cpus_per_task, mem, time, partition, "
       "account, qos, "
       "constraint, exclusive, output or error"},
      {"dist_train: {wiring: wraper}\nlaunch: {command: [a]}\n",
       "t.yaml:1:22: dist_train.wiring: expected plugin or wrapper, got "
       "'wraper'"},
      {"dist_train: {enabled: false, wiring: wrapper}\nlaunch: {command: "
       "[a]}\n",
       "t.yaml:1:13: dist_train.wiring: wrapper given but enabled is false"},
      {"jbo: {}\n",
       "t.yaml:1:1: top level: unknown key 'jbo' (did you mean 'job'?); valid "
       "keys: job, "
       "dist_train, launch, env, setup, container, preemption, dependency or "
       "sweep"},
      {"job:\n  nodes: two\nlaunch: {command: [a]}\n",
       "t.yaml:2:10: job.nodes: expected an integer from 1 to 100000, got "
       "'two'"},
      {"job:\n  nodes: 0\n",
       "t.yaml:2:10: job.nodes: expected an integer from 1 to 100000, got '0'"},
      {"job: {name: my job}\nlaunch: {command: [a]}\n",
       "t.yaml:1:13: job.name: 'my job' cannot be used in an #SBATCH line "
       "(empty, or has "
       "whitespace, quotes or backslashes)"},
      {"job: {exclusive: maybe}\n",
       "t.yaml:1:18: job.exclusive: expected true or false, got 'maybe'"},
      {"launch: {command: python train.py}\n",
       "t.yaml:1:19: launch.command: expected a list of words, e.g. [python, "
       "train.py, --lr, '0.1']"},
      {"launch:\n  style: custom\n  command: [\"LD_PRELOAD\\n\\nX=/x.so\", "
       "python3]\n",
       "t.yaml:3:13: launch.command[0]: the program's name has a control "
       "character (byte 0x0a, a newline); a program is named on one line"},
      {"launch: {command: [\"a\\tb\", python3]}\n",
       "t.yaml:1:20: launch.command[0]: the program's name has a control "
       "character (byte 0x09, a tab); a program is named on one line"},
      {"launch: {command: [\"a\\x7f\"]}\n",
       "t.yaml:1:20: launch.command[0]: the program's name has a control "
       "character (byte 0x7f); a program is named on one line"},
      {"launch: {style: mpirun, command: [a]}\n",
       "t.yaml:1:17: launch.style: expected srun, torchrun, dt-run or custom, "
       "got 'mpirun'"},
      {"job: {nodes: 2}\n",
       "t.yaml:1:1: launch.command: is required (a list of words)"},
      {"job: {gpus_per_node: 4, tasks_per_node: 8}\nlaunch: {command: [a]}\n",
       "t.yaml:1:6: job.tasks_per_node: 8 tasks per node but job.gpus_per_node "
       "is 4: with "
       "launch.style srun each task drives one GPU"},
      {"job: {tasks_per_node: 2}\nlaunch: {style: torchrun, command: [a]}\n",
       "t.yaml:1:6: job.tasks_per_node: launch.style torchrun runs one "
       "launcher per node, so "
       "tasks_per_node must be 1 (workers come from launch.nproc_per_node)"},
      {"dist_train: {mode: node}\nlaunch: {command: [a]}\n",
       "t.yaml:1:13: dist_train.mode: mode node does not fit launch.style srun "
       "(which needs mode task)"},
      {"dist_train: {bind: disk}\nlaunch: {command: [a]}\n",
       "t.yaml:1:13: dist_train: --dist-train: bad value 'disk' for 'bind'; "
       "valid values: all, "
       "none or a +-list of cpu, gpu, nic (e.g. bind=cpu+nic)"},
      {"env: {1X: a}\nlaunch: {command: [a]}\n",
       "t.yaml:1:7: env: '1X' is not a valid variable name "
       "([A-Za-z_][A-Za-z0-9_]*)"},
      {"preemption: {signal: KILL}\nlaunch: {command: [a]}\n",
       "t.yaml:1:22: preemption.signal: expected USR1, USR2, TERM, INT, HUP or "
       "URG, got 'KILL'"},
      {"preemption: {max_requeues: 3}\nlaunch: {command: [a]}\n",
       "t.yaml:1:13: preemption.max_requeues: needs preemption.requeue: true"},
      {"dependency: 1234\nlaunch: {command: [a]}\n",
       "t.yaml:1:13: dependency: '1234' is not a Slurm dependency like "
       "afterok:1234"},
      {"sweep: {zip: {a: [1, 2], b: [1]}}\nlaunch: {command: [a]}\n",
       "t.yaml:1:29: sweep.zip.b: has 1 values but sweep.zip.a has 2; zipped "
       "lists must have equal lengths"},
      {"sweep: {points: [{a: 1}], grid: {b: [1]}}\nlaunch: {command: [a]}\n",
       "t.yaml:1:8: sweep: 'points' and 'grid' cannot be combined (points and "
       "random stand alone; "
       "grid, zip and range combine)"},
      {"sweep: {grid: {lr: []}}\nlaunch: {command: [a]}\n",
       "t.yaml:1:20: sweep.grid.lr: the list is empty"},
      {"sweep: {range: {e: {start: 1, stop: 5, step: -1}}}\nlaunch: {command: "
       "[a]}\n",
       "t.yaml:1:20: sweep.range.e: range step -1 never goes from 1 to 5"},
      {"sweep: {random: {samples: 3, params: {lr: {normal: [0, 1]}}}}\nlaunch: "
       "{command: [a]}\n",
       "t.yaml:1:43: sweep.random.params.lr: unknown distribution 'normal'; "
       "valid: uniform, "
       "loguniform, int or choice"},
      {"sweep: {pass_as: argv, grid: {a: [1]}}\nlaunch: {command: [a]}\n",
       "t.yaml:1:18: sweep.pass_as: expected env, args or both, got 'argv'"},
      {"sweep: {}\nlaunch: {command: [a]}\n",
       "t.yaml:1:8: sweep: needs one of grid, zip, range, points or random"},
      {"job: [1, 2]\n", "t.yaml:1:6: job: expected a mapping, got a list"},
      {"job: {time: forever}\nlaunch: {command: [a]}\n",
       "t.yaml:1:13: job.time: 'forever' is not a Slurm time (minutes, MM:SS, "
       "HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or infinite)"},
      {"job: {mem: lots}\nlaunch: {command: [a]}\n",
       "t.yaml:1:12: job.mem: 'lots' is not a Slurm memory size like 64G, 500M "
       "or 0"},
      {"job: {nodes: 2, nodes: 7}\nlaunch: {command: [a]}\n",
       "t.yaml:1:17: job.nodes: given twice"},
      {"sweep: {grid: {}, pass_as: args}\nlaunch: {command: [a]}\n",
       "t.yaml:1:15: sweep.grid: expected a non-empty mapping of name: "
       "[values], got an empty one"},
      {"sweep: {points: [{}]}\nlaunch: {command: [a]}\n",
       "t.yaml:1:18: sweep.points[0]: expected a non-empty mapping of name: "
       "value, got an empty one"},
      {"sweep: {grid: {lr: [1]}, range: {lr: {stop: 2}}}\nlaunch: {command: "
       "[a]}\n",
       "t.yaml:1:8: sweep: parameter 'lr' is defined twice"},
      {"sweep: {grid: {DT_RUN_DIR: [1]}}\nlaunch: {command: [a]}\n",
       "t.yaml:1:8: sweep: parameter name 'DT_RUN_DIR' is reserved: DT_* "
       "belong to dist-train (DT_JOB_TOKEN is the job's secret and must not "
       "be stored in the script)"},
      {"sweep: {grid: {MASTER_PORT: [1]}}\nlaunch: {command: [a]}\n",
       "t.yaml:1:8: sweep: parameter name 'MASTER_PORT' is reserved: "
       "dist-train's plugin sets it for every step"},
      {"sweep: {grid: {PATH: [1]}}\nlaunch: {command: [a]}\n",
       "t.yaml:1:8: sweep: parameter name 'PATH' is reserved: the shell's "
       "own"},
      {"dist_train: {enabled: false}\nlaunch: {style: torchrun, command: "
       "[a]}\n",
       "t.yaml:1:13: dist_train.enabled: launch.style torchrun needs "
       "dist-train's node-mode variables; it cannot be false"},
      {"dist_train: {nproc: 8}\nlaunch: {style: dt-run, command: [a], "
       "nproc_per_node: 2}\n",
       "t.yaml:1:13: dist_train.nproc: disagrees with launch.nproc_per_node; "
       "set only one"},
      {"dist_train: {nproc: 8}\nlaunch: {command: [a]}\n",
       "t.yaml:1:13: dist_train.nproc: applies to torchrun/dt-run only; with "
       "srun each task is one worker"},
      {"sweep: {random: {samples: 2, params: {x: {uniform: [-1e308, "
       "1e308]}}}}\nlaunch: {command: [a]}\n",
       "t.yaml:1:52: sweep.random.params.x.uniform: expected lo < hi"},
      {"sweep: {random: {samples: 2, params: {x: {int: [2e75, 8]}}}}\n"
       "launch: {command: [a]}\n",
       "t.yaml:1:48: sweep.random.params.x.int: expected integers lo <= hi, "
       "each within +-2^53"},
      {"sweep: {random: {samples: 2, params: {x: {int: [0, "
       "9007199254740994]}}}}\nlaunch: {command: [a]}\n",
       "t.yaml:1:48: sweep.random.params.x.int: expected integers lo <= hi, "
       "each within +-2^53"},
      {"launch: {style: torchrun, command: [python3, train.py]}\n",
       "t.yaml:1:36: launch.command: starts with 'python3', but torchrun runs "
       "the script with Python itself: drop it (command: [train.py, ...])"},
      {"launch: {style: torchrun, command: [/usr/bin/python3.11, t.py]}\n",
       "t.yaml:1:36: launch.command: starts with '/usr/bin/python3.11', but "
       "torchrun runs the script with Python itself: drop it (command: "
       "[train.py, ...])"},
      {"launch: {style: srun, command: [a], launcher: [x]}\n",
       "t.yaml:1:47: launch.launcher: applies to style torchrun only, not "
       "srun"},
      {"launch: {style: torchrun, command: [a], launcher: x}\n",
       "t.yaml:1:51: launch.launcher: expected a list of words, e.g. "
       "[python3, -m, torch.distributed.run]"},
      {"launch: {style: torchrun, command: [a], launcher: []}\n",
       "t.yaml:1:51: launch.launcher: needs at least one word"},
      {"launch: {style: custom, command: [a], srun_args: [-l]}\n",
       "t.yaml:1:9: launch.style: custom runs launch.command as given, so "
       "launch.srun_args and "
       "container cannot apply; put the srun options into launch.command"},
      {"job:\n  nodes: [1\n",
       "t.yaml:3:1: YAML syntax error: end of sequence flow not found"},
  };
  for (const Case& c : cases) EXPECT_EQ(Error(c.yaml), c.message) << c.yaml;
}

// A file's errors come all at once, in document order, one per line (also
// several in one section, and nested ones), so one round fixes the file.
TEST(JobSpecTest, EveryErrorOfAFileInOneRun) {
  JobSpec spec;
  Status s = ParseJobSpec(
      "job:\n  nodse: 2\n  time: soon\n"
      "launch: {command: python3 train.py}\n"
      "sweep: {grid: {lr: [1]}, workdir: here}\n"
      "extra: 1\n",
      "t.yaml", {}, &spec);
  EXPECT_EQ(s.message(),
            "t.yaml:2:3: job: unknown key 'nodse' (did you mean 'nodes'?); "
            "valid keys: name, nodes, gpus_per_node, tasks_per_node, "
            "cpus_per_task, mem, time, partition, account, qos, constraint, "
            "exclusive, output or error\n"
            "t.yaml:3:9: job.time: 'soon' is not a Slurm time (minutes, "
            "MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or infinite)\n"
            "t.yaml:4:19: launch.command: expected a list of words, e.g. "
            "[python, train.py, --lr, '0.1']\n"
            "t.yaml:5:35: sweep.workdir: expected run (the point's run "
            "directory) or submit (where sbatch ran), got 'here'\n"
            "t.yaml:6:1: top level: unknown key 'extra'; valid keys: job, "
            "dist_train, launch, env, setup, container, preemption, "
            "dependency or sweep");
}

TEST(JobSpecTest, AtMostFiftyErrorsAreListed) {
  std::string yaml = "job:\n";
  for (int i = 0; i < 80; ++i) yaml += "  k" + std::to_string(i) + ": 1\n";
  JobSpec spec;
  std::string msg = ParseJobSpec(yaml, "t.yaml", {}, &spec).message();
  EXPECT_EQ(std::count(msg.begin(), msg.end(), '\n'), 50);
  EXPECT_NE(msg.find("\n... and 30 more errors"), std::string::npos);
}

TEST(JobSpecTest, SetErrorsNameTheOverride) {
  EXPECT_EQ(Error(kMinimal, {"job.nodes=many"}),
            "--set job.nodes: job.nodes: expected an integer from 1 to 100000, "
            "got 'many'");
  EXPECT_EQ(Error(kMinimal, {"job.nodse=2"}),
            "--set job.nodse: job: unknown key 'nodse' (did you mean "
            "'nodes'?); valid keys: name, "
            "nodes, gpus_per_node, tasks_per_node, cpus_per_task, mem, time, "
            "partition, account, "
            "qos, constraint, exclusive, output or error");
  EXPECT_EQ(Error(kMinimal, {"nodes"}),
            "--set 'nodes': expected key.path=value");
}

// Each would override what the plugin sets per step, or store the job's
// secret in the script: the error names the key and its line.
TEST(JobSpecTest, EnvRefusesReservedNamesAtTheirLine) {
  const std::vector<Case> cases = {
      {"launch: {command: [a]}\nenv:\n  MSG: hi\n  DT_JOB_TOKEN: s3cret\n",
       "t.yaml:4:3: env.DT_JOB_TOKEN: 'DT_JOB_TOKEN' is reserved: DT_* belong "
       "to dist-train (DT_JOB_TOKEN is the job's secret and must not be "
       "stored in the script)"},
      {"launch: {command: [a]}\nenv:\n  MASTER_PORT: 29500\n",
       "t.yaml:3:3: env.MASTER_PORT: 'MASTER_PORT' is reserved: dist-train's "
       "plugin sets it for every step"},
      {"launch: {command: [a]}\nenv: {RANK: 0}\n",
       "t.yaml:2:7: env.RANK: 'RANK' is reserved: dist-train's plugin sets it "
       "for every step"},
      {"launch: {command: [a]}\nenv: {CUDA_VISIBLE_DEVICES: 0}\n",
       "t.yaml:2:7: env.CUDA_VISIBLE_DEVICES: 'CUDA_VISIBLE_DEVICES' is "
       "reserved: dist-train's plugin sets it for every step"},
      {"launch: {command: [a]}\nenv: {SLURM_JOB_ID: 1}\n",
       "t.yaml:2:7: env.SLURM_JOB_ID: 'SLURM_JOB_ID' is reserved: SLURM_* are "
       "Slurm's"},
      {"launch: {command: [a]}\nenv: {dt_point: 1}\n",
       "t.yaml:2:7: env.dt_point: 'dt_point' is reserved: dt_* are the "
       "generated script's own variables"},
  };
  for (const Case& c : cases) EXPECT_EQ(Error(c.yaml), c.message) << c.yaml;
  EXPECT_EQ(Error(kMinimal, {"env.MASTER_ADDR=evil"}),
            "--set env.MASTER_ADDR: env.MASTER_ADDR: 'MASTER_ADDR' is "
            "reserved: dist-train's plugin sets it for every step");
  JobSpec s;
  ASSERT_TRUE(ParseJobSpec("launch: {command: [a]}\nenv: {NCCL_DEBUG: INFO, "
                           "PATH: /opt/bin}\n",
                           "t.yaml", {}, &s)
                  .ok());
  EXPECT_EQ(s.env.size(), 2u);
}

// The sweep limit is one gen-sbatch renders in about a second.
TEST(JobSpecTest, SweepLimitsAreCheckedWhenRead) {
  EXPECT_EQ(Error("launch: {command: [a]}\nsweep: {random: {samples: "
                  "100001, params: {x: {int: [1, 9]}}}}\n"),
            "t.yaml:2:27: sweep.random.samples: expected an integer from 1 to "
            "100000, got '100001'");
  EXPECT_EQ(Error("launch: {command: [a]}\nsweep: {range: {x: {stop: "
                  "100001}}}\n"),
            "t.yaml:2:20: sweep.range.x: sweep has 100001 points; the limit is "
            "100000");
}

TEST(JobSpecTest, HostileYamlIsAnErrorNotACrash) {
  // exact on yaml-cpp 0.7 (tests/gen_sbatch.bats); newer releases word it
  // their own way, but it is always an error with its place
  EXPECT_EQ(Error(",a:").rfind("t.yaml:1:", 0), 0u) << Error(",a:");
  EXPECT_EQ(Error("---\n,").rfind("t.yaml:", 0), 0u) << Error("---\n,");
}

TEST(JobSpecTest, MissingFileIsNamed) {
  JobSpec s;
  EXPECT_EQ(LoadJobSpec("/nonexistent/x.yaml", {}, &s).message(),
            "/nonexistent/x.yaml: cannot read the file");
}

}  // namespace
}  // namespace dist_train
