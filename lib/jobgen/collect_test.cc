// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "jobgen/collect.h"

#include <gtest/gtest.h>

namespace dist_train {
namespace {

TEST(CollectTest, ManifestRoundTripsAndIsStrict) {
  SweepManifest m;
  m.array_job_id = 812;
  m.first = 4;
  m.points = {Json::parse(R"({"lr":0.1,"opt":"sgd"})"),
              Json::parse(R"({"lr":0.01,"opt":"sgd"})")};
  std::string text = FormatManifest(m);
  EXPECT_EQ(text,
            "{\"array_job_id\":812,\"first\":4,\"points\":[{\"lr\":0.1,\"opt\":"
            "\"sgd\"},{\"lr\":0.01,\"opt\":\"sgd\"}]}\n");
  SweepManifest back;
  ASSERT_TRUE(ParseManifest(text, "s.json", &back).ok());
  EXPECT_EQ(back.array_job_id, 812u);
  EXPECT_EQ(back.first, 4u);
  EXPECT_EQ(back.points, m.points);
  const std::pair<const char*, const char*> bad[] = {
      {"nope", "s.json: not JSON"},
      {"[]", "s.json: expected an object with array_job_id, first and points"},
      {R"({"array_job_id":0,"first":0,"points":[]})",
       "s.json: array_job_id is not a job id"},
      {R"({"array_job_id":1,"first":-1,"points":[]})",
       "s.json: first is not a point index"},
      {R"({"array_job_id":1,"first":0,"points":{}})",
       "s.json: points is not a list"},
      {R"({"array_job_id":1,"first":0,"points":[3]})",
       "s.json: a point is not an object"},
      {R"({"array_job_id":1,"first":0,"points":[],"x":1})",
       "s.json: expected an object with array_job_id, first and points"}};
  for (const auto& [in, want] : bad) {
    EXPECT_EQ(ParseManifest(in, "s.json", &back).message(), want) << in;
  }
}

TEST(CollectTest, MetricsMustBeAnObject) {
  Json j;
  EXPECT_TRUE(ParseObjectFile(R"({"loss":0.5})", "m.json", &j).ok());
  EXPECT_EQ(j["loss"], 0.5);
  EXPECT_EQ(ParseObjectFile("[1]", "m.json", &j).message(),
            "m.json: expected a JSON object");
  EXPECT_EQ(ParseObjectFile("{\"loss\":", "m.json", &j).message(),
            "m.json: not JSON");
}

TEST(CollectTest, ArrayJobIdFromTheDirectoryName) {
  uint32_t id = 0;
  EXPECT_TRUE(ArrayJobIdOfDir("runs/sweep-grid-812", &id));
  EXPECT_EQ(id, 812u);
  EXPECT_TRUE(ArrayJobIdOfDir("/a/b/x-9/", &id));
  EXPECT_EQ(id, 9u);
  for (const char* bad : {"runs/sweep", "runs/x-", "runs/x-0", "x-1a", ""}) {
    EXPECT_FALSE(ArrayJobIdOfDir(bad, &id)) << bad;
  }
}

TEST(CollectTest, ArrayTaskExpressions) {
  std::vector<uint32_t> t;
  ASSERT_TRUE(ParseArrayTasks("3-5%2", &t).ok());
  EXPECT_EQ(t, (std::vector<uint32_t>{3, 4, 5}));
  ASSERT_TRUE(ParseArrayTasks("1,4-8:2", &t).ok());
  EXPECT_EQ(t, (std::vector<uint32_t>{1, 4, 6, 8}));
  for (const char* bad : {"", "5-3", "a", "1-", "2:0", "0-4000002"}) {
    EXPECT_FALSE(ParseArrayTasks(bad, &t).ok()) << bad;
  }
}

TEST(CollectTest, StatesFromSlurmAndTheRunDirectory) {
  CollectedPoint p;
  EXPECT_EQ(PointState(p), "unknown");
  p.started = true;
  EXPECT_EQ(PointState(p), "ended");
  const std::pair<const char*, const char*> cases[] = {
      {"PENDING", "pending"},        {"REQUEUED", "pending"},
      {"RUNNING", "running"},        {"COMPLETING", "running"},
      {"COMPLETED", "done"},         {"FAILED", "failed:FAILED"},
      {"TIMEOUT", "failed:TIMEOUT"}, {"CANCELLED", "failed:CANCELLED"}};
  for (const auto& [slurm, want] : cases) {
    p.slurm_state = slurm;
    EXPECT_EQ(PointState(p), want) << slurm;
  }
}

std::vector<CollectedPoint> TwoPoints() {
  CollectedPoint a, b;
  a.index = 0, a.slurm_state = "COMPLETED", a.started = true;
  a.params = Json::parse(R"({"lr":0.1,"opt":"sgd"})");
  a.metrics = Json::parse(R"({"loss":0.25,"lr":"x,y","note":"a\u001bb"})");
  b.index = 1, b.slurm_state = "PENDING";
  b.params = Json::parse(R"({"lr":0.01,"opt":"adam"})");
  return {a, b};
}

TEST(CollectTest, TableCsvAndJson) {
  EXPECT_EQ(FormatCollected(TwoPoints(), CollectFormat::kTable),
            "index  state    lr    opt   loss  metric:lr  note\n"
            "0      done     0.1   sgd   0.25  x,y        a\\x1bb\n"
            "1      pending  0.01  adam\n");
  EXPECT_EQ(FormatCollected(TwoPoints(), CollectFormat::kCsv),
            "index,state,lr,opt,loss,metric:lr,note\n"
            "0,done,0.1,sgd,0.25,\"x,y\",a\x1b"
            "b\n"
            "1,pending,0.01,adam,,,\n");
  Json j = Json::parse(FormatCollected(TwoPoints(), CollectFormat::kJson));
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["state"], "done");
  EXPECT_EQ(j[0]["slurm_state"], "COMPLETED");
  EXPECT_EQ(j[0]["metrics"]["loss"], 0.25);
  EXPECT_EQ(j[1]["params"]["opt"], "adam");
  EXPECT_TRUE(j[1]["metrics"].empty());
}

}  // namespace
}  // namespace dist_train
