// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "jobgen/sweep.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace dist_train {
namespace {

// SplitMix64: a fixed, documented generator, so a seed gives the same
// points on every machine and library version.
struct SplitMix64 {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
};

std::string Sample(const RandomParam& p, SplitMix64* rng) {
  switch (p.kind) {
    case RandomParam::Kind::kUniform:
      return FormatNumber(p.lo + (p.hi - p.lo) * rng->Unit());
    case RandomParam::Kind::kLogUniform:
      return FormatNumber(std::exp(
          std::log(p.lo) + (std::log(p.hi) - std::log(p.lo)) * rng->Unit()));
    case RandomParam::Kind::kInt: {
      // Unsigned arithmetic: the full int64 range must not overflow.
      uint64_t span =
          static_cast<uint64_t>(p.ihi) - static_cast<uint64_t>(p.ilo) + 1;
      uint64_t offset = span == 0 ? rng->Next() : rng->Next() % span;
      return std::to_string(
          static_cast<int64_t>(static_cast<uint64_t>(p.ilo) + offset));
    }
    case RandomParam::Kind::kChoice:
      return p.choices[rng->Next() % p.choices.size()];
  }
  return "";
}

Status TooBig(size_t n, size_t max) {
  return Status::InvalidArgument(
      "sweep has " +
      (n == SIZE_MAX ? "more than " + std::to_string(n - 1)
                     : std::to_string(n)) +
      " points; the limit is " + std::to_string(max));
}

Status TooManyBytes(size_t n) {
  return Status::InvalidArgument("sweep points hold " +
                                 (n == SIZE_MAX
                                      ? "more than " + std::to_string(n - 1)
                                      : std::to_string(n)) +
                                 " bytes of parameter values; the limit is " +
                                 std::to_string(kMaxSweepBytes));
}

// a * b, or SIZE_MAX when that overflows.
size_t SaturatingMul(size_t a, size_t b) {
  return b != 0 && a > SIZE_MAX / b ? SIZE_MAX : a * b;
}

size_t SaturatingAdd(size_t a, size_t b) {
  return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

// Bytes of names and values the product's points hold: each tuple of a
// dimension appears in total / |d| points.
size_t ProductBytes(const std::vector<SweepDimension>& dims, size_t total) {
  size_t bytes = 0;
  for (const SweepDimension& d : dims) {
    size_t dim = 0;
    for (const std::vector<std::string>& tuple : d.values) {
      for (size_t k = 0; k < tuple.size(); ++k)
        dim = SaturatingAdd(dim, d.names[k].size() + tuple[k].size());
    }
    bytes = SaturatingAdd(bytes, SaturatingMul(dim, total / d.values.size()));
  }
  return bytes;
}

Status ExpandProduct(const std::vector<SweepDimension>& dims, size_t max,
                     std::vector<SweepPoint>* out) {
  size_t total = 1;
  for (const SweepDimension& d : dims) {
    if (d.values.empty())
      return Status::InvalidArgument("sweep dimension '" + d.names[0] +
                                     "' is empty");
    total = SaturatingMul(total, d.values.size());
  }
  if (total > max) return TooBig(total, max);
  size_t bytes = ProductBytes(dims, total);
  if (bytes > kMaxSweepBytes) return TooManyBytes(bytes);
  out->reserve(total);
  for (size_t i = 0; i < total; ++i) {
    SweepPoint p;
    size_t rest = i, stride = total;
    for (const SweepDimension& d : dims) {
      stride /= d.values.size();
      const std::vector<std::string>& tuple = d.values[rest / stride];
      rest %= stride;
      for (size_t k = 0; k < d.names.size(); ++k)
        p.emplace_back(d.names[k], tuple[k]);
    }
    out->push_back(std::move(p));
  }
  return Status::OK();
}

// The most bytes `samples` random points can hold: a number is at most 24
// characters, a choice at most its longest value.
size_t RandomBytes(const std::vector<RandomParam>& params, size_t samples) {
  size_t per_point = 0;
  for (const RandomParam& r : params) {
    size_t longest = 24;
    for (const std::string& c : r.choices)
      longest = std::max(longest, c.size());
    per_point = SaturatingAdd(per_point, r.name.size() + longest);
  }
  return SaturatingMul(per_point, samples);
}

}  // namespace

std::string FormatNumber(double v) {
  if (v == std::floor(v) && std::abs(v) < 1e15) {
    return std::to_string(static_cast<int64_t>(v));
  }
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

Status RangeValues(double start, double stop, double step,
                   std::vector<std::string>* out) {
  if (!std::isfinite(start) || !std::isfinite(stop) || !std::isfinite(step)) {
    return Status::InvalidArgument(
        "range start, stop and step must be finite numbers");
  }
  if (step == 0 || (stop - start) / step < 0) {
    return Status::InvalidArgument("range step " + FormatNumber(step) +
                                   " never goes from " + FormatNumber(start) +
                                   " to " + FormatNumber(stop));
  }
  out->clear();
  for (size_t i = 0;; ++i) {
    double v = start + static_cast<double>(i) * step;
    if ((step > 0 && v >= stop - std::abs(step) * 1e-9) ||
        (step < 0 && v <= stop + std::abs(step) * 1e-9)) {
      break;
    }
    // 12 significant digits: 0.1 * 3 is 0.3, not 0.30000000000000004.
    char rounded[64];
    snprintf(rounded, sizeof(rounded), "%.12g", v);
    out->push_back(FormatNumber(std::strtod(rounded, nullptr)));
    if (out->size() > kMaxSweepPoints)
      return TooBig(out->size(), kMaxSweepPoints);
  }
  return Status::OK();
}

Status ExpandSweep(const SweepSpec& spec, size_t max_points,
                   std::vector<SweepPoint>* out) {
  std::vector<SweepPoint> points;
  if (!spec.points.empty()) {
    if (spec.points.size() > max_points)
      return TooBig(spec.points.size(), max_points);
    points = spec.points;
  } else if (!spec.random.empty()) {
    if (spec.samples > max_points) return TooBig(spec.samples, max_points);
    size_t bytes = RandomBytes(spec.random, spec.samples);
    if (bytes > kMaxSweepBytes) return TooManyBytes(bytes);
    SplitMix64 rng{spec.seed};
    for (uint32_t i = 0; i < spec.samples; ++i) {
      SweepPoint p;
      for (const RandomParam& r : spec.random)
        p.emplace_back(r.name, Sample(r, &rng));
      points.push_back(std::move(p));
    }
  } else {
    DT_RETURN_IF_ERROR(ExpandProduct(spec.product, max_points, &points));
  }
  *out = std::move(points);
  return Status::OK();
}

}  // namespace dist_train
