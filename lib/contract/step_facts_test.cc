// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "contract/step_facts.h"

#include <gtest/gtest.h>

namespace dist_train {
namespace {

TEST(StepFactsTest, RoundTrips) {
  StepFacts in;
  in.job_id = 4294967295u;
  in.job_end_time = 1767225600;
  in.node = "gpu-a01.cluster";
  in.node_addr = "fd00::11";
  std::string text = FormatStepFacts(in);
  EXPECT_EQ(text,
            "job=4294967295,end=1767225600,node=gpu-a01.cluster,addr=fd00::11");
  StepFacts out;
  ASSERT_TRUE(ParseStepFacts(text, &out).ok());
  EXPECT_EQ(out.job_id, in.job_id);
  EXPECT_EQ(out.job_end_time, in.job_end_time);
  EXPECT_EQ(out.node, in.node);
  EXPECT_EQ(out.node_addr, in.node_addr);
}

TEST(StepFactsTest, WithoutNodeAndUnlimited) {
  StepFacts in;
  in.job_id = 7;
  EXPECT_EQ(FormatStepFacts(in), "job=7,end=0");
  StepFacts out;
  out.node = "stale";
  ASSERT_TRUE(ParseStepFacts("job=7,end=0", &out).ok());
  EXPECT_EQ(out.job_id, 7u);
  EXPECT_EQ(out.job_end_time, 0);
  EXPECT_EQ(out.node, "");
}

TEST(StepFactsTest, RejectsBadInputNamingIt) {
  struct Case {
    const char* text;
    const char* why;
  } cases[] = {
      {"", "'' is not key=value"},
      {"job=1", "end must be seconds since the epoch (0: no limit)"},
      {"end=5", "job must be a job id"},
      {"job=0,end=5", "job must be a job id"},
      {"job=1,end=-5", "end must be seconds since the epoch (0: no limit)"},
      {"job=1,end=5,job=2", "'job' given twice"},
      {"job=1,end=5,user=root", "unknown key 'user'"},
      {"job=1,end=5,node=n1", "node and addr go together"},
      {"job=1,end=5,node=n1,addr=a b",
       "node and addr must be host names or "
       "addresses"},
      {"job=1,end=5,node=n1,addr=",
       "node and addr must be host names or "
       "addresses"},
      {"job=1,end=5,", "'' is not key=value"},
      {"job=1\n,end=5", "job must be a job id"},
  };
  for (const Case& c : cases) {
    StepFacts out;
    out.job_id = 99;
    Status s = ParseStepFacts(c.text, &out);
    EXPECT_EQ(s.message(),
              std::string("DT_STEP_FACTS='") + c.text + "': " + c.why)
        << c.text;
    EXPECT_EQ(out.job_id, 99u) << c.text;
  }
}

}  // namespace
}  // namespace dist_train
