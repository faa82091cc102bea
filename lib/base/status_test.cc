// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "dist_train/status.h"

#include <gtest/gtest.h>

namespace dist_train {
namespace {

TEST(StatusTest, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "OK");
  EXPECT_EQ(s.message(), "");
}

TEST(StatusTest, ErrorCarriesCodeAndMessage) {
  Status s = Status::InvalidArgument("bad word 'x'");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "bad word 'x'");
  EXPECT_EQ(s.ToString(), "Invalid argument: bad word 'x'");
}

Status FailsThenNeverReached(int* reached) {
  DT_RETURN_IF_ERROR(Status::NotFound("gone"));
  *reached = 1;
  return Status::OK();
}

TEST(StatusTest, ReturnIfErrorPropagates) {
  int reached = 0;
  Status s = FailsThenNeverReached(&reached);
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_EQ(reached, 0);
}

}  // namespace
}  // namespace dist_train
