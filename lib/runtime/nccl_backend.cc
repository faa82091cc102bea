// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/nccl_backend.h"

#ifdef DT_HAVE_NCCL
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>
#endif

#include <chrono>
#include <cstring>
#include <initializer_list>
#include <string>
#include <thread>

namespace dist_train {

#ifdef DT_HAVE_NCCL

// The CUDA runtime and NCCL are loaded when the first device buffer needs
// them, not linked: CPU-only programs start fast (hundreds of ranks on one
// machine) and run on nodes without them.
#define DT_CUDA_FUNCTIONS(X)   \
  X(cudaSetDevice)             \
  X(cudaGetLastError)          \
  X(cudaStreamQuery)           \
  X(cudaStreamCreateWithFlags) \
  X(cudaStreamDestroy)         \
  X(cudaGetErrorString)        \
  X(cudaGetDeviceCount)
#define DT_NCCL_FUNCTIONS(X) \
  X(ncclCommGetAsyncError)   \
  X(ncclCommAbort)           \
  X(ncclGetErrorString)      \
  X(ncclGetUniqueId)         \
  X(ncclCommInitRankConfig)  \
  X(ncclCommDestroy)         \
  X(ncclAllReduce)           \
  X(ncclBroadcast)           \
  X(ncclAllGather)           \
  X(ncclReduceScatter)

struct GpuApi {
#define DT_POINTER(name) decltype(&::name) name = nullptr;
  DT_CUDA_FUNCTIONS(DT_POINTER)
  DT_NCCL_FUNCTIONS(DT_POINTER)
#undef DT_POINTER
  std::string error;  // why it could not be loaded; empty when loaded
};

namespace {

void* OpenFirst(std::initializer_list<const char*> names, std::string* tried) {
  for (const char* n : names) {
    if (void* h = dlopen(n, RTLD_NOW | RTLD_LOCAL)) return h;
    *tried += std::string(tried->empty() ? "" : ", ") + n;
  }
  return nullptr;
}

GpuApi LoadGpuApi() {
  GpuApi api;
  std::string tried;
  // The major version the headers were built against first: another one
  // may already be in the process (e.g. PyTorch's).
  const std::string built =
      "libcudart.so." + std::to_string(CUDART_VERSION / 1000);
  void* cuda = OpenFirst({built.c_str(), "libcudart.so"}, &tried);
  void* nccl = OpenFirst({"libnccl.so.2", "libnccl.so"}, &tried);
  if (cuda == nullptr || nccl == nullptr) {
    api.error = "cannot load the CUDA runtime and NCCL (tried " + tried + ")";
    return api;
  }
#define DT_LOAD(lib, name)                                            \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(lib, #name)); \
  if (api.name == nullptr && api.error.empty())                       \
    api.error = std::string("no ") + #name + " in the loaded libraries";
#define DT_LOAD_CUDA(name) DT_LOAD(cuda, name)
#define DT_LOAD_NCCL(name) DT_LOAD(nccl, name)
  DT_CUDA_FUNCTIONS(DT_LOAD_CUDA)
  DT_NCCL_FUNCTIONS(DT_LOAD_NCCL)
#undef DT_LOAD_NCCL
#undef DT_LOAD_CUDA
#undef DT_LOAD
  return api;
}

// Loaded once, at first use; check Gpu().error before the first call.
const GpuApi& Gpu() {
  static const GpuApi api = LoadGpuApi();
  return api;
}

}  // namespace

struct NcclBackend::State {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  double timeout = 300;
  std::function<Status()> check_peers;
  bool aborted = false;
};

namespace {

ncclDataType_t NcclType(DataType t) {
  switch (t) {
    case DataType::kFloat32:
      return ncclFloat32;
    case DataType::kFloat64:
      return ncclFloat64;
    case DataType::kInt32:
      return ncclInt32;
    case DataType::kInt64:
      return ncclInt64;
    case DataType::kBFloat16:
      return ncclBfloat16;
    case DataType::kFloat16:
      return ncclFloat16;
  }
  return ncclFloat32;
}

ncclRedOp_t NcclOp(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return ncclSum;
    case ReduceOp::kMin:
      return ncclMin;
    case ReduceOp::kMax:
      return ncclMax;
    case ReduceOp::kAvg:
      return ncclAvg;
  }
  return ncclSum;
}

Status NcclError(const char* what, ncclResult_t r) {
  return Status::Unavailable(std::string("NCCL ") + what + ": " +
                             Gpu().ncclGetErrorString(r));
}

// Waits until `done()` or an error: NCCL's async error, a peer failure
// from the control plane, or the deadline. Aborts the communicator then.
Status Wait(NcclBackend::State* s, const char* what,
            const std::function<bool()>& done) {
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double>(s->timeout);
  for (;;) {
    if (done()) return Status::OK();
    ncclResult_t async = ncclSuccess;
    Gpu().ncclCommGetAsyncError(s->comm, &async);
    Status st = async == ncclSuccess || async == ncclInProgress
                    ? Status::OK()
                    : NcclError(what, async);
    if (st.ok() && s->check_peers) st = s->check_peers();
    if (st.ok() && std::chrono::steady_clock::now() > deadline) {
      st = Status::Timeout(std::string("NCCL ") + what +
                           ": no progress within the timeout");
    }
    if (!st.ok()) {
      Gpu().ncclCommAbort(s->comm);
      s->comm = nullptr;
      s->aborted = true;
      return st;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

Status Finish(NcclBackend::State* s, const char* what, ncclResult_t enqueued) {
  if (s->aborted)
    return Status::Unavailable("the NCCL communicator was aborted");
  if (enqueued != ncclSuccess && enqueued != ncclInProgress)
    return NcclError(what, enqueued);
  return Wait(s, what, [s] {
    return Gpu().cudaStreamQuery(s->stream) != cudaErrorNotReady;
  });
}

}  // namespace

bool NcclBackend::Compiled() { return true; }

// Asks the CUDA driver only if the process already loaded it (a program
// holding device memory has): host-only programs never initialise CUDA, and
// no process creates a context on GPU 0 just to look at a pointer.
bool NcclBackend::IsDevicePointer(const void* ptr) {
  using GetAttribute = int (*)(void*, int, unsigned long long);
  static GetAttribute get = [] {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    return lib ? reinterpret_cast<GetAttribute>(
                     dlsym(lib, "cuPointerGetAttribute"))
               : nullptr;
  }();
  if (ptr == nullptr || get == nullptr) return false;
  unsigned int type = 0;
  constexpr int kMemoryType = 2;    // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
  constexpr unsigned kDevice = 2;   // CU_MEMORYTYPE_DEVICE
  constexpr unsigned kUnified = 4;  // CU_MEMORYTYPE_UNIFIED
  if (get(&type, kMemoryType, reinterpret_cast<unsigned long long>(ptr)) != 0)
    return false;
  return type == kDevice || type == kUnified;
}

int NcclBackend::DeviceCount() {
  if (!Gpu().error.empty()) return 0;
  int n = 0;
  if (Gpu().cudaGetDeviceCount(&n) != cudaSuccess) {
    Gpu().cudaGetLastError();
    return 0;
  }
  return n;
}

Status NcclBackend::NewId(NcclId* id) {
  if (!Gpu().error.empty()) return Status::Unavailable(Gpu().error);
  ncclUniqueId u;
  ncclResult_t r = Gpu().ncclGetUniqueId(&u);
  if (r != ncclSuccess) return NcclError("get unique id", r);
  static_assert(sizeof(u) == sizeof(NcclId), "NCCL unique id size");
  std::memcpy(id->data(), &u, sizeof(u));
  return Status::OK();
}

Status NcclBackend::Create(int rank, int size, int device, const NcclId& id,
                           double timeout, std::function<Status()> check_peers,
                           std::unique_ptr<NcclBackend>* out) {
  if (!Gpu().error.empty()) return Status::Unavailable(Gpu().error);
  auto s = std::make_unique<State>();
  s->timeout = timeout;
  s->check_peers = std::move(check_peers);
  if (Gpu().cudaSetDevice(device) != cudaSuccess) {
    return Status::Unavailable(
        "cudaSetDevice(" + std::to_string(device) +
        "): " + Gpu().cudaGetErrorString(Gpu().cudaGetLastError()));
  }
  if (Gpu().cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking) !=
      cudaSuccess) {
    return Status::Unavailable("cudaStreamCreate failed");
  }
  ncclUniqueId u;
  std::memcpy(&u, id.data(), sizeof(u));
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclResult_t r =
      Gpu().ncclCommInitRankConfig(&s->comm, size, u, rank, &config);
  if (r != ncclSuccess && r != ncclInProgress) return NcclError("init", r);
  State* raw = s.get();
  DT_RETURN_IF_ERROR(Wait(raw, "init", [raw] {
    ncclResult_t a = ncclInProgress;
    Gpu().ncclCommGetAsyncError(raw->comm, &a);
    return a == ncclSuccess;
  }));
  out->reset(new NcclBackend(std::move(s)));
  return Status::OK();
}

NcclBackend::NcclBackend(std::unique_ptr<State> s) : state_(std::move(s)) {}

NcclBackend::~NcclBackend() {
  if (state_->comm != nullptr) Gpu().ncclCommDestroy(state_->comm);
  if (state_->stream != nullptr) Gpu().cudaStreamDestroy(state_->stream);
}

Status NcclBackend::AllReduce(const void* send, void* recv, size_t count,
                              DataType type, ReduceOp op) {
  return Finish(state_.get(), "all-reduce",
                Gpu().ncclAllReduce(send, recv, count, NcclType(type),
                                    NcclOp(op), state_->comm, state_->stream));
}

Status NcclBackend::Broadcast(void* buf, size_t count, DataType type,
                              int root) {
  return Finish(state_.get(), "broadcast",
                Gpu().ncclBroadcast(buf, buf, count, NcclType(type), root,
                                    state_->comm, state_->stream));
}

Status NcclBackend::AllGather(const void* send, void* recv, size_t count,
                              DataType type) {
  return Finish(state_.get(), "all-gather",
                Gpu().ncclAllGather(send, recv, count, NcclType(type),
                                    state_->comm, state_->stream));
}

Status NcclBackend::ReduceScatter(const void* send, void* recv, size_t count,
                                  DataType type, ReduceOp op) {
  return Finish(
      state_.get(), "reduce-scatter",
      Gpu().ncclReduceScatter(send, recv, count, NcclType(type), NcclOp(op),
                              state_->comm, state_->stream));
}

#else  // !DT_HAVE_NCCL

struct NcclBackend::State {};
bool NcclBackend::Compiled() { return false; }
bool NcclBackend::IsDevicePointer(const void*) { return false; }
int NcclBackend::DeviceCount() { return 0; }
Status NcclBackend::NewId(NcclId*) {
  return Status::Unavailable("dist-train was built without NCCL");
}
Status NcclBackend::Create(int, int, int, const NcclId&, double,
                           std::function<Status()>,
                           std::unique_ptr<NcclBackend>*) {
  return Status::Unavailable("dist-train was built without NCCL");
}
NcclBackend::NcclBackend(std::unique_ptr<State> s) : state_(std::move(s)) {}
NcclBackend::~NcclBackend() = default;
Status NcclBackend::AllReduce(const void*, void*, size_t, DataType, ReduceOp) {
  return NewId(nullptr);
}
Status NcclBackend::Broadcast(void*, size_t, DataType, int) {
  return NewId(nullptr);
}
Status NcclBackend::AllGather(const void*, void*, size_t, DataType) {
  return NewId(nullptr);
}
Status NcclBackend::ReduceScatter(const void*, void*, size_t, DataType,
                                  ReduceOp) {
  return NewId(nullptr);
}

#endif

std::string NcclBackend::Describe() const { return "nccl"; }

}  // namespace dist_train
