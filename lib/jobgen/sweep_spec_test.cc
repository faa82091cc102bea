// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "jobgen/sweep_spec.h"

#include <gtest/gtest.h>

namespace dist_train {
namespace {

// Parses `yaml` as the value of sweep:.
Status Sweep(const std::string& yaml, JobSpec* spec) {
  YamlSource src{"t.yaml", {}};
  return ParseSweepSection(src, YAML::Load(yaml), spec);
}

std::string Error(const std::string& yaml) {
  JobSpec spec;
  return Sweep(yaml, &spec).message();
}

TEST(SweepSpecTest, KindsInTableOrder) {
  EXPECT_EQ(SweepKindNames(), (std::vector<std::string>{"grid", "zip", "range",
                                                        "points", "random"}));
}

TEST(SweepSpecTest, NoSectionIsNoSweep) {
  JobSpec spec;
  YamlSource src{"t.yaml", {}};
  ASSERT_TRUE(ParseSweepSection(src, YAML::Node(), &spec).ok());
  EXPECT_FALSE(spec.has_sweep);
}

TEST(SweepSpecTest, ReadsKindsAndOptions) {
  JobSpec spec;
  ASSERT_TRUE(Sweep("{grid: {lr: [1, 2]}, range: {e: {stop: 3}}, parallel: "
                    "4, pass_as: both, arg_format: '-{name} {value}', "
                    "max_array_size: 9, run_dir: out}",
                    &spec)
                  .ok());
  EXPECT_TRUE(spec.has_sweep);
  ASSERT_EQ(spec.sweep.product.size(), 2u);
  EXPECT_EQ(spec.sweep.product[1].values.size(), 3u);
  EXPECT_EQ(spec.parallel, 4u);
  EXPECT_EQ(spec.pass_as, PassAs::kBoth);
  EXPECT_EQ(spec.arg_format, "-{name} {value}");
  EXPECT_EQ(spec.max_array_size, 9u);
  EXPECT_EQ(spec.run_dir, "out");
  ASSERT_TRUE(Sweep("{points: [{a: 1, b: x}, {a: 2, b: y}]}", &spec).ok());
  EXPECT_EQ(spec.sweep.points.size(), 2u);
}

// A random sweep says whether its seed was given: gen-sbatch draws (and
// records) one when not, instead of a silent fixed default.
TEST(SweepSpecTest, RandomSeedGivenOrNot) {
  JobSpec spec;
  ASSERT_TRUE(
      Sweep("{random: {samples: 2, params: {x: {uniform: [0, 1]}}}}", &spec)
          .ok());
  EXPECT_FALSE(spec.sweep.seed_given);
  ASSERT_TRUE(Sweep("{random: {samples: 2, seed: 0, params: {x: {uniform: "
                    "[0, 1]}}}}",
                    &spec)
                  .ok());
  EXPECT_TRUE(spec.sweep.seed_given);
  EXPECT_EQ(spec.sweep.seed, 0u);
}

TEST(SweepSpecTest, MessagesListTheKindsFromTheTable) {
  EXPECT_EQ(Error("{}"),
            "t.yaml:1:1: sweep: needs one of grid, zip, range, points or "
            "random");
  EXPECT_EQ(Error("{grid: {a: [1]}, random: {samples: 1, params: {x: "
                  "{choice: [a]}}}}"),
            "t.yaml:1:1: sweep: 'grid' and 'random' cannot be combined "
            "(points and random stand alone; grid, zip and range combine)");
  EXPECT_EQ(Error("{gird: {a: [1]}}"),
            "t.yaml:1:2: sweep: unknown key 'gird' (did you mean 'grid'?); "
            "valid keys: grid, zip, range, points, random, parallel, pass_as, "
            "arg_format, max_array_size, run_dir or workdir");
  EXPECT_EQ(Error("{range: 3}"),
            "t.yaml:1:9: sweep.range: expected a non-empty mapping of name: "
            "{start, stop, step}, got '3'");
  EXPECT_EQ(Error("{random: {samples: 2}}"),
            "t.yaml:1:10: sweep.random: needs 'samples' and 'params'");
  EXPECT_EQ(Error("{points: [{a: 1}, {b: 1}]}"),
            "t.yaml:1:19: sweep.points[1]: has parameters b, but the first "
            "point has a");
  EXPECT_EQ(Error("{grid: {a: [1]}, arg_format: x}"),
            "t.yaml:1:30: sweep.arg_format: must contain {value} once and "
            "{name} at most once");
  EXPECT_EQ(Error("{grid: {a: [1]}, arg_format: '{value}{value}'}"),
            "t.yaml:1:30: sweep.arg_format: must contain {value} once and "
            "{name} at most once");
  EXPECT_EQ(Error("{grid: {a: [1]}, arg_format: '--{name}{name}={value}'}"),
            "t.yaml:1:30: sweep.arg_format: must contain {value} once and "
            "{name} at most once");
  EXPECT_EQ(Error("{grid: {a: [1]}, arg_format: '" + std::string(250, 'x') +
                  "{value}'}"),
            "t.yaml:1:30: sweep.arg_format: is 257 bytes long; the limit is "
            "256");
}

TEST(SweepSpecTest, CheckSweepNames) {
  YamlSource src{"t.yaml", {}};
  YAML::Node section = YAML::Load("{}");
  SweepSpec sweep;
  sweep.product.push_back({{"lr", "bs"}, {{"1", "2"}}});
  EXPECT_TRUE(CheckSweepNames(src, section, sweep).ok());
  RandomParam lr;
  lr.name = "lr";
  sweep.random.push_back(lr);
  EXPECT_EQ(CheckSweepNames(src, section, sweep).message(),
            "t.yaml:1:1: sweep: parameter 'lr' is defined twice");
  sweep.random[0].name = "SLURM_JOB_ID";
  EXPECT_EQ(CheckSweepNames(src, section, sweep).message(),
            "t.yaml:1:1: sweep: parameter name 'SLURM_JOB_ID' is reserved: "
            "SLURM_* are Slurm's");
  sweep.random[0].name = "WORLD_SIZE";
  EXPECT_EQ(CheckSweepNames(src, section, sweep).message(),
            "t.yaml:1:1: sweep: parameter name 'WORLD_SIZE' is reserved: "
            "dist-train's plugin sets it for every step");
}

}  // namespace
}  // namespace dist_train
