// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "base/env.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <sstream>

namespace dist_train {
namespace {

// One reader's answer as text: "unset", "=VALUE", or the error message,
// so every case of a table is one string comparison.
template <typename T>
std::string Answer(const Status& status, const std::optional<T>& out) {
  if (!status.ok()) return status.message();
  if (!out) return "unset";
  std::ostringstream text;
  text << "=" << *out;
  return text.str();
}

struct Case {
  const char* value;  // nullptr: the variable is unset
  const char* want;
};

EnvMap With(const char* value) {
  if (value == nullptr) return {{"OTHER", "1"}};
  return {{"V", value}};
}

TEST(EnvTest, UintInRange) {
  const Case cases[] = {
      {nullptr, "unset"},
      {"0", "=0"},
      {"65535", "=65535"},
      {"65536", "V='65536' is not an integer from 0 to 65535"},
      {"", "V='' is not an integer from 0 to 65535"},
      {"12x", "V='12x' is not an integer from 0 to 65535"},
      {" 1", "V=' 1' is not an integer from 0 to 65535"},
      {"+1", "V='+1' is not an integer from 0 to 65535"},
      {"-1", "V='-1' is not an integer from 0 to 65535"},
  };
  for (const Case& c : cases) {
    std::optional<uint64_t> out;
    EXPECT_EQ(Answer(EnvUint(With(c.value), "V", 0, 65535, &out), out), c.want)
        << (c.value ? c.value : "(unset)");
  }
}

TEST(EnvTest, Count) {
  const Case cases[] = {
      {nullptr, "unset"},
      {"0", "=0"},
      {"4294967295", "=4294967295"},
      {"4294967296", "V='4294967296' is not a count"},
      {"lots", "V='lots' is not a count"},
  };
  for (const Case& c : cases) {
    std::optional<uint64_t> out;
    EXPECT_EQ(Answer(EnvCount(With(c.value), "V", &out), out), c.want);
  }
}

TEST(EnvTest, Bool) {
  const char* bad = " is not a boolean (1, true, yes, on, 0, false, no or off)";
  const std::string maybe = std::string("V='maybe'") + bad;
  const std::string empty = std::string("V=''") + bad;
  const std::string upper = std::string("V='Yes'") + bad;
  const Case cases[] = {
      {nullptr, "unset"},  {"1", "=1"},
      {"yes", "=1"},       {"on", "=1"},
      {"true", "=1"},      {"0", "=0"},
      {"no", "=0"},        {"off", "=0"},
      {"false", "=0"},     {"maybe", maybe.c_str()},
      {"", empty.c_str()}, {"Yes", upper.c_str()},
  };
  for (const Case& c : cases) {
    std::optional<bool> out;
    EXPECT_EQ(Answer(EnvBool(With(c.value), "V", &out), out), c.want);
  }
}

TEST(EnvTest, OneOfGivesTheIndex) {
  const std::vector<std::string> words = {"tcp", "shm", "nccl"};
  const Case cases[] = {
      {nullptr, "unset"},
      {"tcp", "=0"},
      {"nccl", "=2"},
      {"TCP", "V='TCP' is not one of tcp, shm or nccl"},
      {"", "V='' is not one of tcp, shm or nccl"},
  };
  for (const Case& c : cases) {
    std::optional<size_t> out;
    EXPECT_EQ(Answer(EnvOneOf(With(c.value), "V", words, &out), out), c.want);
  }
}

TEST(EnvTest, EpochSeconds) {
  const Case cases[] = {
      {nullptr, "unset"},
      {"1700000000", "=1700000000"},
      {"9223372036854775807", "=9223372036854775807"},
      {"9223372036854775808",
       "V='9223372036854775808' is not seconds since the epoch"},
      {"0", "V='0' is not seconds since the epoch"},
      {"12x", "V='12x' is not seconds since the epoch"},
      {"-5", "V='-5' is not seconds since the epoch"},
      {"", "V='' is not seconds since the epoch"},
  };
  for (const Case& c : cases) {
    std::optional<int64_t> out;
    EXPECT_EQ(Answer(EnvEpochSeconds(With(c.value), "V", &out), out), c.want);
  }
}

TEST(EnvTest, PositiveSeconds) {
  const Case cases[] = {
      {nullptr, "unset"},
      {"2.5", "=2.5"},
      {".5", "=0.5"},
      {"300", "=300"},
      {"1e2", "=100"},
      {"0", "V='0' is not a positive number of seconds"},
      {"-1", "V='-1' is not a positive number of seconds"},
      {"+1", "V='+1' is not a positive number of seconds"},
      {" 1", "V=' 1' is not a positive number of seconds"},
      {"1 ", "V='1 ' is not a positive number of seconds"},
      {"0x10", "V='0x10' is not a positive number of seconds"},
      {"inf", "V='inf' is not a positive number of seconds"},
      {"1e999", "V='1e999' is not a positive number of seconds"},
      {"nan", "V='nan' is not a positive number of seconds"},
      {"", "V='' is not a positive number of seconds"},
  };
  for (const Case& c : cases) {
    std::optional<double> out;
    EXPECT_EQ(Answer(EnvSeconds(With(c.value), "V", &out), out), c.want);
  }
}

TEST(EnvTest, ParseWithTheCallersFormat) {
  auto even = [](const std::string& v) { return v.size() % 2 == 0; };
  const Case cases[] = {
      {nullptr, "unset"},
      {"ab", "=ab"},
      {"abc", "V='abc' has an odd length"},
  };
  for (const Case& c : cases) {
    std::optional<std::string> out;
    EXPECT_EQ(
        Answer(EnvParse(With(c.value), "V", even, "has an odd length", &out),
               out),
        c.want);
  }
}

TEST(EnvTest, FirstSetAndFind) {
  EnvMap env = {{"B", "2"}, {"C", "3"}};
  EXPECT_STREQ(EnvFirstSet(env, {"A", "B", "C"}), "B");
  EXPECT_EQ(EnvFirstSet(env, {"A", "Z"}), nullptr);
  ASSERT_NE(EnvFind(env, "C"), nullptr);
  EXPECT_EQ(*EnvFind(env, "C"), "3");
  EXPECT_EQ(EnvFind(env, "A"), nullptr);
}

TEST(EnvTest, ProcessEnvHoldsTheEnvironment) {
  setenv("DT_ENV_TEST", "a=b", 1);
  EnvMap env = ProcessEnv();
  ASSERT_NE(EnvFind(env, "DT_ENV_TEST"), nullptr);
  EXPECT_EQ(*EnvFind(env, "DT_ENV_TEST"), "a=b") << "split at the first '='";
  unsetenv("DT_ENV_TEST");
  EXPECT_EQ(EnvFind(ProcessEnv(), "DT_ENV_TEST"), nullptr);
}

}  // namespace
}  // namespace dist_train
