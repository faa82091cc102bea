// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "jobgen/job_sections.h"

#include <gtest/gtest.h>

namespace dist_train {
namespace {

TEST(JobSectionsTest, ReadsEverySectionWithoutDefaults) {
  YamlSource src{"t.yaml", {}};
  JobSpec s;
  ASSERT_TRUE(
      ReadJobSections(src,
                      YAML::Load("job: {nodes: 2, mem: 64G, time: '1-00'}\n"
                                 "launch: {style: dt-run, command: [a]}\n"
                                 "env: {A: x}\nsetup: [echo hi]\n"
                                 "container: {image: img}\n"
                                 "preemption: {signal: USR1, requeue: true}\n"
                                 "dependency: afterok:1\n"
                                 "sweep: {grid: {lr: [1]}}\n"),
                      &s)
          .ok());
  EXPECT_EQ(s.nodes, 2u);
  EXPECT_EQ(s.mem, "64G");
  EXPECT_EQ(s.time, "1-00");
  EXPECT_EQ(s.style, LaunchStyle::kDtRun);
  EXPECT_EQ(s.env.size(), 1u);
  EXPECT_EQ(s.setup, std::vector<std::string>{"echo hi"});
  EXPECT_EQ(s.container_image, "img");
  EXPECT_EQ(s.signal, "USR1");
  EXPECT_EQ(s.dependencies, std::vector<std::string>{"afterok:1"});
  EXPECT_TRUE(s.has_sweep);
  EXPECT_EQ(s.tasks_per_node, 0u) << "defaults are applied later";
  EXPECT_EQ(s.output, "");
}

TEST(JobSectionsTest, RejectsANonMappingAndCrossRulesAreNotChecked) {
  YamlSource src{"t.yaml", {}};
  JobSpec s;
  EXPECT_EQ(ReadJobSections(src, YAML::Load("[1]"), &s).message(),
            "t.yaml: expected a mapping at the top level, got a list");
  EXPECT_TRUE(ReadJobSections(src, YAML::Load("job: {nodes: 1}"), &s).ok())
      << "launch.command is a rule of job_spec.cc";
}

}  // namespace
}  // namespace dist_train
