// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "jobgen/yaml_walker.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "jobgen/input_file.h"

namespace dist_train {
namespace {

YAML::Node Load(const std::string& text) {
  YAML::Node n;
  Status st = LoadYamlText(text, "t.yaml", &n);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return n;
}

TEST(YamlWalkerTest, DescribeNodeSaysWhatItGot) {
  YAML::Node n = Load("{s: two, l: [1], m: {a: 1}}");
  EXPECT_EQ(DescribeNode(n["s"]), "'two'");
  EXPECT_EQ(DescribeNode(n["l"]), "a list");
  EXPECT_EQ(DescribeNode(n["m"]), "a mapping");
  EXPECT_EQ(DescribeNode(YAML::Node()), "nothing");
}

TEST(YamlWalkerTest, ErrorsNamePositionOrOverride) {
  YamlSource src{"t.yaml", {"job.nodes"}};
  YAML::Node n = Load("a:\n  b: x\n");
  EXPECT_EQ(YamlError(src, n["a"]["b"], "a.b", "bad").message(),
            "t.yaml:2:6: a.b: bad");
  EXPECT_EQ(YamlError(src, YAML::Node("x"), "a.b", "bad").message(),
            "t.yaml: a.b: bad");
  EXPECT_EQ(YamlError(src, n, "job.nodes", "bad").message(),
            "--set job.nodes: job.nodes: bad");
  EXPECT_EQ(YamlError(src, n, "job.nodes.x", "bad").message(),
            "--set job.nodes: job.nodes.x: bad");
  EXPECT_EQ(YamlError(src, n, "job.nodesx", "bad").message(),
            "t.yaml:1:1: job.nodesx: bad");
}

TEST(YamlWalkerTest, TypedReads) {
  YamlSource src{"t.yaml", {}};
  YAML::Node n = Load(
      "{s: hi, u: 7, b: yes, f: 2.5, l: [a, b], v: lr_1, bad: 1X, big: 9}");
  std::string s;
  ASSERT_TRUE(ReadString(src, n["s"], "s", &s).ok());
  EXPECT_EQ(s, "hi");
  EXPECT_EQ(ReadString(src, n["l"], "l", &s).message(),
            "t.yaml:1:34: l: expected a string, got a list");
  uint32_t u = 0;
  ASSERT_TRUE(ReadUint(src, n["u"], "u", 1, 8, &u).ok());
  EXPECT_EQ(u, 7u);
  EXPECT_EQ(ReadUint(src, n["big"], "big", 1, 8, &u).message(),
            "t.yaml:1:65: big: expected an integer from 1 to 8, got '9'");
  bool b = false;
  ASSERT_TRUE(ReadBool(src, n["b"], "b", &b).ok());
  EXPECT_TRUE(b);
  EXPECT_EQ(ReadBool(src, n["s"], "s", &b).message(),
            "t.yaml:1:5: s: expected true or false, got 'hi'");
  double f = 0;
  ASSERT_TRUE(ReadNumber(src, n["f"], "f", &f).ok());
  EXPECT_EQ(f, 2.5);
  EXPECT_EQ(ReadNumber(src, n["s"], "s", &f).message(),
            "t.yaml:1:5: s: expected a number, got 'hi'");
  std::vector<std::string> l;
  ASSERT_TRUE(ReadStringList(src, n["l"], "l", &l).ok());
  EXPECT_EQ(l, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(ReadStringList(src, n["s"], "s", &l).message(),
            "t.yaml:1:5: s: expected a list, got 'hi'");
  ASSERT_TRUE(ReadVarName(src, n["v"], "v", &s).ok());
  EXPECT_EQ(s, "lr_1");
  EXPECT_EQ(ReadVarName(src, n["bad"], "bad", &s).message(),
            "t.yaml:1:56: bad: '1X' is not a valid variable name "
            "([A-Za-z_][A-Za-z0-9_]*)");
}

TEST(YamlWalkerTest, WalkMapCallsHandlersInDocumentOrder) {
  YamlSource src{"t.yaml", {}};
  uint32_t nodes = 0;
  bool exclusive = false;
  std::string name;
  std::vector<std::string> seen;
  KeyTable table = {{"name", StringKey(src, &name)},
                    {"nodes", UintKey(src, 1, 10, &nodes)},
                    {"exclusive", BoolKey(src, &exclusive)},
                    {"path", [&](const YAML::Node&, const std::string& p) {
                       seen.push_back(p);
                       return Status::OK();
                     }}};
  YAML::Node n = Load("job: {path: x, nodes: 3, exclusive: true, name: a}");
  ASSERT_TRUE(WalkMap(src, n["job"], "job", table).ok());
  EXPECT_EQ(nodes, 3u);
  EXPECT_TRUE(exclusive);
  EXPECT_EQ(name, "a");
  EXPECT_EQ(seen, std::vector<std::string>{"job.path"});
  EXPECT_TRUE(WalkMap(src, n["missing"], "missing", table).ok());
  EXPECT_EQ(WalkMap(src, Load("job: {nodse: 1}"), "", table).message(),
            "t.yaml:1:1: top level: unknown key 'job'; valid keys: name, "
            "nodes, exclusive or path");
  EXPECT_EQ(WalkMap(src, Load("{nodse: 1}"), "job", table).message(),
            "t.yaml:1:2: job: unknown key 'nodse' (did you mean 'nodes'?); "
            "valid keys: name, nodes, exclusive or path");
  EXPECT_EQ(WalkMap(src, Load("{name: a, name: b}"), "job", table).message(),
            "t.yaml:1:11: job.name: given twice");
  EXPECT_EQ(WalkMap(src, Load("[1]"), "job", table).message(),
            "t.yaml:1:1: job: expected a mapping, got a list");
}

TEST(YamlWalkerTest, StringListKeyAndNoDuplicateKeys) {
  YamlSource src{"t.yaml", {}};
  std::vector<std::string> mounts;
  ASSERT_TRUE(StringListKey(src, &mounts)(Load("[a, b]"), "m").ok());
  EXPECT_EQ(mounts, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(NoDuplicateKeys(src, Load("{a: 1, b: 2}"), "env").ok());
  EXPECT_EQ(NoDuplicateKeys(src, Load("{a: 1, a: 2}"), "env").message(),
            "t.yaml:1:8: env.a: given twice");
}

TEST(YamlWalkerTest, LoadingErrors) {
  YAML::Node n;
  EXPECT_EQ(LoadYamlText("a: [1\n", "t.yaml", &n).message(),
            "t.yaml:2:1: YAML syntax error: end of sequence flow not found");
  EXPECT_EQ(LoadYamlText("a: 1\n---\nb: 2\n", "t.yaml", &n).message(),
            "t.yaml holds 2 YAML documents; gen-sbatch reads exactly one");
  Status st = LoadYamlFile("/nonexistent/x.yaml", &n);
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_EQ(st.message(), "/nonexistent/x.yaml: cannot read the file");
  // A directory opens but cannot be read: an error, not an exception.
  st = LoadYamlFile(DT_SOURCE_DIR "/tests", &n);
  EXPECT_EQ(st.message(),
            std::string(DT_SOURCE_DIR) + "/tests: cannot read the file");
  ASSERT_TRUE(LoadYamlText("", "t.yaml", &n).ok());
  EXPECT_TRUE(n.IsNull());
  ASSERT_TRUE(LoadYamlValue("[a, b]", &n).ok());
  EXPECT_TRUE(n.IsSequence());
  EXPECT_EQ(LoadYamlValue("[a", &n).message(),
            "end of sequence flow not found");
}

// yaml-cpp 0.7's LoadAll never returns on these (it appends empty documents
// until memory runs out); each must be a prompt error naming the position.
TEST(YamlWalkerTest, TokensThatLoopYamlCppAreSyntaxErrors) {
  const struct {
    const char* text;
    const char* message;
  } cases[] = {
      {",a:", "t.yaml:1:1: YAML syntax error: unexpected ','"},
      {",", "t.yaml:1:1: YAML syntax error: unexpected ','"},
      {",a: b", "t.yaml:1:1: YAML syntax error: unexpected ','"},
      {"---\n,", "t.yaml:2:1: YAML syntax error: unexpected ','"},
      {"a: 1\n---\n  ,x", "t.yaml:3:3: YAML syntax error: unexpected ','"},
  };
  // yaml-cpp 0.7 (Debian 12) loops on these and gets exactly `message`;
  // newer releases refuse them in their own words (a located error) or
  // read them: never a hang, never an unlocated error.
  for (const auto& c : cases) {
    YAML::Node n;
    std::string m = LoadYamlText(c.text, "t.yaml", &n).message();
    EXPECT_TRUE(m == c.message || m.empty() || m.rfind("t.yaml:", 0) == 0)
        << c.text << ": " << m;
  }
  YAML::Node n;
  EXPECT_TRUE(LoadYamlText("[,a:]", "t.yaml", &n).ok()) << "inside brackets";
  EXPECT_EQ(LoadYamlText("---\n---\n---\n", "t.yaml", &n).message(),
            "t.yaml holds 3 YAML documents; gen-sbatch reads exactly one");
}

TEST(YamlWalkerTest, DeepNestingIsAnError) {
  YAML::Node n;
  Status st = LoadYamlText(std::string(100000, '['), "t.yaml", &n);
  EXPECT_EQ(st.message().rfind("t.yaml:1:", 0), 0u) << st.message();
  EXPECT_NE(st.message().find(": YAML nested too deeply ("), std::string::npos)
      << st.message();
}

// "Billion laughs": nine levels of ten aliases are 10^9 values to whoever
// walks them; refused when loaded, whatever the schema would read.
TEST(YamlWalkerTest, AliasBombsAreRefused) {
  std::string text = "a0: &a0 [x]\n";
  for (int i = 1; i <= 9; ++i) {
    std::string prev = "*a" + std::to_string(i - 1);
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) text += (k ? ", " : "") + prev;
    text += "]\n";
  }
  YAML::Node n;
  EXPECT_EQ(LoadYamlText(text, "t.yaml", &n).message(),
            "t.yaml: with its aliases expanded the YAML document holds more "
            "than 1000000 values or 4194304 bytes of text");
  // Long text repeated through aliases counts each time.
  std::string wide = "a: &a " + std::string(100000, 'x') + "\nb: [";
  for (int k = 0; k < 50; ++k) wide += (k ? ", " : "") + std::string("*a");
  EXPECT_EQ(LoadYamlText(wide + "]\n", "t.yaml", &n).message(),
            "t.yaml: with its aliases expanded the YAML document holds more "
            "than 1000000 values or 4194304 bytes of text");
  EXPECT_EQ(LoadYamlText("a: &a [*a, *a]\n", "t.yaml", &n).message(),
            "t.yaml: with its aliases expanded the YAML document holds more "
            "than 1000000 values or 4194304 bytes of text")
      << "an anchor holding itself is endless";
  EXPECT_TRUE(LoadYamlText("a: &a {x: 1}\nb: *a\nc: *a\n", "t.yaml", &n).ok())
      << "ordinary aliases are fine";
}

TEST(YamlWalkerTest, FilesOverTheCapAreNotParsed) {
  std::string path = ::testing::TempDir() + "yaml_walker_big.yaml";
  {
    std::ofstream f(path);
    f << "a: '" << std::string(kMaxInputBytes, 'x') << "'\n";
  }
  YAML::Node n;
  EXPECT_EQ(LoadYamlFile(path, &n).message(),
            path +
                ": larger than the 1048576-byte limit for a gen-sbatch "
                "input");
  std::remove(path.c_str());
}

TEST(YamlWalkerTest, ReplaceAtPathKeepsAliasesAndCreatesMappings) {
  YAML::Node root = Load("a: &v {x: 1}\nb: *v\ns: 3\n");
  ASSERT_TRUE(ReplaceAtPath(root, {"a", "x"}, YAML::Node("2")).ok());
  ASSERT_TRUE(ReplaceAtPath(root, {"new", "deep", "k"}, YAML::Node("v")).ok());
  EXPECT_EQ(root["a"]["x"].Scalar(), "2");
  EXPECT_EQ(root["new"]["deep"]["k"].Scalar(), "v");
  ASSERT_TRUE(ReplaceAtPath(root, {"a"}, YAML::Node("flat")).ok());
  EXPECT_EQ(root["a"].Scalar(), "flat");
  EXPECT_TRUE(root["b"].IsMap()) << "the alias keeps the old value";
  EXPECT_EQ(ReplaceAtPath(root, {"s", "x"}, YAML::Node("1")).message(),
            "s is not a mapping");
}

TEST(YamlWalkerTest, CatchYamlErrorsNamesTheFile) {
  EXPECT_TRUE(CatchYamlErrors("t.yaml", [] { return Status::OK(); }).ok());
  EXPECT_EQ(
      CatchYamlErrors("t.yaml", [] { return Status::InvalidArgument("mine"); })
          .message(),
      "mine");
  // Reading a list as a string throws; the message keeps the file's name.
  auto throws = [] {
    return Status::InvalidArgument(YAML::Load("[1]").as<std::string>());
  };
  EXPECT_EQ(CatchYamlErrors("t.yaml", throws).message(),
            "t.yaml: bad conversion");
}

}  // namespace
}  // namespace dist_train
