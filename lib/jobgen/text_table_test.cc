// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "jobgen/text_table.h"

#include <gtest/gtest.h>

namespace dist_train {
namespace {

TEST(TextTableTest, ColumnsPadToTheLongestValueUpToForty) {
  EXPECT_EQ(AlignedTable({{"index", "lr"}, {"0", "0.1"}, {"10", "0.001"}}),
            "index  lr\n"
            "0      0.1\n"
            "10     0.001\n");
  std::string wide(50, 'w');
  EXPECT_EQ(AlignedTable({{"a", "b"}, {wide, "x"}, {"y", "z"}}),
            "a" + std::string(41, ' ') + "b\n" + wide + "  x\n" + "y" +
                std::string(41, ' ') + "z\n");
  EXPECT_EQ(AlignedTable({}), "");
}

TEST(TextTableTest, CsvQuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(CsvRecord({"index", "lr"}), "index,lr\n");
  EXPECT_EQ(CsvRecord({"a,b", "say \"hi\"", "two\nlines", ""}),
            "\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\n");
}

}  // namespace
}  // namespace dist_train
