// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "jobgen/overrides.h"

#include <gtest/gtest.h>

namespace dist_train {
namespace {

TEST(OverridesTest, SetsValueAndRecordsThePath) {
  YAML::Node root = YAML::Load("job: {nodes: 1}\n");
  YamlSource src{"t.yaml", {}};
  ASSERT_TRUE(ApplyOverride("job.nodes=4", root, &src).ok());
  ASSERT_TRUE(ApplyOverride("env.MSG=a=b c", root, &src).ok());
  ASSERT_TRUE(ApplyOverride("launch.command=[a, b]", root, &src).ok());
  EXPECT_EQ(root["job"]["nodes"].Scalar(), "4");
  EXPECT_EQ(root["env"]["MSG"].Scalar(), "a=b c") << "split at the first =";
  EXPECT_TRUE(root["launch"]["command"].IsSequence());
  EXPECT_EQ(src.from_set,
            (std::set<std::string>{"env.MSG", "job.nodes", "launch.command"}));
}

TEST(OverridesTest, ErrorsNameTheOverride) {
  YAML::Node root = YAML::Load("job: {nodes: 1}\n");
  YamlSource src{"t.yaml", {}};
  EXPECT_EQ(ApplyOverride("nodes", root, &src).message(),
            "--set 'nodes': expected key.path=value");
  EXPECT_EQ(ApplyOverride("=4", root, &src).message(),
            "--set '=4': expected key.path=value");
  EXPECT_EQ(ApplyOverride("job.nodes.x=4", root, &src).message(),
            "--set 'job.nodes.x=4': nodes is not a mapping");
  EXPECT_EQ(ApplyOverride("job.nodes=[1", root, &src).message(),
            "--set 'job.nodes=[1': end of sequence flow not found");
  EXPECT_TRUE(src.from_set.empty());
  EXPECT_EQ(root["job"]["nodes"].Scalar(), "1");
}

}  // namespace
}  // namespace dist_train
