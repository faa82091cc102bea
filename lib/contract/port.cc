// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "contract/port.h"

#include <string>

#include "base/parse.h"

namespace dist_train {
namespace {

uint32_t StepSlot(uint32_t step_id) {
  switch (step_id) {
    case kBatchStepId:
      return kSlotsPerJob - 1;
    case kInteractiveStepId:
      return kSlotsPerJob - 2;
    case kExternStepId:
      return kSlotsPerJob - 3;
    default:
      return step_id % (kSlotsPerJob - 3);
  }
}

}  // namespace

uint16_t DerivePort(uint32_t job_id, uint32_t step_id, uint16_t min,
                    uint16_t max) {
  uint64_t size = static_cast<uint64_t>(max) - min + 1;
  uint64_t index =
      static_cast<uint64_t>(job_id) * kSlotsPerJob + StepSlot(step_id);
  return static_cast<uint16_t>(min + index % size);
}

Status FirstReservedPort(std::string_view resv_ports, uint16_t* port) {
  size_t end = resv_ports.find_first_of("-,");
  uint64_t value = 0;
  if (!ParseUint(resv_ports.substr(0, end), 1, 65535, &value)) {
    return Status::InvalidArgument("SLURM_STEP_RESV_PORTS='" +
                                   std::string(resv_ports) +
                                   "' does not start with a port number");
  }
  *port = static_cast<uint16_t>(value);
  return Status::OK();
}

}  // namespace dist_train
