// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "binder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "base/slurm_ids.h"
#include "fake_spank_host.h"

namespace dist_train {
namespace {

// Four cores with two hyperthreads each, the last one disallowed.
NodeModel FourCores() {
  NodeModel m;
  m.cores = {{{0, 4}}, {{1, 5}}, {{2, 6}}, {{}}};
  return m;
}

using Cpus = std::optional<std::vector<int>>;

TEST(StepCpusTest, MapsSlurmCoreIndexesToOsPus) {
  struct Case {
    const char* name;
    uint32_t step_id;
    const char* step_cores;  // S_STEP_ALLOC_CORES; nullptr = not available
    const char* job_cores;   // S_JOB_ALLOC_CORES
    Cpus want;
  } cases[] = {
      {"range", 0, "0-1", "0-3", std::vector<int>{0, 4, 1, 5}},
      {"list in any order", 7, "2,0", nullptr, std::vector<int>{0, 4, 2, 6}},
      {"batch step reads the job's cores", kBatchStepId, "0", "2",
       std::vector<int>{2, 6}},
      {"core past the node is skipped", 0, "1,9", nullptr,
       std::vector<int>{1, 5}},
      {"only disallowed cores: every PU", 0, "3", nullptr, std::nullopt},
      {"item not available: every PU", 0, nullptr, "0", std::nullopt},
      {"empty: every PU", 0, "", nullptr, std::nullopt},
      {"batch step without job cores", kBatchStepId, "0", nullptr,
       std::nullopt},
  };
  for (const Case& c : cases) {
    FakeSpankHost host;
    if (c.step_cores) host.texts[S_STEP_ALLOC_CORES] = c.step_cores;
    if (c.job_cores) host.texts[S_JOB_ALLOC_CORES] = c.job_cores;
    Cpus got;
    Status s = StepCpus(host, c.step_id, FourCores(), &got);
    ASSERT_TRUE(s.ok()) << c.name << ": " << s.ToString();
    EXPECT_EQ(got, c.want) << c.name;
  }
}

TEST(StepCpusTest, RejectsAMalformedCoreListNamingIt) {
  for (const char* bad : {"a", "1-", "3-1", "0,,1"}) {
    FakeSpankHost host;
    host.texts[S_STEP_ALLOC_CORES] = bad;
    Cpus got;
    Status s = StepCpus(host, 0, FourCores(), &got);
    EXPECT_EQ(s.message(), std::string("S_STEP_ALLOC_CORES='") + bad +
                               "': expected a list like 0,2-3");
    EXPECT_EQ(got, std::nullopt) << bad;
  }
}

TEST(StepCpusTest, RefusesACoreListOverTheCap) {
  FakeSpankHost host;
  host.texts[S_STEP_ALLOC_CORES] = "0-1048576";
  Cpus got;
  EXPECT_EQ(StepCpus(host, 0, FourCores(), &got).message(),
            "S_STEP_ALLOC_CORES='0-1048576': more than 65536 indices (the "
            "cap)");
  EXPECT_EQ(got, std::nullopt);
}

std::string HostName() {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  return host;
}

TEST(CachePathTest, ReplacesTheFirstHostPlaceholder) {
  const std::string h = HostName();
  ASSERT_FALSE(h.empty());
  struct Case {
    std::string cache, want;
  } cases[] = {
      {"/run/dist-train/topology-%h.xml",
       "/run/dist-train/topology-" + h + ".xml"},
      {"/var/cache/topo.xml", "/var/cache/topo.xml"},
      {"%h", h},
      {"/a/%h/%h.xml", "/a/" + h + "/%h.xml"},
      {"none", ""},
      {"", ""},
  };
  for (const Case& c : cases) {
    PluginConfig cfg;
    cfg.topology_cache = c.cache;
    EXPECT_EQ(CachePath(cfg), c.want) << c.cache;
  }
}

TEST(CachePathTest, DefaultIsPerHostUnderRun) {
  EXPECT_EQ(CachePath(PluginConfig()),
            "/run/dist-train/topology-" + HostName() + ".xml");
}

}  // namespace
}  // namespace dist_train
