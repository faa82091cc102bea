// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The binding's configuration values (plugstack.conf bind= and cpu_share=,
// the job's bind= and cpu-share= words): a leaf header, so configuration
// code includes these two types and not the planner.

#ifndef DIST_TRAIN_LIB_BINDING_BIND_PARTS_H_
#define DIST_TRAIN_LIB_BINDING_BIND_PARTS_H_

namespace dist_train {

enum class CpuShare { kExclusive, kDomain, kNone };

// Which parts of the binding to apply.
struct BindParts {
  bool cpu = true;
  bool gpu = true;
  bool nic = true;
  CpuShare share = CpuShare::kExclusive;
};

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_BINDING_BIND_PARTS_H_
