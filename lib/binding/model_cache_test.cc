// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The node model saved beside the topology cache: the same model as the
// XML, for every fixture and real topology; refused when damaged, not
// root's alone, or made from another XML than the one there now.
#include "binding/model_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "binding/root_files.h"
#include "binding/topology.h"
#include "testing/testing_files.h"
#include "testing/testing_topologies.h"

namespace dist_train {
namespace {

using testing_topologies::Fixture;
using testing_topologies::RealTopologies;

void ExpectSameDevice(const PciDevice& a, const PciDevice& b,
                      const std::string& where) {
  EXPECT_EQ(a.busid, b.busid) << where;
  EXPECT_EQ(a.class_id, b.class_id) << where;
  EXPECT_EQ(a.vendor, b.vendor) << where;
  EXPECT_EQ(a.device, b.device) << where;
  EXPECT_EQ(a.names, b.names) << where;
  EXPECT_EQ(a.model, b.model) << where;
  EXPECT_EQ(a.verbs, b.verbs) << where;
  EXPECT_EQ(a.netdev, b.netdev) << where;
  EXPECT_EQ(a.tier, b.tier) << where;
  EXPECT_EQ(a.path, b.path) << where;
  EXPECT_EQ(a.path_kinds, b.path_kinds) << where;
  EXPECT_EQ(a.local_pus, b.local_pus) << where;
  EXPECT_EQ(a.local_numa, b.local_numa) << where;
}

// Every field of two models, named in failures.
void ExpectSameModel(const NodeModel& a, const NodeModel& b,
                     const std::string& where) {
  ASSERT_EQ(a.cores.size(), b.cores.size()) << where;
  for (size_t i = 0; i < a.cores.size(); ++i)
    EXPECT_EQ(a.cores[i].pus, b.cores[i].pus) << where << " core " << i;
  ASSERT_EQ(a.numa.size(), b.numa.size()) << where;
  for (size_t i = 0; i < a.numa.size(); ++i) {
    EXPECT_EQ(a.numa[i].os_index, b.numa[i].os_index) << where;
    EXPECT_EQ(a.numa[i].pus, b.numa[i].pus) << where << " numa " << i;
  }
  ASSERT_EQ(a.packages.size(), b.packages.size()) << where;
  for (size_t i = 0; i < a.packages.size(); ++i) {
    EXPECT_EQ(a.packages[i].os_index, b.packages[i].os_index) << where;
    EXPECT_EQ(a.packages[i].pus, b.packages[i].pus) << where;
  }
  ASSERT_EQ(a.gpus.size(), b.gpus.size()) << where;
  for (size_t i = 0; i < a.gpus.size(); ++i)
    ExpectSameDevice(a.gpus[i], b.gpus[i], where + " gpu " + a.gpus[i].busid);
  ASSERT_EQ(a.nics.size(), b.nics.size()) << where;
  for (size_t i = 0; i < a.nics.size(); ++i)
    ExpectSameDevice(a.nics[i], b.nics[i], where + " nic " + a.nics[i].busid);
}

// A model with every field set to something other than its default.
NodeModel EveryField() {
  NodeModel m;
  m.cores = {{{0, 64}}, {{1, 65}}, {{}}};
  m.numa = {{0, {0, 1, 64, 65}}, {3, {}}};
  m.packages = {{1, {0, 1}}};
  PciDevice gpu;
  gpu.busid = "0000:1b:00.0";
  gpu.class_id = 0x0302;
  gpu.vendor = 0x10de;
  gpu.device = 0x2330;
  gpu.names = {"cuda0", "nvml0"};
  gpu.model = "NVIDIA H100 80GB HBM3";
  gpu.path = {17, 12, 3, 0xffffffff12ULL};
  gpu.path_kinds = {"PCIe switch", "host bridge", "Package", "Machine"};
  gpu.local_pus = {0, 1, 64};
  gpu.local_numa = {0};
  PciDevice nic = gpu;
  nic.busid = "0000:1c:00.0";
  nic.class_id = 0x0207;
  nic.names = {"mlx5_0", "ib0"};
  nic.model = "";
  nic.verbs = "mlx5_0";
  nic.netdev = "ib0";
  nic.tier = NicTier::kFabric;
  m.gpus = {gpu};
  m.nics = {nic, nic};
  m.nics[1].tier = NicTier::kManagement;
  return m;
}

FileIdentity SomeIdentity() {
  FileIdentity id;
  id.dev = 2049;
  id.ino = 0x1234567890ULL;
  id.size = 123456;
  id.mtime_s = 1764000000;
  id.mtime_ns = 999999999;
  id.ctime_s = -1;
  id.ctime_ns = 7;
  return id;
}

TEST(NodeModelCodecTest, EveryFieldAndTheIdentityComeBack) {
  NodeModel m = EveryField(), back;
  FileIdentity id = SomeIdentity(), id_back;
  std::string bytes = EncodeNodeModel(m, id);
  ASSERT_TRUE(DecodeNodeModel(bytes, "x", &back, &id_back).ok());
  ExpectSameModel(m, back, "every field");
  EXPECT_TRUE(id_back == id);
  FileIdentity other = id;
  other.ctime_ns = 8;
  EXPECT_FALSE(other == id) << "a chmod of the XML changes its identity";
}

// What the planner gets from the saved model is what it gets from the XML,
// on every fixture and every real GPU server's topology.
TEST(NodeModelCodecTest, EveryTopologyComesBackTheSameAsFromItsXml) {
  std::vector<std::string> files = RealTopologies();
  for (const char* f :
       {"dgx-h100-8gpu.xml", "dgx2-16gpu.xml", "no-locality-amd.xml",
        "nps4-4gpu-hca-per-switch.xml", "two-gpus-per-switch.xml"})
    files.push_back(Fixture(f));
  for (const std::string& f : files) {
    NodeModel xml, back;
    Status s = LoadNodeModel(f, &xml);
    if (!s.ok()) continue;  // hwloc 1.x files: not what slurmd writes
    FileIdentity id;
    ASSERT_TRUE(DecodeNodeModel(EncodeNodeModel(xml, {}), f, &back, &id).ok());
    ExpectSameModel(xml, back, f);
  }
}

// Every prefix of a good encoding, and a few forged values, are refused
// with the file and the offset named, never a crash or a huge allocation.
TEST(NodeModelCodecTest, DamagedBytesAreRefusedWithTheOffset) {
  const std::string good = EncodeNodeModel(EveryField(), SomeIdentity());
  NodeModel m;
  FileIdentity id;
  for (size_t len = 0; len < good.size(); ++len) {
    Status s = DecodeNodeModel(good.substr(0, len), "/c/m", &m, &id);
    ASSERT_FALSE(s.ok()) << len;
    EXPECT_EQ(s.message().rfind("/c/m: offset ", 0), 0u) << s.message();
  }
  EXPECT_EQ(DecodeNodeModel(good + "x", "/c/m", &m, &id).message(),
            "/c/m: offset " + std::to_string(good.size()) +
                ": 1 bytes after the model");
  std::string other = good;
  other[sizeof("dist-train node model ") - 1] = '2';
  EXPECT_EQ(DecodeNodeModel(other, "/c/m", &m, &id).message(),
            "/c/m: offset 0: not a dist-train node model of this version");
  // The core count (right after the 24-byte magic and 56-byte identity)
  // claiming a billion cores.
  const size_t cores_at = 24 + 56;
  std::string many = good;
  many.replace(cores_at, 4, std::string("\x3b\x9a\xca\x00", 4));
  Status s = DecodeNodeModel(many, "/c/m", &m, &id);
  EXPECT_NE(s.message().find("1000000000 cores in "), std::string::npos)
      << s.message();
  // The first PU of the first core out of range.
  std::string pu = good;
  pu.replace(cores_at + 8, 4, std::string("\x7f\xff\xff\xff", 4));
  EXPECT_EQ(DecodeNodeModel(pu, "/c/m", &m, &id).message(),
            "/c/m: offset " + std::to_string(cores_at + 12) +
                ": core PUs 2147483647 out of range");
  NodeModel one_nic;
  one_nic.nics = {EveryField().nics[0]};
  std::string tier = EncodeNodeModel(one_nic, {});
  // The tier is the NIC's 4 bytes before its path count (4 entries).
  size_t tier_at = tier.size() - (4 + 4 * 8) -
                   (4 + 4 + 11 + 4 + 11 + 4 + 7 + 4 + 7) - (4 + 3 * 4) -
                   (4 + 4) - 4;
  tier.replace(tier_at, 4, std::string("\0\0\0\7", 4));
  s = DecodeNodeModel(tier, "/c/m", &m, &id);
  EXPECT_NE(s.message().find("NIC tier 7 does not exist"), std::string::npos)
      << s.message();
  EXPECT_EQ(m.nics.size(), 0u) << "nothing is left half-decoded";
}

using testing_files::TempDir;

void CopyFile(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  std::ofstream out(to, std::ios::binary);
  out << in.rdbuf();
}

// slurmd saves the model, a step loads it; a step refuses it once the XML
// changed, when someone else could have written it, and says NotFound
// when there is none (it then loads the XML).
TEST(NodeModelCacheTest, UsedOnlyWhileTheXmlIsTheFileItWasMadeFrom) {
  if (geteuid() != 0) GTEST_SKIP() << "the trusted loader wants root's files";
  TempDir tmp;
  const std::string xml = tmp.path() + "/topology.xml";
  const std::string model = ModelCachePath(xml);
  CopyFile(Fixture("dgx-h100-8gpu.xml"), xml);
  chmod(xml.c_str(), 0644);
  NodeModel m, from_xml;
  EXPECT_EQ(LoadNodeModelCache(xml, &m).code(), Status::Code::kNotFound);
  ASSERT_TRUE(SaveNodeModelCache(xml).ok());
  ASSERT_TRUE(LoadNodeModelCache(xml, &m).ok());
  ASSERT_TRUE(LoadTrustedNodeModel(xml, &from_xml).ok());
  ExpectSameModel(from_xml, m, "saved");

  chmod(model.c_str(), 0666);
  EXPECT_EQ(LoadNodeModelCache(xml, &m).message(),
            model +
                ": the file is writable by group or others; not loaded "
                "inside slurmstepd");
  chmod(model.c_str(), 0644);

  // Replaced by another file (a new inode), or the same one rewritten.
  const std::string stale =
      model + ": made from an earlier " + xml + "; not used";
  CopyFile(Fixture("dgx2-16gpu.xml"), xml + ".new");
  ASSERT_EQ(rename((xml + ".new").c_str(), xml.c_str()), 0);
  EXPECT_EQ(LoadNodeModelCache(xml, &m).message(), stale);
  ASSERT_TRUE(SaveNodeModelCache(xml).ok());
  ASSERT_TRUE(LoadNodeModelCache(xml, &m).ok());
  EXPECT_EQ(m.gpus.size(), 16u) << "the new XML's model";
  std::ofstream(xml, std::ios::app) << "\n";
  EXPECT_EQ(LoadNodeModelCache(xml, &m).message(), stale);
  ASSERT_TRUE(SaveNodeModelCache(xml).ok());
  chmod(xml.c_str(), 0600);  // only ctime changes
  EXPECT_EQ(LoadNodeModelCache(xml, &m).message(), stale);

  // A model file that is a symlink to a good one is not followed.
  ASSERT_TRUE(SaveNodeModelCache(xml).ok());
  ASSERT_EQ(rename(model.c_str(), (model + ".real").c_str()), 0);
  ASSERT_EQ(symlink((model + ".real").c_str(), model.c_str()), 0);
  EXPECT_EQ(LoadNodeModelCache(xml, &m).message(),
            model + ": cannot open: Too many levels of symbolic links");
}

}  // namespace
}  // namespace dist_train
