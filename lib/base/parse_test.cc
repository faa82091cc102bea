// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "base/parse.h"

#include <gtest/gtest.h>

namespace dist_train {
namespace {

TEST(ParseUintTest, AcceptsPlainDecimalInRange) {
  uint64_t v = 0;
  EXPECT_TRUE(ParseUint("0", 0, 10, &v));
  EXPECT_EQ(v, 0u);
  EXPECT_TRUE(ParseUint("65535", 0, 65535, &v));
  EXPECT_EQ(v, 65535u);
  EXPECT_TRUE(ParseUint("18446744073709551615", 0, UINT64_MAX, &v));
  EXPECT_EQ(v, UINT64_MAX);
}

TEST(ParseUintTest, RejectsJunkSignsSpacesAndOverflow) {
  uint64_t v = 7;
  for (const char* bad : {"", "5x", "x5", "+5", "-5", " 5", "5 ", "0x10",
                          "18446744073709551616", "99999999999999999999"}) {
    EXPECT_FALSE(ParseUint(bad, 0, UINT64_MAX, &v)) << bad;
  }
  EXPECT_FALSE(ParseUint("11", 0, 10, &v));
  EXPECT_FALSE(ParseUint("1", 2, 10, &v));
  EXPECT_EQ(v, 7u) << "a failed parse must not write the output";
}

TEST(ParseBoolTest, StrictWords) {
  bool b = false;
  EXPECT_TRUE(ParseBool("yes", &b));
  EXPECT_TRUE(b);
  EXPECT_TRUE(ParseBool("0", &b));
  EXPECT_FALSE(b);
  EXPECT_FALSE(ParseBool("Yes", &b));
  EXPECT_FALSE(ParseBool("", &b));
  EXPECT_FALSE(ParseBool("2", &b));
}

TEST(SplitTest, KeepsEmptyFields) {
  auto parts = Split("a,,b", ',');
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0], "a");
  EXPECT_EQ(parts[1], "");
  EXPECT_EQ(parts[2], "b");
  EXPECT_EQ(Split("", ',').size(), 1u);
}

TEST(NearestWordTest, SuggestsTyposOnly) {
  std::vector<std::string> words = {"mode", "nproc", "verbose"};
  EXPECT_EQ(NearestWord("mdoe", words), "mode");
  EXPECT_EQ(NearestWord("verbos", words), "verbose");
  EXPECT_EQ(NearestWord("banana", words), "");
  EXPECT_EQ(NearestWord("", words), "");
}

TEST(ShownValueTest, EscapesControlBytesAndCutsLongValues) {
  struct Case {
    std::string in, want;
  } cases[] = {
      {"node[1-4]", "node[1-4]"},
      {"", ""},
      {"a\nrendezvous complete", "a\\x0arendezvous complete"},
      {"\x1b[31mred", "\\x1b[31mred"},
      {"back\\slash", "back\\x5cslash"},
      {"caf\xc3\xa9", "caf\\xc3\\xa9"},
      {std::string(64, 'x'), std::string(64, 'x')},
      {std::string(65, 'x'), std::string(64, 'x') + "... (65 bytes)"},
      {std::string(1 << 20, '0'), std::string(64, '0') + "... (1048576 bytes)"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ShownValue(c.in), c.want) << c.in.substr(0, 80);
  }
}

TEST(JoinAlternativesTest, EnglishList) {
  EXPECT_EQ(JoinAlternatives({"a"}), "a");
  EXPECT_EQ(JoinAlternatives({"a", "b"}), "a or b");
  EXPECT_EQ(JoinAlternatives({"a", "b", "c"}), "a, b or c");
}

TEST(ParseKeyValueLinesTest, ReadsEachKeyOnce) {
  std::map<std::string, std::string> kv;
  ASSERT_TRUE(ParseKeyValueLines("a=1\nb=x=y\nc=\n", &kv));
  EXPECT_EQ(kv.size(), 3u);
  EXPECT_EQ(kv["b"], "x=y");
  EXPECT_EQ(kv["c"], "");
  EXPECT_TRUE(ParseKeyValueLines("a=1", &kv));
  EXPECT_EQ(kv["a"], "1");
}

TEST(ParseKeyValueLinesTest, RefusesRepeatedKeysAndBareLines) {
  std::map<std::string, std::string> kv;
  EXPECT_FALSE(ParseKeyValueLines("a=1\na=2\n", &kv));
  EXPECT_FALSE(ParseKeyValueLines("a=1\nnoequals\n", &kv));
  EXPECT_FALSE(ParseKeyValueLines("a=1\n\n", &kv));
}

}  // namespace
}  // namespace dist_train
