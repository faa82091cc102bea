// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The communicator: Create (the bootstrap, then the host transport), the
// failure plane (abort notices and goodbyes on the control connections to
// rank 0), and the public collectives, each handed to its transport by
// Dispatch.

#include <poll.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "dist_train/runtime.h"
#include "runtime/communicator_impl.h"
#include "runtime/node_exclusion.h"
#include "runtime/node_loss.h"
#include "runtime/progress.h"
#include "runtime/ring_collectives.h"
#include "runtime/runtime_env.h"
#include "runtime/watchdog.h"

namespace dist_train {
namespace {

// One whole line to the job's stderr.
void SayToStderr(const std::string& line) {
  fprintf(stderr, "%s\n", line.c_str());
}

// A requeued run's rank 0 says how it got here, once per process (its
// watchdog may have said it already).
void SayHistoryOnce(const EnvMap& env) {
  if (ClaimRequeueHistory())
    SayRequeueHistory(env, SlurmRequeueOps(), kNodeLossPrefix, SayToStderr);
}

}  // namespace

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
  if (!status.ok() && ctrl[index].lost()) {
    const bool first = failure.empty();
    lost_ranks.push_back(rank == 0 ? static_cast<int>(index) : 0);
    Status failed = Fail(status);
    if (first && rank == 0 && requeue_lost_nodes) AfterLoss();
    return failed;
  }
  return Fail(Status::Unavailable(
      ctrl[index].peer() +
      " failed: " + (status.ok() ? "unexpected message" : status.message())));
}

void CommunicatorImpl::AfterLoss() {
  // Ranks of other machines lost at the same moment fail within a probe
  // round or two; the others end (closing their connections) after our
  // abort notice, or stay quiet.
  for (Deadline until = DeadlineIn(2 * kLossProbeSeconds + 1);
       Clock::now() < until;) {
    std::vector<pollfd> fds;
    WatchCtrl(&fds);
    if (poll(fds.data(), fds.size(), 100) <= 0) continue;
    for (size_t i = 0; i < ctrl.size(); ++i) {
      if (!fds[i].revents || !ctrl[i].valid()) continue;
      FrameType type;
      std::string msg;
      Status s = ctrl[i].RecvFrame(&type, &msg, DeadlineIn(0.1));
      if (!s.ok() && ctrl[i].lost()) lost_ranks.push_back(static_cast<int>(i));
      if (!s.ok() || type == FrameType::kBye) ctrl[i].Close();
    }
  }
  const SayLine say = SayToStderr;
  const EnvMap env = ProcessEnv();
  StepLayout layout;
  Status known = ReadStepLayout(env, &layout);
  if (known.ok()) {
    std::vector<std::string> address_hosts;
    for (const std::string& a : addr) address_hosts.push_back(HostOf(a));
    known = CheckLayoutAgainstAddresses(layout, address_hosts);
  }
  if (!known.ok()) {
    say(std::string(kNodeLossPrefix) +
        "not requeued: the lost ranks' nodes are not known: " +
        known.message());
    return;
  }
  say(kNodeLossPrefix + LostNodesText(layout, lost_ranks) +
      " stopped answering rank 0 (no TCP reply for " +
      std::to_string(kLossSeconds) + " s)");
  NodeLossVerdict verdict = JudgeNodeLoss(layout, lost_ranks);
  if (!verdict.requeue) {
    say(kNodeLossPrefix + ("not requeued: " + verdict.why_not));
    return;
  }
  RequeueAndSay(env, SlurmRequeueOps(), verdict.hosts, kNodeLossPrefix, say);
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

namespace {

// The one place a collective's transport is chosen: device memory goes to
// the NCCL communicator (made at the first use), host memory to the host
// transport Create picked.
template <typename Fn, typename... Args>
Status Dispatch(CommunicatorImpl* comm, const void* buf, Fn fn, Args... args) {
  Transport* transport = comm->host.get();
  if (NcclBackend::IsDevicePointer(buf))
    DT_RETURN_IF_ERROR(comm->Nccl(&transport));
  return (transport->*fn)(args...);
}

}  // namespace

Communicator::Communicator(std::unique_ptr<CommunicatorImpl> impl)
    : impl_(std::move(impl)) {}
Communicator::~Communicator() = default;
int Communicator::rank() const { return impl_->rank; }
int Communicator::size() const { return impl_->size; }

std::string Communicator::Describe() const { return impl_->host->Describe(); }

Status Communicator::Create(const Options& options,
                            std::unique_ptr<Communicator>* out) {
  auto comm = std::make_unique<CommunicatorImpl>();
  const EnvMap env = ProcessEnv();
  DT_RETURN_IF_ERROR(ResolveOptions(options, env, &comm->opt));
  DT_RETURN_IF_ERROR(ReadNodeLossPolicy(env, &comm->requeue_lost_nodes));
  if (comm->requeue_lost_nodes && comm->opt.rank == 0) SayHistoryOnce(env);
  comm->rank = comm->opt.rank;
  comm->size = comm->opt.world_size;
  comm->cred = {comm->opt.job_identity, comm->opt.job_token};
  Deadline deadline = DeadlineIn(comm->opt.timeout_seconds);
  comm->ring =
      std::make_unique<TcpRingLink>(comm.get(), &comm->next, &comm->prev,
                                    comm->size, comm->rank, &comm->scratch);
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
  comm->host = MakeHostTransport(comm.get());
  DT_RETURN_IF_ERROR(StartWatchdogFromEnv(env, comm->rank, comm->size));
  out->reset(new Communicator(std::move(comm)));
  return Status::OK();
}

Status Communicator::AllReduce(const void* send, void* recv, size_t count,
                               DataType type, ReduceOp op) {
  CollectiveNote note(CallKind::kAllReduce);
  return Dispatch(impl_.get(), recv, &Transport::AllReduce, send, recv, count,
                  type, op);
}

Status Communicator::ReduceScatter(const void* send, void* recv, size_t count,
                                   DataType type, ReduceOp op) {
  CollectiveNote note(CallKind::kReduceScatter);
  return Dispatch(impl_.get(), recv, &Transport::ReduceScatter, send, recv,
                  count, type, op);
}

Status Communicator::AllGather(const void* send, void* recv, size_t count,
                               DataType type) {
  CollectiveNote note(CallKind::kAllGather);
  return Dispatch(impl_.get(), recv, &Transport::AllGather, send, recv, count,
                  type);
}

Status Communicator::Broadcast(void* buf, size_t count, DataType type,
                               int root) {
  if (root < 0 || root >= impl_->size) {
    return Status::InvalidArgument("broadcast root " + std::to_string(root) +
                                   " is not a rank of " +
                                   std::to_string(impl_->size));
  }
  CollectiveNote note(CallKind::kBroadcast);
  return Dispatch(impl_.get(), buf, &Transport::Broadcast, buf, count, type,
                  root);
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

void Heartbeat() { NoteHeartbeat(); }

void ReportComputeTime(uint64_t nanoseconds) { NoteComputeTime(nanoseconds); }

}  // namespace dist_train
