// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The NCCL backend for device-memory buffers: the unique id travels through
// dist-train's authenticated rendezvous, init is non-blocking, every wait
// polls ncclCommGetAsyncError against a deadline and aborts the
// communicator on errors. Without NCCL at build time (or without a GPU)
// it reports itself unavailable and host memory keeps the CPU backend.

#ifndef DIST_TRAIN_LIB_RUNTIME_NCCL_BACKEND_H_
#define DIST_TRAIN_LIB_RUNTIME_NCCL_BACKEND_H_

#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "dist_train/runtime.h"
#include "runtime/transport.h"

namespace dist_train {

using NcclId = std::array<char, 128>;

// Device memory's transport.
class NcclBackend : public Transport {
 public:
  // Built with NCCL.
  static bool Compiled();
  // Device (or managed) memory, as CUDA sees it.
  static bool IsDevicePointer(const void* ptr);
  // Number of CUDA devices, 0 without any (or without CUDA).
  static int DeviceCount();
  static Status NewId(NcclId* id);

  // `check_peers` is polled while waiting (the control plane's failure
  // notices); a non-OK status aborts the NCCL communicator.
  static Status Create(int rank, int size, int device, const NcclId& id,
                       double timeout_seconds,
                       std::function<Status()> check_peers,
                       std::unique_ptr<NcclBackend>* out);
  ~NcclBackend() override;

  std::string Describe() const override;
  Status AllReduce(const void* send, void* recv, size_t count, DataType type,
                   ReduceOp op) override;
  Status Broadcast(void* buf, size_t count, DataType type, int root) override;
  Status AllGather(const void* send, void* recv, size_t count,
                   DataType type) override;
  Status ReduceScatter(const void* send, void* recv, size_t count,
                       DataType type, ReduceOp op) override;

  struct State;

 private:
  explicit NcclBackend(std::unique_ptr<State> s);
  std::unique_ptr<State> state_;
};

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_RUNTIME_NCCL_BACKEND_H_
