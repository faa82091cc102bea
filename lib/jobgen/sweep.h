// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Hyper-parameter sweeps, expanded into an ordered list of points (pure).
//
// A sweep is either the cartesian product of its dimensions — `grid`
// entries (one list each), `range` entries (start, stop exclusive, step)
// and one `zip` group (lists of equal length advanced together) — or an
// explicit list of `points`, or `random` samples drawn with a seed.
// Product order: dimensions in the order given, the first varies slowest.

#ifndef DIST_TRAIN_LIB_JOBGEN_SWEEP_H_
#define DIST_TRAIN_LIB_JOBGEN_SWEEP_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dist_train/status.h"

namespace dist_train {

// One point: parameter name -> value, in parameter order.
using SweepPoint = std::vector<std::pair<std::string, std::string>>;

struct SweepDimension {
  std::vector<std::string> names;                // one, or a zip group
  std::vector<std::vector<std::string>> values;  // values[i] = i-th tuple
};

struct RandomParam {
  std::string name;
  enum class Kind {
    kUniform,
    kLogUniform,
    kChoice,
    kInt
  } kind = Kind::kUniform;
  double lo = 0, hi = 1;             // uniform/loguniform: [lo, hi)
  int64_t ilo = 0, ihi = 0;          // int: [ilo, ihi]
  std::vector<std::string> choices;  // choice
};

struct SweepSpec {
  std::vector<SweepDimension> product;  // grid / range / zip
  std::vector<SweepPoint> points;       // explicit
  std::vector<RandomParam> random;      // random sampling
  uint32_t samples = 0;
  uint64_t seed = 0;
  bool seed_given = false;  // false: the caller draws one (gen-sbatch)
};

// The most points a sweep may have: 100000 render in a few seconds and a
// few hundred MB (docs/gen-sbatch.md has the figures); with Slurm's default
// MaxArraySize (1001) that is already 100 job arrays.
constexpr size_t kMaxSweepPoints = 100000;

// The most bytes of parameter values all points together may hold (each
// point repeats its values, so a few long values times many points would
// otherwise exhaust memory before any output).
constexpr size_t kMaxSweepBytes = size_t{64} << 20;

// Expands the spec. At most `max_points` points and kMaxSweepBytes of
// values; both are checked before any point is built, and the error names
// the size ("sweep has 1000000 points; the limit is 100000").
Status ExpandSweep(const SweepSpec& spec, size_t max_points,
                   std::vector<SweepPoint>* out);

// A range as values: start, start+step, ... < stop (numbers printed
// without trailing zeros). Error when step is 0 or has the wrong sign, or
// when it has more than kMaxSweepPoints values.
Status RangeValues(double start, double stop, double step,
                   std::vector<std::string>* out);

// Shortest decimal text of `v` that reads back exactly ("0.1", "3", "1e-05").
std::string FormatNumber(double v);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_JOBGEN_SWEEP_H_
