// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "contract/env_record.h"

#include <gtest/gtest.h>

namespace dist_train {
namespace {

TEST(EnvRecordTest, RoundTripsAndDetectsChanges) {
  std::string text = FormatExportRecord({{"RANK", "3"}, {"MASTER_ADDR", "n1"}});
  ExportRecord record;
  ASSERT_TRUE(ParseExportRecord(text, &record).ok()) << text;
  EXPECT_EQ(record.size(), 2u);
  EXPECT_TRUE(WasExportedUnchanged(record, "RANK", "3"));
  EXPECT_FALSE(WasExportedUnchanged(record, "RANK", "4"));
  EXPECT_TRUE(WasExportedUnchanged(record, "MASTER_ADDR", "n1"));
  EXPECT_FALSE(WasExportedUnchanged(record, "WORLD_SIZE", "3"));
}

TEST(EnvRecordTest, EmptyRecordIsValid) {
  ExportRecord record = {{"X", 1}};
  ASSERT_TRUE(ParseExportRecord("", &record).ok());
  EXPECT_TRUE(record.empty());
}

TEST(EnvRecordTest, MalformedEntriesAreNamed) {
  ExportRecord record = {{"KEEP", 1}};
  for (const char* bad : {"RANK", "RANK:123", "rank:0123456789abcdef",
                          ":0123456789abcdef", "RANK:0123456789abcdeg"}) {
    Status s = ParseExportRecord(bad, &record);
    EXPECT_EQ(s.message(), std::string("DT_EXPORTED: malformed entry '") + bad +
                               "' (expected NAME:16 hex digits)");
  }
  EXPECT_EQ(ParseExportRecord("A:0123456789abcdef,", &record).message(),
            "DT_EXPORTED: malformed entry '' (expected NAME:16 hex digits)");
  EXPECT_EQ(record.count("KEEP"), 1u);
}

}  // namespace
}  // namespace dist_train
