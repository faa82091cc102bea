// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "base/hostlist.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

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

TEST(HostlistTest, CountsHostsFromTheTextWithoutExpanding) {
  struct CountCase {
    const char* list;
    bool ok;
    uint64_t count;
  } cases[] = {
      {"node1", true, 1},
      {"node[1-4],gpu[7,3-4]", true, 7},
      {"a b\tc", true, 3},  // libslurm separates on blanks too
      {"n[1-3]x[1-2]", true, 6},
      {"n[1-2]-[3-4]", true, 4},
      {"n[1-256]x[1-256]", true, 65536},
      {"a[0-999]b[0-999]c[0-999]", true, 65537},  // saturates past the cap
      {"n[0-18446744073709551615]", true, 65537},
      {"node18446744073709551615", true, 1},
      {"node99999999999999999999", false, 0},  // overflows 64 bits
      {"n[99999999999999999999]", false, 0},
      {"n[1 - 2]", false, 0},
      {"n[a-b]", false, 0},
      {"n[]", false, 0},
      {"n[1-", false, 0},
      {"n[[1-2]]", false, 0},
      // libslurm keeps a newline inside a name and multiplies the groups
      // around it (found by fuzz/hostlist_fuzzer): no control bytes at all.
      {"a[1-16]\nb[1-16]\nc[1-16]", false, 0},
      {"\n", false, 0},
      {"node1\x7f", false, 0},
  };
  for (const CountCase& c : cases) {
    uint64_t count = 0;
    EXPECT_EQ(CountHosts(c.list, &count), c.ok) << c.list;
    if (c.ok) {
      EXPECT_EQ(count, c.count) << c.list;
    }
  }
}

// A name with several bracket groups is a product inside libslurm: 48
// bytes took 8.9 s and 842 MiB, 36 bytes made it abort on malloc (in
// slurmstepd, on the master_addr=nodeaddr path).
TEST(HostlistTest, RefusesListsOverTheCapBeforeLibslurmExpandsThem) {
  std::string many;
  for (int i = 0; i < 70000; ++i) many += i ? ",a" : "a";
  struct CapCase {
    std::string list, error;
  } cases[] = {
      {"a[0-999]b[0-999]c[0-999]",
       "SLURM_STEP_NODELIST='a[0-999]b[0-999]c[0-999]' names more than "
       "65536 hosts (the cap)"},
      {"n[0-99999]x[0-99999]y[0-99999]z[0-99999]w[0-9]",
       "SLURM_STEP_NODELIST='n[0-99999]x[0-99999]y[0-99999]z[0-99999]w[0-9]' "
       "names more than 65536 hosts (the cap)"},
      {"n[1-256]x[1-257]",
       "SLURM_STEP_NODELIST='n[1-256]x[1-257]' names more than 65536 hosts "
       "(the cap)"},
      {many, "SLURM_STEP_NODELIST='" + many.substr(0, 64) +
                 "... (139999 bytes)' names more than 65536 hosts (the cap)"},
      {"node99999999999999999999",
       "SLURM_STEP_NODELIST='node99999999999999999999' is not a valid Slurm "
       "node list"},
      {"n[1\n-2]",
       "SLURM_STEP_NODELIST='n[1\\x0a-2]' is not a valid "
       "Slurm node list"},
  };
  for (const CapCase& c : cases) {
    std::string first = "keep";
    int count = 7;
    auto start = std::chrono::steady_clock::now();
    Status s = FirstHost(c.list, "SLURM_STEP_NODELIST", &first, &count);
    double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    EXPECT_EQ(s.message(), c.error) << c.list.substr(0, 80);
    EXPECT_LT(secs, 0.5) << c.list.substr(0, 80);
    EXPECT_EQ(first, "keep");
  }
}

TEST(HostlistTest, ExpandsAListRightAtTheCap) {
  std::string first;
  int count = 0;
  ASSERT_TRUE(
      FirstHost("n[1-256]x[1-256]", "SLURM_STEP_NODELIST", &first, &count)
          .ok());
  EXPECT_EQ(first, "n1x1");
  EXPECT_EQ(count, 65536);
}

}  // namespace
}  // namespace dist_train
