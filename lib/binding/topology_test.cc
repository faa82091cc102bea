// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Loading topology XML that could be hostile: inside slurmstepd only files
// root alone could have written; a user's file only behind a child process.
#include "binding/topology.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "binding/root_files.h"
#include "testing/testing_files.h"
#include "testing/testing_topologies.h"

namespace dist_train {
namespace {

using testing_files::TempDir;
using testing_topologies::Fixture;

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream(path) << data;
}

// hwloc 2.9 crashes on these (found by mutating tests/fixtures/*.xml):
// each would have taken slurmstepd or dt-topo down with it.
struct Crasher {
  const char* name;
  int signal;
  std::string xml;
};

std::vector<Crasher> Crashers() {
  return {
      // Assertion `count > 0' in hwloc_bitmap_sscanf: a set starting with
      // a comma.
      {"set-with-leading-comma", SIGABRT,
       "<topology><object complete_nodeset=\",0x1\"/>"},
      // hwloc_bitmap_set from hwloc_insert_object_by_parent: an object
      // without a type after a PU.
      {"untyped-object-after-pu", SIGSEGV,
       "<topology version=\"2.0\"><object cpuset=\"0xff\"><object "
       "type=\"PU\" cpuset=\"0x2\"/><object/></object>"},
      // hwloc_bitmap_compare_first: a PU with an empty cpuset beside
      // another PU, under a machine with all its sets.
      {"empty-pu-cpuset", SIGSEGV,
       "<topology version=\"2.0\"><object type=\"Machine\" "
       "cpuset=\"0xff\" complete_cpuset=\"0xff\" nodeset=\"0x3\" "
       "complete_nodeset=\"0x3\" allowed_cpuset=\"0xf7\" "
       "allowed_nodeset=\"0x3\"><object type=\"PU\" os_index=\"2\" "
       "cpuset=\"\"/><object type=\"PU\" os_index=\"6\" "
       "cpuset=\"0x40\"/></object>"},
      // hwloc_bitmap_or: a Package at the root holding a NUMA node.
      {"package-at-the-root", SIGSEGV,
       "<topology version=\"2.0\"><object type=\"Package\" "
       "cpuset=\"0xcc\" complete_cpuset=\"0xcc\" nodeset=\"0x2\" "
       "complete_nodeset=\"0x2\"><object type=\"NUMANode\" "
       "os_index=\"1\" cpuset=\"0xcc\" complete_cpuset=\"0xcc\" "
       "nodeset=\"0xe\"/></object></topology>"},
  };
}

TEST(LoadTrustedNodeModelTest, LoadsOnlyWhatRootAloneCouldHaveWritten) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to own files as others";
  TempDir tmp;
  const std::string xml = ReadFile(Fixture("two-gpus-per-switch.xml"));
  const std::string file = tmp.path() + "/topology.xml";
  const std::string deny = "; not loaded inside slurmstepd";
  struct Case {
    const char* name;
    std::function<void()> arrange;
    std::string error;  // after "FILE: "; "" = loads
  } cases[] = {
      {"root's 0644 file", [] {}, ""},
      {"group-writable", [&] { chmod(file.c_str(), 0664); },
       "the file is writable by group or others" + deny},
      {"owned by nobody",
       [&] { EXPECT_EQ(chown(file.c_str(), 65534, 65534), 0); },
       "the file is owned by uid 65534, not root" + deny},
      {"a symlink to root's file",
       [&] {
         EXPECT_EQ(rename(file.c_str(), (file + ".real").c_str()), 0);
         EXPECT_EQ(symlink((file + ".real").c_str(), file.c_str()), 0);
       },
       "cannot open: Too many levels of symbolic links"},
      {"a second hard link",
       [&] {
         EXPECT_EQ(link(file.c_str(), (tmp.path() + "/other").c_str()), 0);
       },
       "the file has 2 hard links" + deny},
      {"directory writable by all", [&] { chmod(tmp.path().c_str(), 0777); },
       "its directory is writable by group or others" + deny},
      {"sticky directory writable by all",
       [&] { chmod(tmp.path().c_str(), 01777); }, ""},
      {"directory owned by nobody",
       [&] { EXPECT_EQ(chown(tmp.path().c_str(), 65534, 65534), 0); },
       "its directory is owned by uid 65534, not root" + deny},
      {"over the size cap",
       [&] { EXPECT_EQ(truncate(file.c_str(), kMaxTopologyFile + 1), 0); },
       "33554433 bytes, more than the 33554432-byte cap for topology files"},
      {"a directory",
       [&] {
         EXPECT_EQ(unlink(file.c_str()), 0);
         EXPECT_EQ(mkdir(file.c_str(), 0755), 0);
       },
       "not a regular file"},
  };
  for (const Case& c : cases) {
    std::string cmd = "rm -rf " + tmp.path() + "/*";
    ASSERT_EQ(system(cmd.c_str()), 0);
    ASSERT_EQ(chown(tmp.path().c_str(), 0, 0), 0);
    chmod(tmp.path().c_str(), 0755);
    WriteFile(file, xml);
    chmod(file.c_str(), 0644);
    c.arrange();
    NodeModel m;
    Status s = LoadTrustedNodeModel(file, &m);
    EXPECT_EQ(s.message(), c.error.empty() ? "" : file + ": " + c.error)
        << c.name;
    EXPECT_EQ(m.gpus.size(), c.error.empty() ? 4u : 0u) << c.name;
  }
}

TEST(LoadNodeModelIsolatedTest, LoadsAGoodFileLikeTheDirectLoader) {
  NodeModel direct, isolated;
  ASSERT_TRUE(LoadNodeModel(Fixture("dgx-h100-8gpu.xml"), &direct).ok());
  Status s = LoadNodeModelIsolated(Fixture("dgx-h100-8gpu.xml"), &isolated);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(isolated.gpus.size(), direct.gpus.size());
  EXPECT_EQ(isolated.nics.size(), direct.nics.size());
  EXPECT_EQ(AllPus(isolated), AllPus(direct));
}

// How hwloc itself ends on `file` in a child of ours: true when it crashed
// (a signal, or a sanitizer's exit after one). Which inputs crash depends
// on the hwloc release (2.9 crashes on all of Crashers(); 2.12 on fewer,
// and on the DOCTYPE file; 2.15 on none).
bool RawHwlocCrashes(const std::string& file) {
  pid_t pid = fork();
  if (pid == 0) {
    int null_fd = open("/dev/null", O_WRONLY);
    if (null_fd >= 0) dup2(null_fd, STDERR_FILENO);
    rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    NodeModel m;
    _exit(LoadNodeModel(file, &m).ok() ? 0 : 3);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return !WIFEXITED(status) ||
         (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 3);
}

// The isolated loader never takes its caller down: where hwloc crashes it
// says so, elsewhere it gives exactly what the direct loader gives.
void ExpectIsolatedLoad(const std::string& file, const std::string& name) {
  NodeModel m;
  Status s = LoadNodeModelIsolated(file, &m);
  if (RawHwlocCrashes(file)) {
    EXPECT_EQ(s.message().rfind("hwloc crashed parsing " + file + " (", 0), 0u)
        << name << ": " << s.message();
  } else {
    NodeModel direct;
    EXPECT_EQ(s.message(), LoadNodeModel(file, &direct).message()) << name;
  }
}

TEST(LoadNodeModelIsolatedTest, TurnsEachKnownHwlocCrashIntoAnError) {
  TempDir tmp;
  for (const Crasher& c : Crashers()) {
    const std::string file = tmp.path() + "/" + c.name + ".xml";
    WriteFile(file, c.xml);
    ExpectIsolatedLoad(file, c.name);
  }
}

TEST(LoadNodeModelIsolatedTest, ReportsParseErrorsFromTheParent) {
  TempDir tmp;
  const std::string file = tmp.path() + "/doctype.xml";
  WriteFile(file, "<!DOCTYPEl><t/>");  // hwloc 2.12 crashes, 2.9 refuses it
  ExpectIsolatedLoad(file, "doctype");
  NodeModel m;
  EXPECT_EQ(LoadNodeModelIsolated(tmp.path() + "/none.xml", &m).message(),
            tmp.path() + "/none.xml: cannot open: No such file or directory");
}

TEST(SaveTopologyXmlTest, WritesAFileTheTrustedLoaderAcceptsAndNoSymlink) {
  if (geteuid() != 0) GTEST_SKIP() << "the trusted loader wants root's file";
  TempDir tmp;
  const std::string path = tmp.path() + "/topology.xml";
  const std::string victim = tmp.path() + "/victim";
  WriteFile(victim, "precious");
  // A planted symlink where the temp file goes must not be followed.
  std::string trap = path + ".tmp." + std::to_string(getpid());
  ASSERT_EQ(symlink(victim.c_str(), trap.c_str()), 0);
  mode_t old_umask = umask(077);
  Status s = SaveTopologyXml(path);
  umask(old_umask);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(ReadFile(victim), "precious");
  struct stat st;
  ASSERT_EQ(lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  EXPECT_NE(access(trap.c_str(), F_OK), 0);
  NodeModel m;
  EXPECT_TRUE(LoadTrustedNodeModel(path, &m).ok());
}

}  // namespace
}  // namespace dist_train
