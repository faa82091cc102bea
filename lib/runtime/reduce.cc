// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/reduce.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace dist_train {
namespace {

template <typename T>
T Apply(T a, T b, ReduceOp op) {
  switch (op) {
    case ReduceOp::kMin:
      return std::min(a, b);
    case ReduceOp::kMax:
      return std::max(a, b);
    default:
      return a + b;
  }
}

// One loop per operation (no switch inside), on unaliased pointers, so the
// compiler vectorizes it (this file is built with -O3, see Makefile).
template <typename T, typename F>
void Loop(T* __restrict a, const T* __restrict b, size_t count, F f) {
  for (size_t i = 0; i < count; ++i) a[i] = f(a[i], b[i]);
}

template <typename T, typename F>
void Loop(T* __restrict out, const T* __restrict a, const T* __restrict b,
          size_t count, F f) {
  for (size_t i = 0; i < count; ++i) out[i] = f(a[i], b[i]);
}

// out = op(a, b), or out = op(out, b) when `a` is null.
template <typename T, typename F>
void Either(void* out, const void* a, const void* b, size_t count, F f) {
  T* o = static_cast<T*>(out);
  const T* y = static_cast<const T*>(b);
  if (a == nullptr) return Loop(o, y, count, f);
  Loop(o, static_cast<const T*>(a), y, count, f);
}

template <typename T>
void Typed(void* out, const void* a, const void* b, size_t count, ReduceOp op) {
  switch (op) {
    case ReduceOp::kMin:
      return Either<T>(out, a, b, count,
                       [](T x, T y) { return y < x ? y : x; });
    case ReduceOp::kMax:
      return Either<T>(out, a, b, count,
                       [](T x, T y) { return x < y ? y : x; });
    default:
      return Either<T>(out, a, b, count, [](T x, T y) { return x + y; });
  }
}

template <float (*ToF)(uint16_t), uint16_t (*FromF)(float)>
void Packed(void* out, const void* a, const void* b, size_t count,
            ReduceOp op) {
  uint16_t* o = static_cast<uint16_t*>(out);
  const uint16_t* x = static_cast<const uint16_t*>(a ? a : out);
  const uint16_t* y = static_cast<const uint16_t*>(b);
  for (size_t i = 0; i < count; ++i)
    o[i] = FromF(Apply(ToF(x[i]), ToF(y[i]), op));
}

void Reduce(void* out, const void* a, const void* b, size_t count,
            DataType type, ReduceOp op) {
  switch (type) {
    case DataType::kFloat32:
      return Typed<float>(out, a, b, count, op);
    case DataType::kFloat64:
      return Typed<double>(out, a, b, count, op);
    case DataType::kInt32:
      return Typed<int32_t>(out, a, b, count, op);
    case DataType::kInt64:
      return Typed<int64_t>(out, a, b, count, op);
    case DataType::kBFloat16:
      return Packed<Bf16ToFloat, FloatToBf16>(out, a, b, count, op);
    case DataType::kFloat16:
      return Packed<HalfToFloat, FloatToHalf>(out, a, b, count, op);
  }
}

template <typename T>
void DivideTyped(void* buf, size_t count, int n) {
  T* p = static_cast<T*>(buf);
  for (size_t i = 0; i < count; ++i)
    p[i] = static_cast<T>(p[i] / static_cast<T>(n));
}

template <float (*ToF)(uint16_t), uint16_t (*FromF)(float)>
void DividePacked(void* buf, size_t count, int n) {
  uint16_t* p = static_cast<uint16_t*>(buf);
  for (size_t i = 0; i < count; ++i)
    p[i] = FromF(ToF(p[i]) / static_cast<float>(n));
}

}  // namespace

size_t DataTypeSize(DataType type) {
  switch (type) {
    case DataType::kFloat32:
    case DataType::kInt32:
      return 4;
    case DataType::kFloat64:
    case DataType::kInt64:
      return 8;
    case DataType::kBFloat16:
    case DataType::kFloat16:
      return 2;
  }
  return 1;
}

float Bf16ToFloat(uint16_t v) {
  uint32_t bits = static_cast<uint32_t>(v) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (std::isnan(f)) return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);  // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}

float HalfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal
      float f = std::ldexp(static_cast<float>(mant), -24);
      return sign ? -f : f;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToHalf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  float a = std::fabs(f);
  if (std::isnan(f)) return sign | 0x7e00;
  if (a >= 65520.0f) return sign | 0x7c00;  // overflow to infinity
  if (a < 6.103515625e-05f) {               // subnormal: multiples of 2^-24
    return sign | static_cast<uint16_t>(std::nearbyint(a * 16777216.0f));
  }
  int e;
  float m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  uint32_t mant = static_cast<uint32_t>(std::nearbyint((m * 2 - 1) * 1024));
  uint32_t exp = static_cast<uint32_t>(e - 1 + 15);
  if (mant == 1024) mant = 0, ++exp;
  return sign | static_cast<uint16_t>((exp << 10) | mant);
}

void ReduceInto(void* acc, const void* in, size_t count, DataType type,
                ReduceOp op) {
  Reduce(acc, nullptr, in, count, type, op);
}

void ReduceTo(void* out, const void* a, const void* b, size_t count,
              DataType type, ReduceOp op) {
  Reduce(out, a, b, count, type, op);
}

void DivideBy(void* buf, size_t count, DataType type, int n) {
  switch (type) {
    case DataType::kFloat32:
      return DivideTyped<float>(buf, count, n);
    case DataType::kFloat64:
      return DivideTyped<double>(buf, count, n);
    case DataType::kInt32:
      return DivideTyped<int32_t>(buf, count, n);
    case DataType::kInt64:
      return DivideTyped<int64_t>(buf, count, n);
    case DataType::kBFloat16:
      return DividePacked<Bf16ToFloat, FloatToBf16>(buf, count, n);
    case DataType::kFloat16:
      return DividePacked<HalfToFloat, FloatToHalf>(buf, count, n);
  }
}

}  // namespace dist_train
