// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Test helpers: the values each rank contributes, the results every
// collective must give, and AllCollectives, one forked rank's run of every
// collective, type and op (a child's exit code: 0, or 1 after naming the
// first wrong element).

#ifndef DIST_TRAIN_LIB_TESTING_TESTING_COLLECTIVES_H_
#define DIST_TRAIN_LIB_TESTING_TESTING_COLLECTIVES_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "dist_train/runtime.h"
#include "runtime/reduce.h"
#include "testing/testing_ranks.h"

namespace dist_train {
namespace testing_collectives {

inline double Value(int rank, size_t i) {
  return static_cast<double>((rank + 1) * static_cast<int>(i % 7 + 1));
}

inline void Store(DataType t, void* buf, size_t i, double v) {
  switch (t) {
    case DataType::kFloat32:
      static_cast<float*>(buf)[i] = static_cast<float>(v);
      break;
    case DataType::kFloat64:
      static_cast<double*>(buf)[i] = v;
      break;
    case DataType::kInt32:
      static_cast<int32_t*>(buf)[i] = static_cast<int32_t>(v);
      break;
    case DataType::kInt64:
      static_cast<int64_t*>(buf)[i] = static_cast<int64_t>(v);
      break;
    case DataType::kBFloat16:
      static_cast<uint16_t*>(buf)[i] = FloatToBf16(static_cast<float>(v));
      break;
    case DataType::kFloat16:
      static_cast<uint16_t*>(buf)[i] = FloatToHalf(static_cast<float>(v));
      break;
  }
}

inline double Load(DataType t, const void* buf, size_t i) {
  switch (t) {
    case DataType::kFloat32:
      return static_cast<const float*>(buf)[i];
    case DataType::kFloat64:
      return static_cast<const double*>(buf)[i];
    case DataType::kInt32:
      return static_cast<const int32_t*>(buf)[i];
    case DataType::kInt64:
      return static_cast<const int64_t*>(buf)[i];
    case DataType::kBFloat16:
      return Bf16ToFloat(static_cast<const uint16_t*>(buf)[i]);
    case DataType::kFloat16:
      return HalfToFloat(static_cast<const uint16_t*>(buf)[i]);
  }
  return 0;
}

inline double Expected(int n, size_t i, ReduceOp op, DataType t) {
  double sum = 0, mn = 1e300, mx = -1e300;
  for (int r = 0; r < n; ++r)
    sum += Value(r, i), mn = std::min(mn, Value(r, i)),
                        mx = std::max(mx, Value(r, i));
  bool integer = t == DataType::kInt32 || t == DataType::kInt64;
  switch (op) {
    case ReduceOp::kSum:
      return sum;
    case ReduceOp::kMin:
      return mn;
    case ReduceOp::kMax:
      return mx;
    case ReduceOp::kAvg:
      return integer ? std::floor(sum / n) : sum / n;
  }
  return 0;
}

inline const DataType kTypes[] = {DataType::kFloat32,  DataType::kFloat64,
                                  DataType::kInt32,    DataType::kInt64,
                                  DataType::kBFloat16, DataType::kFloat16};
inline const ReduceOp kOps[] = {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax,
                                ReduceOp::kAvg};

// All-reduce (in place) of `count` elements and reduce-scatter of
// n * `piece`, checked element by element: 0, or 1 after naming the first
// wrong element.
inline int CheckReductions(Communicator* c, size_t count, size_t piece,
                           DataType t, ReduceOp op) {
  const int n = c->size(), r = c->rank();
  const size_t es = DataTypeSize(t);
  std::vector<char> buf(count * es + 1);
  for (size_t i = 0; i < count; ++i) Store(t, buf.data(), i, Value(r, i));
  Status s = c->AllReduce(buf.data(), buf.data(), count, t, op);
  CHILD_CHECK(s.ok(), "%s", s.ToString().c_str());
  for (size_t i = 0; i < count; ++i) {
    double want = Expected(n, i, op, t), got = Load(t, buf.data(), i);
    CHILD_CHECK(std::fabs(got - want) <= std::fabs(want) / 64,
                "allreduce count %zu type %d op %d [%zu]: %g != %g", count,
                static_cast<int>(t), static_cast<int>(op), i, got, want);
  }
  // ReduceScatter: every rank's slice of n * piece inputs.
  std::vector<char> in(n * piece * es + 1), out(piece * es + 1);
  for (size_t i = 0; i < n * piece; ++i) Store(t, in.data(), i, Value(r, i));
  s = c->ReduceScatter(in.data(), out.data(), piece, t, op);
  CHILD_CHECK(s.ok(), "%s", s.ToString().c_str());
  for (size_t i = 0; i < piece; ++i) {
    double want = Expected(n, r * piece + i, op, t),
           got = Load(t, out.data(), i);
    CHILD_CHECK(std::fabs(got - want) <= std::fabs(want) / 64,
                "reducescatter count %zu type %d op %d [%zu]: %g != %g", piece,
                static_cast<int>(t), static_cast<int>(op), i, got, want);
  }
  return 0;
}

inline int AllCollectives(const Options& o) {
  std::unique_ptr<Communicator> c;
  Status s = Communicator::Create(o, &c);
  CHILD_CHECK(s.ok(), "%s", s.ToString().c_str());
  const int n = c->size(), r = c->rank();
  // 33: 2-5 tagged lines (reduce-scatter slices end inside a line).
  for (size_t count :
       {size_t{0}, size_t{1}, size_t{7}, size_t{33}, size_t{1000}}) {
    for (DataType t : kTypes) {
      size_t es = DataTypeSize(t);
      for (ReduceOp op : kOps) {
        if (int e = CheckReductions(c.get(), count, count, t, op)) return e;
      }
      std::vector<char> mine(count * es + 1), all(n * count * es + 1);
      for (size_t i = 0; i < count; ++i) Store(t, mine.data(), i, Value(r, i));
      CHILD_CHECK(c->AllGather(mine.data(), all.data(), count, t).ok(),
                  "allgather");
      for (int q = 0; q < n; ++q) {
        for (size_t i = 0; i < count; ++i)
          CHILD_CHECK(Load(t, all.data(), q * count + i) ==
                          Load(t, mine.data(), i) / (r + 1) * (q + 1),
                      "allgather %d %zu", q, i);
      }
      std::vector<char> b(count * es + 1);
      int root = n - 1;
      for (size_t i = 0; i < count; ++i)
        Store(t, b.data(), i, r == root ? Value(r, i) : -1);
      CHILD_CHECK(c->Broadcast(b.data(), count, t, root).ok(), "broadcast");
      for (size_t i = 0; i < count; ++i)
        CHILD_CHECK(Load(t, b.data(), i) == Value(root, i), "broadcast [%zu]",
                    i);
    }
  }
  CHILD_CHECK(c->Barrier().ok(), "barrier");
  return 0;
}

}  // namespace testing_collectives
}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_TESTING_TESTING_COLLECTIVES_H_
