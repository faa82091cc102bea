// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The CPU communicator: Create, the failure plane (abort notices and
// goodbyes on the control connections to rank 0), and the public
// collectives, each handed to its transport by Dispatch.

#include <poll.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "dist_train/runtime.h"
#include "runtime/communicator_impl.h"
#include "runtime/reduce.h"
#include "runtime/runtime_env.h"

namespace dist_train {

CommunicatorImpl::~CommunicatorImpl() {
  // Say goodbye so peers do not take this disconnect for a failure.
  for (Conn& conn : ctrl) {
    if (conn.valid())
      conn.SendFrame(FrameType::kBye, "", DeadlineIn(0.2)).IgnoreError();
  }
  if (data_fd >= 0) close(data_fd);
}

void CommunicatorImpl::Log(const std::string& msg) const {
  fprintf(stderr, "dist-train: rank %d: %s\n", rank, msg.c_str());
}

Status CommunicatorImpl::Fail(const Status& status) {
  if (failure.empty()) {
    failure = status.message();
    Log(failure);
    for (size_t i = 0; i < ctrl.size(); ++i) {
      // Best effort: a peer that is gone cannot be told.
      if (ctrl[i].valid() && !(rank == 0 && left[i]))
        ctrl[i]
            .SendFrame(FrameType::kAbort, failure, DeadlineIn(0.5))
            .IgnoreError();
    }
  }
  return Status::Unavailable(failure);
}

// A control socket is readable: an abort notice, a goodbye, or a death.
Status CommunicatorImpl::CheckCtrl(size_t index) {
  FrameType type;
  std::string msg;
  Status status = ctrl[index].RecvFrame(&type, &msg, DeadlineIn(1));
  if (status.ok() && type == FrameType::kBye) {
    if (rank == 0) left[index] = true;
    ctrl[index].Close();
    return Status::OK();
  }
  if (status.ok() && type == FrameType::kAbort)
    return Fail(Status::Unavailable(msg));
  return Fail(Status::Unavailable(
      ctrl[index].peer() +
      " failed: " + (status.ok() ? "unexpected message" : status.message())));
}

void CommunicatorImpl::WatchCtrl(std::vector<pollfd>* fds) const {
  for (const Conn& conn : ctrl)
    fds->push_back({conn.valid() ? conn.fd() : -1, POLLIN, 0});
}

Status CommunicatorImpl::HandleCtrl(const std::vector<pollfd>& fds,
                                    size_t first) {
  for (size_t i = 0; i < ctrl.size(); ++i)
    if (fds[first + i].revents) DT_RETURN_IF_ERROR(CheckCtrl(i));
  return Status::OK();
}

// Handles whatever the control connections have ready, without waiting.
Status CommunicatorImpl::PollCtrl() {
  if (!failure.empty()) return Status::Unavailable(failure);
  std::vector<pollfd> fds;
  WatchCtrl(&fds);
  if (poll(fds.data(), fds.size(), 0) <= 0) return Status::OK();
  return HandleCtrl(fds, 0);
}

// Host memory: shared memory where it is mapped (alone or under the
// leaders' ring), else the tcp ring.
Transport CommunicatorImpl::HostTransport() const {
  if (size == 1) return Transport::kSingleRank;
  if (hierarchical) return Transport::kHierarchical;
  if (shm.mapped()) return Transport::kSharedMemory;
  return Transport::kTcpRing;
}

namespace {

// The one place a collective's transport is chosen: device memory goes to
// `nccl_fn` of the NCCL communicator (made at the first use), host memory
// to `host_fn` with the transport HostTransport picked.
template <typename NcclFn, typename HostFn, typename... Args>
Status Dispatch(CommunicatorImpl* comm, const void* buf, NcclFn nccl_fn,
                HostFn host_fn, Args... args) {
  if (NcclBackend::IsDevicePointer(buf)) {
    return comm->WithNccl(
        [&](NcclBackend* nccl) { return (nccl->*nccl_fn)(args...); });
  }
  return host_fn(comm, comm->HostTransport(), args...);
}

Status HostAllReduce(CommunicatorImpl* comm, Transport transport,
                     const void* send, void* recv, size_t count, DataType type,
                     ReduceOp op) {
  if (send != recv && count > 0)
    std::memmove(recv, send, count * DataTypeSize(type));
  char* buf = static_cast<char*>(recv);
  if (transport == Transport::kHierarchical) {
    DT_RETURN_IF_ERROR(HierarchicalAllReduce(comm, buf, count, type, op));
  } else if (transport == Transport::kSharedMemory) {
    DT_RETURN_IF_ERROR(comm->ShmReduce(buf, count, type, op, buf, 0, count));
  } else if (transport == Transport::kTcpRing) {
    DT_RETURN_IF_ERROR(
        RingAllReduce(comm, comm->AllRanks(), buf, count, type, op));
  }
  if (op == ReduceOp::kAvg) DivideBy(recv, count, type, comm->size);
  return Status::OK();
}

// `recv` gets this rank's slice of the reduced `send` (size * count).
Status HostReduceScatter(CommunicatorImpl* comm, Transport transport,
                         const void* send, void* recv, size_t count,
                         DataType type, ReduceOp op) {
  const size_t elem_size = DataTypeSize(type), total = count * comm->size;
  const size_t mine_lo = count * comm->rank;
  if (transport == Transport::kSharedMemory) {
    DT_RETURN_IF_ERROR(comm->ShmReduce(static_cast<const char*>(send), total,
                                       type, op, static_cast<char*>(recv),
                                       mine_lo, mine_lo + count));
  } else {
    // The ring reduces in place: work on a copy of `send`.
    std::vector<char> work(static_cast<const char*>(send),
                           static_cast<const char*>(send) + total * elem_size);
    if (transport != Transport::kSingleRank)
      DT_RETURN_IF_ERROR(RingReduceScatter(comm, comm->AllRanks(), work.data(),
                                           total, type, op));
    if (count > 0)
      std::memcpy(recv, work.data() + mine_lo * elem_size, count * elem_size);
  }
  if (op == ReduceOp::kAvg) DivideBy(recv, count, type, comm->size);
  return Status::OK();
}

// Our piece of `recv` from `send`, then every other rank's.
Status HostAllGather(CommunicatorImpl* comm, Transport transport,
                     const void* send, void* recv, size_t count,
                     DataType type) {
  const size_t elem_size = DataTypeSize(type);
  char* buf = static_cast<char*>(recv);
  if (count > 0)
    std::memmove(buf + count * comm->rank * elem_size, send, count * elem_size);
  if (transport == Transport::kSingleRank) return Status::OK();
  if (transport == Transport::kSharedMemory)
    return comm->ShmAllGather(buf, count * elem_size);
  // Hierarchical machines gather on the ring of all ranks too.
  return RingAllGather(comm, comm->AllRanks(), buf, count * comm->size,
                       elem_size);
}

Status HostBroadcast(CommunicatorImpl* comm, Transport transport, void* buf,
                     size_t count, DataType type, int root) {
  char* bytes = static_cast<char*>(buf);
  const size_t len = count * DataTypeSize(type);
  if (transport == Transport::kSharedMemory)
    return comm->ShmBroadcast(bytes, len, root);
  return RingBroadcast(comm, bytes, len, root);  // also for a single rank
}

}  // namespace

Communicator::Communicator(std::unique_ptr<CommunicatorImpl> impl)
    : impl_(std::move(impl)) {}
Communicator::~Communicator() = default;
int Communicator::rank() const { return impl_->rank; }
int Communicator::size() const { return impl_->size; }

std::string Communicator::Describe() const {
  const std::string ranks = "(" + std::to_string(impl_->size) + " ranks)";
  switch (impl_->HostTransport()) {
    case Transport::kHierarchical:
      return "shared memory within " + std::to_string(impl_->leaders.size()) +
             " machines, tcp ring between them " + ranks;
    case Transport::kSharedMemory:
      return "shared memory " + ranks;
    case Transport::kTcpRing:
      return "tcp ring " + ranks;
    default:
      return "single rank";
  }
}

Status Communicator::Create(const Options& options,
                            std::unique_ptr<Communicator>* out) {
  auto comm = std::make_unique<CommunicatorImpl>();
  DT_RETURN_IF_ERROR(ResolveOptions(options, ProcessEnv(), &comm->opt));
  comm->rank = comm->opt.rank;
  comm->size = comm->opt.world_size;
  comm->cred = {comm->opt.job_identity, comm->opt.job_token};
  Deadline deadline = DeadlineIn(comm->opt.timeout_seconds);
  if (comm->size > 1) {
    int data_port = 0;
    std::string job_addr;
    DT_RETURN_IF_ERROR(JobAddress(comm->opt, comm->rank, &job_addr));
    DT_RETURN_IF_ERROR(Listen(0, &comm->data_fd, &data_port, job_addr));
    DT_RETURN_IF_ERROR(Rendezvous(comm.get(), data_port, job_addr, deadline));
    DT_RETURN_IF_ERROR(ConnectRing(comm.get(), (comm->rank + 1) % comm->size,
                                   Mod(comm->rank - 1, comm->size), &comm->next,
                                   &comm->prev, deadline));
    DT_RETURN_IF_ERROR(SetupShm(comm.get()));
    if (comm->hierarchical && comm->local_rank == 0)
      DT_RETURN_IF_ERROR(ConnectLeaderRing(comm.get()));
  }
  out->reset(new Communicator(std::move(comm)));
  return Status::OK();
}

Status Communicator::AllReduce(const void* send, void* recv, size_t count,
                               DataType type, ReduceOp op) {
  return Dispatch(impl_.get(), recv, &NcclBackend::AllReduce, HostAllReduce,
                  send, recv, count, type, op);
}

Status Communicator::ReduceScatter(const void* send, void* recv, size_t count,
                                   DataType type, ReduceOp op) {
  return Dispatch(impl_.get(), recv, &NcclBackend::ReduceScatter,
                  HostReduceScatter, send, recv, count, type, op);
}

Status Communicator::AllGather(const void* send, void* recv, size_t count,
                               DataType type) {
  return Dispatch(impl_.get(), recv, &NcclBackend::AllGather, HostAllGather,
                  send, recv, count, type);
}

Status Communicator::Broadcast(void* buf, size_t count, DataType type,
                               int root) {
  if (root < 0 || root >= impl_->size) {
    return Status::InvalidArgument("broadcast root " + std::to_string(root) +
                                   " is not a rank of " +
                                   std::to_string(impl_->size));
  }
  return Dispatch(impl_.get(), buf, &NcclBackend::Broadcast, HostBroadcast, buf,
                  count, type, root);
}

Status Communicator::Barrier() {
  int32_t one = 1, total = 0;
  DT_RETURN_IF_ERROR(
      AllReduce(&one, &total, 1, DataType::kInt32, ReduceOp::kSum));
  if (total != impl_->size)
    return Status::Internal("barrier counted " + std::to_string(total) +
                            " ranks");
  return Status::OK();
}

}  // namespace dist_train
