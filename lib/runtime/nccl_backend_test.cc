// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/nccl_backend.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include <vector>

#ifdef DT_HAVE_NCCL
#include <cuda_runtime.h>
#endif

namespace dist_train {
namespace {

TEST(NcclBackendTest, HostMemoryStaysOnTheCpuBackend) {
  std::vector<float> host(16);
  EXPECT_FALSE(NcclBackend::IsDevicePointer(host.data()));
  EXPECT_FALSE(NcclBackend::IsDevicePointer(nullptr));
}

// NCCL is loaded when first needed, not at program start (a CPU-only
// program never maps it). In a child: other tests may have loaded it.
TEST(NcclBackendTest, NcclIsLoadedOnlyWhenFirstNeeded) {
  if (!NcclBackend::Compiled())
    GTEST_SKIP() << "built without NCCL (configure found none)";
  pid_t pid = fork();
  if (pid == 0) {
    if (dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD) != nullptr) _exit(2);
    NcclId id;
    Status s = NcclBackend::NewId(&id);  // no GPU needed for an id
    if (!s.ok()) {
      fprintf(stderr, "%s\n", s.ToString().c_str());
      _exit(3);
    }
    _exit(dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD) != nullptr ? 0 : 4);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "2: mapped at start, 3: not loadable, 4: not loaded by NewId; "
      << status;
}

TEST(NcclBackendTest, DeviceAllReduceThroughNcclOnOneGpu) {
  if (!NcclBackend::Compiled())
    GTEST_SKIP() << "built without NCCL (configure found none)";
  if (NcclBackend::DeviceCount() == 0)
    GTEST_SKIP() << "no CUDA device on this machine";
#ifdef DT_HAVE_NCCL
  Options o;
  o.rank = 0;
  o.world_size = 1;
  o.master_addr = "127.0.0.1";
  o.master_port = 1;  // unused with one rank
  o.job_identity = "nccl-test";
  o.timeout_seconds = 60;
  std::unique_ptr<Communicator> comm;
  ASSERT_TRUE(Communicator::Create(o, &comm).ok());
  std::vector<float> host = {1, 2, 3, 4};
  float* dev = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, host.size() * sizeof(float)), cudaSuccess);
  cudaMemcpy(dev, host.data(), host.size() * sizeof(float),
             cudaMemcpyHostToDevice);
  EXPECT_TRUE(NcclBackend::IsDevicePointer(dev));
  Status s = comm->AllReduce(dev, dev, host.size(), DataType::kFloat32,
                             ReduceOp::kSum);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::vector<float> back(host.size());
  cudaMemcpy(back.data(), dev, back.size() * sizeof(float),
             cudaMemcpyDeviceToHost);
  EXPECT_EQ(back, host);
  cudaFree(dev);
#endif
}

}  // namespace
}  // namespace dist_train
