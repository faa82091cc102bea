// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "sweep.h"

#include <cmath>
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
  return Status::InvalidArgument("sweep has " + std::to_string(n) +
                                 " points; the limit is " +
                                 std::to_string(max));
}

Status ExpandProduct(const std::vector<SweepDimension>& dims, size_t max,
                     std::vector<SweepPoint>* out) {
  size_t total = 1;
  for (const SweepDimension& d : dims) {
    if (d.values.empty())
      return Status::InvalidArgument("sweep dimension '" + d.names[0] +
                                     "' is empty");
    if (total > max / d.values.size() + 1)
      return TooBig(total * d.values.size(), max);
    total *= d.values.size();
  }
  if (total > max) return TooBig(total, max);
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
    if (out->size() > 1000000) return TooBig(out->size(), 1000000);
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
