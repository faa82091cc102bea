// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The C API's communicator: made from the environment in forked ranks
// (testing_ranks.h), every collective and dtype, and the checks of what a
// C caller passes.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "dist_train/dist_train.h"
#include "runtime/reduce.h"
#include "testing/testing_env.h"
#include "testing/testing_ranks.h"

namespace dist_train {
namespace {

using namespace testing_ranks;  // NOLINT: test helpers
using testing_env::ExportOptions;
using testing_env::ScopedEnv;

// Small integers, exact in every dtype (bfloat16 included) and in sums of
// a few ranks.
void Put(int dtype, void* buf, size_t i, int v) {
  switch (dtype) {
    case DT_FLOAT32:
      static_cast<float*>(buf)[i] = static_cast<float>(v);
      break;
    case DT_FLOAT64:
      static_cast<double*>(buf)[i] = v;
      break;
    case DT_INT32:
      static_cast<int32_t*>(buf)[i] = v;
      break;
    case DT_INT64:
      static_cast<int64_t*>(buf)[i] = v;
      break;
    case DT_BFLOAT16:
      static_cast<uint16_t*>(buf)[i] = FloatToBf16(static_cast<float>(v));
      break;
    case DT_FLOAT16:
      static_cast<uint16_t*>(buf)[i] = FloatToHalf(static_cast<float>(v));
      break;
  }
}

double Get(int dtype, const void* buf, size_t i) {
  switch (dtype) {
    case DT_FLOAT32:
      return static_cast<const float*>(buf)[i];
    case DT_FLOAT64:
      return static_cast<const double*>(buf)[i];
    case DT_INT32:
      return static_cast<const int32_t*>(buf)[i];
    case DT_INT64:
      return static_cast<const int64_t*>(buf)[i];
    case DT_BFLOAT16:
      return Bf16ToFloat(static_cast<const uint16_t*>(buf)[i]);
    case DT_FLOAT16:
      return HalfToFloat(static_cast<const uint16_t*>(buf)[i]);
  }
  return NAN;
}

int Value(int rank, size_t i) {
  return (rank + 1) * static_cast<int>(i % 5 + 1);
}

// Rank r's buffer of `count` elements: Value(r, i).
std::vector<char> Filled(int dtype, int rank, size_t count) {
  std::vector<char> buf(count * dt_dtype_size(dtype));
  for (size_t i = 0; i < count; ++i) Put(dtype, buf.data(), i, Value(rank, i));
  return buf;
}

// The communicator of a forked rank, from the environment alone.
int Create(const Options& o, ScopedEnv* env, dt_comm** comm) {
  ExportOptions(o, env);
  CHILD_CHECK(dt_comm_create(comm) == DT_OK, "%s", dt_last_error());
  CHILD_CHECK(
      dt_comm_rank(*comm) == o.rank && dt_comm_size(*comm) == o.world_size,
      "rank %d of %d", dt_comm_rank(*comm), dt_comm_size(*comm));
  return 0;
}

// Sum, min, max and avg of every dtype, in place and not.
int AllReduceEveryDtype(dt_comm* c) {
  const int n = dt_comm_size(c), r = dt_comm_rank(c);
  const size_t count = 37;
  for (int dtype = DT_FLOAT32; dtype <= DT_FLOAT16; ++dtype) {
    for (int op = DT_SUM; op <= DT_AVG; ++op) {
      std::vector<char> send = Filled(dtype, r, count), recv(send.size());
      CHILD_CHECK(dt_comm_all_reduce(c, send.data(), recv.data(), count, dtype,
                                     op) == DT_OK,
                  "%s", dt_last_error());
      for (size_t i = 0; i < count; ++i) {
        const int base = Value(0, i), sum = base * n * (n + 1) / 2;
        const double want[] = {double(sum), double(base), double(base * n),
                               dtype == DT_INT32 || dtype == DT_INT64
                                   ? std::floor(double(sum) / n)
                                   : double(sum) / n};
        CHILD_CHECK(Get(dtype, recv.data(), i) == want[op],
                    "dtype %d op %d [%zu]: %g, not %g", dtype, op, i,
                    Get(dtype, recv.data(), i), want[op]);
      }
    }
    std::vector<char> buf = Filled(dtype, r, count);
    CHILD_CHECK(dt_comm_all_reduce(c, buf.data(), buf.data(), count, dtype,
                                   DT_SUM) == DT_OK,
                "%s", dt_last_error());
    CHILD_CHECK(Get(dtype, buf.data(), 3) == Value(0, 3) * n * (n + 1) / 2,
                "in place, dtype %d", dtype);
  }
  return 0;
}

int BroadcastAndGathers(dt_comm* c) {
  const int n = dt_comm_size(c), r = dt_comm_rank(c);
  const size_t count = 11;
  std::vector<char> buf = Filled(DT_INT64, r, count);
  CHILD_CHECK(dt_comm_broadcast(c, buf.data(), count, DT_INT64, 1) == DT_OK,
              "%s", dt_last_error());
  CHILD_CHECK(buf == Filled(DT_INT64, 1, count), "broadcast from rank 1");
  std::vector<char> mine = Filled(DT_FLOAT64, r, count);
  std::vector<char> all(mine.size() * n);
  CHILD_CHECK(dt_comm_all_gather(c, mine.data(), all.data(), count,
                                 DT_FLOAT64) == DT_OK,
              "%s", dt_last_error());
  for (int k = 0; k < n; ++k) {
    CHILD_CHECK(memcmp(all.data() + k * mine.size(),
                       Filled(DT_FLOAT64, k, count).data(), mine.size()) == 0,
                "all_gather: rank %d's slice", k);
  }
  std::vector<char> send = Filled(DT_INT32, r, count * n), slice(count * 4);
  CHILD_CHECK(dt_comm_reduce_scatter(c, send.data(), slice.data(), count,
                                     DT_INT32, DT_MAX) == DT_OK,
              "%s", dt_last_error());
  for (size_t i = 0; i < count; ++i) {
    CHILD_CHECK(Get(DT_INT32, slice.data(), i) == Value(n - 1, r * count + i),
                "reduce_scatter [%zu]", i);
  }
  return dt_comm_barrier(c) == DT_OK ? 0 : 1;
}

int Describe(dt_comm* c) {
  char small[4];
  const size_t len = dt_comm_describe(c, small, sizeof(small));
  std::vector<char> full(len + 1);
  CHILD_CHECK(dt_comm_describe(c, full.data(), full.size()) == len, "length");
  CHILD_CHECK(strlen(small) == 3 && strncmp(small, full.data(), 3) == 0,
              "'%s' is not the start of '%s'", small, full.data());
  CHILD_CHECK(std::string(full.data()).find("3 ranks") != std::string::npos,
              "%s", full.data());
  return dt_comm_describe(c, nullptr, 0) == len ? 0 : 1;
}

TEST(CApiCommTest, EveryCollectiveAndDtypeAcrossThreeRanks) {
  auto fn = [](const Options& o) {
    ScopedEnv env;
    dt_comm* c = nullptr;
    int failed = Create(o, &env, &c);
    if (!failed) failed = AllReduceEveryDtype(c);
    if (!failed) failed = BroadcastAndGathers(c);
    if (!failed) failed = Describe(c);
    int stop = -1;
    if (o.rank == 2) dt_request_stop();
    if (!failed && (dt_agree_to_stop(c, &stop) != DT_OK || stop != 1))
      failed = 1;
    dt_comm_destroy(c);
    return failed;
  };
  EXPECT_EQ(RunRanks(3, Base(3, FreePort()), fn), std::vector<int>(3, 0));
}

// One rank: enough for every check of the arguments.
class CApiOneRankTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Options o = Base(1, FreePort());
    o.rank = 0;
    ExportOptions(o, &env_);
    ASSERT_EQ(dt_comm_create(&comm_), DT_OK) << dt_last_error();
  }
  void TearDown() override { dt_comm_destroy(comm_); }
  ScopedEnv env_;
  dt_comm* comm_ = nullptr;
  float buf_[4] = {1, 2, 3, 4};
};

TEST_F(CApiOneRankTest, AnUnknownDtypeOrOpIsNamed) {
  EXPECT_EQ(dt_comm_all_reduce(comm_, buf_, buf_, 4, 6, DT_SUM),
            DT_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_last_error(),
               "dt_comm_all_reduce: dtype 6 is not a dt_dtype (0 to 5)");
  EXPECT_EQ(dt_comm_all_reduce(comm_, buf_, buf_, 4, DT_FLOAT32, 4),
            DT_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_last_error(),
               "dt_comm_all_reduce: op 4 is not a dt_op (0 to 3)");
  EXPECT_EQ(dt_comm_reduce_scatter(comm_, buf_, buf_, 1, DT_FLOAT32, -1),
            DT_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_last_error(),
               "dt_comm_reduce_scatter: op -1 is not a dt_op (0 to 3)");
  EXPECT_EQ(dt_comm_broadcast(comm_, buf_, 4, -2, 0), DT_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_last_error(),
               "dt_comm_broadcast: dtype -2 is not a dt_dtype (0 to 5)");
  EXPECT_EQ(dt_comm_all_gather(comm_, buf_, buf_, 4, 99), DT_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_last_error(),
               "dt_comm_all_gather: dtype 99 is not a dt_dtype (0 to 5)");
}

TEST_F(CApiOneRankTest, NullHandlesAndBuffersAreNamed) {
  EXPECT_EQ(dt_comm_all_reduce(nullptr, buf_, buf_, 4, DT_FLOAT32, DT_SUM),
            DT_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_last_error(), "dt_comm_all_reduce: comm is NULL");
  EXPECT_EQ(dt_comm_all_reduce(comm_, nullptr, buf_, 4, DT_FLOAT32, DT_SUM),
            DT_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_last_error(), "dt_comm_all_reduce: send is NULL");
  EXPECT_EQ(dt_comm_all_gather(comm_, buf_, nullptr, 1, DT_FLOAT32),
            DT_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_last_error(), "dt_comm_all_gather: recv is NULL");
  EXPECT_EQ(dt_comm_broadcast(comm_, nullptr, 1, DT_FLOAT32, 0),
            DT_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_last_error(), "dt_comm_broadcast: buf is NULL");
  // Nothing to move: NULL is fine.
  EXPECT_EQ(dt_comm_all_reduce(comm_, nullptr, nullptr, 0, DT_FLOAT32, DT_SUM),
            DT_OK)
      << dt_last_error();
  EXPECT_EQ(dt_comm_rank(nullptr), -1);
  EXPECT_EQ(dt_comm_size(nullptr), -1);
  char text[8] = "x";
  EXPECT_EQ(dt_comm_describe(nullptr, text, sizeof(text)), 0u);
  EXPECT_STREQ(text, "");
  dt_comm_destroy(nullptr);
}

TEST_F(CApiOneRankTest, ACountWhoseBytesOverflowIsRefused) {
  EXPECT_EQ(
      dt_comm_all_reduce(comm_, buf_, buf_, SIZE_MAX / 2, DT_FLOAT32, DT_SUM),
      DT_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_last_error(),
               ("dt_comm_all_reduce: count " + std::to_string(SIZE_MAX / 2) +
                " is too large for send")
                   .c_str());
}

TEST_F(CApiOneRankTest, TheRuntimesOwnErrorsComeThrough) {
  EXPECT_EQ(dt_comm_broadcast(comm_, buf_, 4, DT_FLOAT32, 1),
            DT_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_last_error(), "broadcast root 1 is not a rank of 1");
  EXPECT_EQ(dt_comm_all_reduce(comm_, buf_, buf_, 4, DT_FLOAT32, DT_AVG),
            DT_OK);
  EXPECT_EQ(buf_[3], 4);
}

TEST(CApiCommTest, CreateFailsNamingTheMissingVariable) {
  ScopedEnv env;
  for (const char* name : testing_env::kRankVars) env.Unset(name);
  dt_comm* comm = reinterpret_cast<dt_comm*>(&env);  // must become NULL
  EXPECT_EQ(dt_comm_create(&comm), DT_NOT_FOUND);
  EXPECT_EQ(comm, nullptr);
  EXPECT_STREQ(dt_last_error(),
               "RANK is not set: start the workers with srun --dist-train, "
               "dt-run or torchrun, or set Options::rank");
  EXPECT_EQ(dt_comm_create(nullptr), DT_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_last_error(), "dt_comm_create: out is NULL");
}

}  // namespace
}  // namespace dist_train
