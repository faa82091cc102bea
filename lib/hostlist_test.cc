// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "hostlist.h"

#include <gtest/gtest.h>

namespace dist_train {
namespace {

struct Case {
  const char* list;
  const char* first;
  int count;
};

TEST(HostlistTest, FirstHostAndCount) {
  for (const Case& c :
       std::initializer_list<Case>{{"node1", "node1", 1},
                                   {"node[1-4]", "node1", 4},
                                   {"node[01-10]", "node01", 10},
                                   {"gpu[7,3-4],cpu1", "gpu7", 4},
                                   {"node[3-4],node1", "node3", 3},
                                   {"a1,b2", "a1", 2}}) {
    std::string first;
    int count = 0;
    ASSERT_TRUE(FirstHost(c.list, "SLURM_STEP_NODELIST", &first, &count).ok())
        << c.list;
    EXPECT_EQ(first, c.first) << c.list;
    EXPECT_EQ(count, c.count) << c.list;
  }
}

TEST(HostlistTest, RejectsEmptyAndMalformedNamingTheSource) {
  std::string first = "keep";
  int count = 7;
  for (const char* bad : {"", "node[1-", "node[4-2]", "node1]", "n[[1-2]]"}) {
    Status s = FirstHost(bad, "SLURM_JOB_NODELIST", &first, &count);
    EXPECT_EQ(s.message(), std::string("SLURM_JOB_NODELIST='") + bad +
                               "' is not a valid Slurm node list")
        << bad;
  }
  EXPECT_EQ(first, "keep");
  EXPECT_EQ(count, 7);
}

}  // namespace
}  // namespace dist_train
