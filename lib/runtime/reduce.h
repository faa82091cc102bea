// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Element-wise reductions for the CPU collectives. bf16 and fp16 are
// reduced in float and rounded back to nearest-even.

#ifndef DIST_TRAIN_LIB_RUNTIME_REDUCE_H_
#define DIST_TRAIN_LIB_RUNTIME_REDUCE_H_

#include <cstddef>
#include <cstdint>

#include "dist_train/runtime.h"

namespace dist_train {

// acc[i] = op(acc[i], in[i]) for i < count. kAvg accumulates like kSum.
void ReduceInto(void* acc, const void* in, size_t count, DataType type,
                ReduceOp op);

// out[i] = op(a[i], b[i]) for i < count: the first two steps of a reduction
// in one pass. `out` must not overlap `a` or `b`.
void ReduceTo(void* out, const void* a, const void* b, size_t count,
              DataType type, ReduceOp op);

// out = part(0) op part(1) op ... op part(n - 1), left to right: ranks
// that fold the same parts in this order get the same bits. `part(i)` is
// the i-th contribution (const void*); n >= 2; `out` overlaps none.
template <typename Part>
void ReduceInOrder(void* out, int n, Part part, size_t count, DataType type,
                   ReduceOp op) {
  ReduceTo(out, part(0), part(1), count, type, op);
  for (int i = 2; i < n; ++i) ReduceInto(out, part(i), count, type, op);
}

// Divides each element by n (the final step of kAvg; integer division for
// integer types).
void DivideBy(void* buf, size_t count, DataType type, int n);

float Bf16ToFloat(uint16_t v);
uint16_t FloatToBf16(float f);
float HalfToFloat(uint16_t v);
uint16_t FloatToHalf(float f);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_RUNTIME_REDUCE_H_
