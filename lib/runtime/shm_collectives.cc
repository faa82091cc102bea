// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Collectives among the ranks of one machine through a shared-memory
// segment (runtime/shm_segment.h): its set-up, a futex barrier, and
// reduce, broadcast and all-gather chunk by chunk.
//
// Over 400 lines: set-up, barrier and each collective share the segment's
// private layout; the transport seam (#31) is where it splits.

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>

#include "base/env.h"
#include "runtime/communicator_impl.h"
#include "runtime/reduce.h"
#include "runtime/ring_collectives.h"
#include "runtime/star_agreement.h"

namespace dist_train {

namespace {

int* FutexWord(std::atomic<uint32_t>* word) {
  return reinterpret_cast<int*>(word);
}

// A barrier waiter spins (no syscall) for SpinPolicy::kLongSpin, then
// sleeps on the futex. Waking a sleeper costs tens of microseconds, more
// than a chunk's copy and reduction takes, so it spins through those; a
// longer wait (a rank descheduled, a leader on the network) sleeps, and
// when waits keep outlasting the spin it sleeps at once
// (runtime/spin_policy.h). The spin has
// no PAUSE instruction: under KVM (pause-loop exiting) each one can cost a
// VM exit, measured 1.9 us instead of 0.2 us per 4-byte all-reduce of 2
// ranks. It does not yield either: beside a busy process each sched_yield
// can hand it a whole time slice (64 MiB beside a busy loop per core: 0.14
// GB/s with 64 yields before sleeping, 1.7-1.9 GB/s without). With more
// ranks than CPUs the rank waited for may need this very CPU: then a short
// spin, and yields (to it) before sleeping, unless yields lately lost the
// CPU for long (runtime/yield_policy.h). 4 unpinned ranks on 2 CPUs,
// medians of 7 runs, 4 B / 1 MiB / 4 MiB: 10.4 / 215 / 1567 us after 1000
// looks, 3.8 / 236 / 1475 after 100, 3.0 / 238 / 1433 after none (the
// long spin: 120-220 us at 4 B).
constexpr uint64_t kOversubscribedSpins = 100;

// All-reduces up to this size take the one-barrier path.
constexpr size_t kShmSmallBytes = 16 << 10;

void FutexWakeAll(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, FutexWord(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

// Sleeps while the word still holds `seen` (at most `nap`, so failures are
// still polled for).
void FutexWait(std::atomic<uint32_t>* word, uint32_t seen,
               std::chrono::milliseconds nap) {
  timespec ts{static_cast<time_t>(nap.count() / 1000),
              static_cast<long>(nap.count() % 1000) * 1000 * 1000};
  syscall(SYS_futex, FutexWord(word), FUTEX_WAIT, static_cast<int>(seen), &ts,
          nullptr, 0);
}

// DT_SHM, checked on every rank (a typo anywhere is an error, not TCP by
// surprise); unset means yes. A bad value is every rank's failure, so
// none waits for the rank that refused it.
Status ShmWanted(CommunicatorImpl* comm, bool* wanted) {
  std::optional<bool> env;
  Status status = EnvBool(ProcessEnv(), "DT_SHM", &env);
  if (!status.ok()) {
    comm->Fail(status).IgnoreError();  // tell the others; ours is `status`
    return status;
  }
  *wanted = env.value_or(true);
  return Status::OK();
}

// Rank 0's answer to "shared memory at all?": a random base name, or ""
// (DT_SHM=0 on rank 0), passed to every rank.
Status AgreeOnBaseName(CommunicatorImpl* comm, bool wanted,
                       std::string* base_name) {
  // Rank 0 alone decides, so no rank takes another path.
  base_name->clear();
  if (comm->rank == 0 && wanted) *base_name = ShmSegment::RandomName();
  Status s = StarBroadcast(&comm->ctrl, comm->rank, 64, base_name,
                           DeadlineIn(comm->opt.timeout_seconds));
  return s.ok() ? s : comm->Fail(s);  // the others must not wait for us
}

// The minimum of `flag` over all ranks, into `flag`.
Status AllRanksMin(CommunicatorImpl* comm, int32_t* flag) {
  Status s = StarAllMin(&comm->ctrl, comm->rank, flag,
                        DeadlineIn(comm->opt.timeout_seconds));
  return s.ok() ? s : comm->Fail(s);  // the others must not wait for us
}

}  // namespace

// Ranks sharing a machine map one shared-memory segment, made by their
// leader (lowest rank) as "<base>.<its rank>" under rank 0's random base;
// the others map it once every leader made its own, and it is unlinked as
// soon as everyone mapped it. DT_SHM=0 on rank 0, or any rank failing to
// map, leaves everything on TCP; DT_SHM other than a boolean is an error. With
// several machines, all-reduce becomes hierarchical.
Status SetupShm(CommunicatorImpl* comm) {
  bool wanted = true;
  DT_RETURN_IF_ERROR(ShmWanted(comm, &wanted));
  GroupByHost(comm);
  const int n = static_cast<int>(comm->local_ranks.size());
  comm->socket_spin = SocketSpinPays(n);
  if (comm->leaders.size() == static_cast<size_t>(comm->size))
    return Status::OK();  // one rank per machine: nothing to share
  // 1 MiB per slot: 4 ranks' two sets stay in cache (measured best among
  // 128 KiB-16 MiB for 64 MiB all-reduces on 4 ranks). With more ranks
  // than CPUs, up to 4 MiB (48 MiB in all at most, room in Docker's 64 MiB
  // /dev/shm): a quarter of the barriers, each of which may cost a time
  // slice when something else wants the CPUs too (4 ranks on 2 CPUs beside
  // a busy loop per CPU, 4-64 MiB: 0.77-1.02x pinned Gloo with 1 MiB,
  // 2.05-3.12x with 4 MiB; idle, 64 MiB: 3.8-4.2 GB/s against 4.0-4.6).
  const size_t step =
      std::max<size_t>(64 << 10, std::min<size_t>(1 << 20, (64 << 20) / n)) &
      ~size_t{63};
  const bool oversubscribed = n > sysconf(_SC_NPROCESSORS_ONLN);
  const size_t chunk =
      oversubscribed ? std::max(step, std::min<size_t>(
                                          4 << 20, (48 << 20) / (2 * (n + 1))) &
                                          ~size_t{63})
                     : step;
  std::string base;
  DT_RETURN_IF_ERROR(AgreeOnBaseName(comm, wanted, &base));
  if (base.empty()) return Status::OK();
  const std::string name = base + "." + std::to_string(comm->local_ranks[0]);
  bool leader = comm->local_rank == 0;
  if (leader && n > 1) {
    Status status = comm->shm.CreateNamed(name, n, chunk);
    if (!status.ok())
      comm->Log("no shared memory (" + status.message() + "); using TCP");
  }
  int32_t created = !leader || n == 1 || comm->shm.mapped() ? 1 : 0;
  DT_RETURN_IF_ERROR(AllRanksMin(comm, &created));
  if (created && !leader && n > 1) {
    Status status = comm->shm.Open(name, n, chunk);
    if (!status.ok())
      comm->Log("no shared memory (" + status.message() + "); using TCP");
  }
  int32_t all_mapped = created && (n == 1 || comm->shm.mapped()) ? 1 : 0;
  DT_RETURN_IF_ERROR(AllRanksMin(comm, &all_mapped));
  if (leader) comm->shm.Unlink();  // everyone mapped it (or gave up)
  if (!all_mapped) {
    comm->shm.Reset();
    return Status::OK();
  }
  comm->hierarchical = comm->leaders.size() > 1;
  comm->shm_oversubscribed = oversubscribed;
  comm->naps = NapSchedule(n, sysconf(_SC_NPROCESSORS_ONLN));
  return Status::OK();
}

// Shared memory to the leader, a ring among leaders, shared memory back.
Status HierarchicalAllReduce(CommunicatorImpl* comm, char* buf, size_t count,
                             DataType type, ReduceOp op) {
  const bool shm = comm->shm.mapped(), leader = comm->local_rank == 0;
  if (shm) {
    size_t mine = leader ? count : 0;  // the leader's
    DT_RETURN_IF_ERROR(comm->ShmReduce(buf, count, type, op, buf, 0, mine));
  }
  if (leader)
    DT_RETURN_IF_ERROR(RingAllReduce(comm->Leaders(), buf, count, type, op));
  if (!shm) return Status::OK();
  return comm->ShmBroadcast(buf, count * DataTypeSize(type), 0, true);
}

// Waits until every rank reached the next barrier epoch; checks the
// control connections meanwhile so a dead rank is noticed (and named) as
// fast as on the TCP path. Each rank tags its line of the epoch's set with
// the epoch (its counter; the payload written before it) and waits until
// every rank's is tagged: first spinning (up to SpinPolicy::kLongSpin, no
// syscall, no write to a shared line: the common case when every rank has
// its own core), then sleeping on the wake word, which leaves shared cores
// to the ranks still working. A sleeper counts
// itself in sleepers() and checks the counters once more before it sleeps;
// a rank that finds the barrier complete bumps the wake word and wakes the
// sleepers only when there are any. (Its counter store comes before its
// read of sleepers(), the sleeper's count before its second look at the
// counters: one of the two sees the other, so no wake-up is lost.)
Status CommunicatorImpl::ShmBarrier(bool patient) {
  if (!failure.empty()) return Status::Unavailable(failure);
  ++shm_epoch;
  const int set = static_cast<int>(shm_epoch & 1);
  shm.tag(local_rank, set)->store(shm_epoch, std::memory_order_seq_cst);
  if (shm_oversubscribed &&
      shm.arrivals()->fetch_add(1, std::memory_order_seq_cst) + 1 ==
          ShmArrivalsAtEpoch()) {
    WakeSleepers();  // the last to arrive: the only one that wakes
  }
  Deadline deadline{};
  std::optional<Clock::time_point> spin_end, last_poll;
  yield_policy.StartWait();
  naps.StartWait();
  const bool spin_long = !shm_oversubscribed && spin_policy.SpinLong();
  for (uint64_t spin = 0;; ++spin) {
    if (ShmBarrierDone()) {
      if (!shm_oversubscribed) spin_policy.WaitEnded(!last_poll);
      return Status::OK();
    }
    if (shm_oversubscribed) {
      if (spin < kOversubscribedSpins) continue;
    } else if (!last_poll) {
      if (spin % 64 != 63) continue;  // the clock now and then
      Clock::time_point now = Clock::now();
      if (!spin_end)
        spin_end = now + (spin_long ? Clock::duration(SpinPolicy::kLongSpin)
                                    : Clock::duration::zero());
      if (now < *spin_end) continue;
    }
    Clock::time_point now = Clock::now();
    // Failures come on the control connections: look every 2 ms.
    if (!last_poll) {
      last_poll = now;
      deadline = DeadlineIn(opt.timeout_seconds);
    } else if (now - *last_poll > std::chrono::milliseconds(2)) {
      last_poll = now;
      DT_RETURN_IF_ERROR(PollCtrl());
      if (!patient && now > deadline) {
        return Fail(Status::Timeout(
            "rank " + std::to_string(rank) +
            ": a rank on this machine made no progress for " +
            std::to_string(static_cast<int>(opt.timeout_seconds)) + " s"));
      }
    }
    // Yield (to the rank we wait for, when it shares this CPU) unless
    // yields lately handed the CPU away for long: then something else
    // (another job, a busy loop) wants it, and each yield may cost a whole
    // time slice: sleep instead (runtime/yield_policy.h).
    if (shm_oversubscribed && yield_policy.MayYield(now)) {
      Clock::time_point before = Clock::now();
      sched_yield();
      yield_policy.Yielded(before, Clock::now());
      continue;
    }
    uint32_t seen = shm.wake()->load(std::memory_order_seq_cst);
    shm.sleepers()->fetch_add(1, std::memory_order_seq_cst);
    bool done = ShmBarrierDone();
    if (!done) FutexWait(shm.wake(), seen, naps.Next());
    shm.sleepers()->fetch_sub(1, std::memory_order_seq_cst);
    if (done) {
      if (!shm_oversubscribed) spin_policy.WaitEnded(false);
      return Status::OK();
    }
  }
}

// Whether every local rank reached shm_epoch; if so, with a CPU per rank,
// wakes the sleepers (with more, the last to arrive did).
// With a CPU per rank all tags are read each time, so a waiter's misses on
// them overlap (2 ranks, 128-256 B: 0.70-0.92 us, 0.73-1.13 stopping at
// the first untagged line). With more ranks than CPUs one load of the
// arrivals count answers (each rank adds one after tagging its line): a
// look at every tag, by every waiter each time it runs, made a barrier of
// 1,024 ranks on 2 CPUs cost ~0.2 s (n^2 loads of lines being written).
bool CommunicatorImpl::ShmBarrierDone() {
  if (shm_oversubscribed) {
    return shm.arrivals()->load(std::memory_order_seq_cst) >=
           ShmArrivalsAtEpoch();
  }
  const int n = static_cast<int>(local_ranks.size()),
            set = static_cast<int>(shm_epoch & 1);
  bool done = true;
  for (int r = 0; r < n; ++r)
    done &= shm.tag(r, set)->load(std::memory_order_seq_cst) >= shm_epoch;
  if (done) WakeSleepers();
  return done;
}

// The arrivals count once every local rank reached shm_epoch.
uint64_t CommunicatorImpl::ShmArrivalsAtEpoch() const {
  return shm_epoch * static_cast<uint64_t>(local_ranks.size());
}

// With more ranks than CPUs only the last rank to arrive wakes the others:
// when every rank leaving a barrier woke the sleepers, the ranks already
// asleep at the next one were woken n times each (1,024 ranks on 2 CPUs:
// 0.3-0.4 s per 4-byte all-reduce).
void CommunicatorImpl::WakeSleepers() {
  if (shm.sleepers()->load(std::memory_order_seq_cst) > 0) {
    shm.wake()->fetch_add(1, std::memory_order_seq_cst);
    FutexWakeAll(shm.wake());
  }
}

// Small vectors (at most kShmSmallBytes): one barrier instead of two.
// Every rank copies its vector into its slot and, after the barrier,
// reduces all slots itself into `out`, in rank order: the same order, so
// the same bits, as the chunked path. The alternate buffer sets keep it
// safe (see ShmReduce).
Status CommunicatorImpl::ShmReduceSmall(const char* src, size_t count,
                                        DataType type, ReduceOp op, char* out,
                                        size_t out_lo, size_t out_hi) {
  const size_t elem_size = DataTypeSize(type);
  if (count * elem_size <= ShmSegment::kLinePayload)
    return ShmReduceInLine(src, count, type, op, out, out_lo, out_hi);
  const int n = static_cast<int>(local_ranks.size());
  const int set = shm_set;
  shm_set ^= 1;
  std::memcpy(shm.slot(set, local_rank), src, count * elem_size);
  DT_RETURN_IF_ERROR(ShmBarrier());
  out_hi = std::min(out_hi, count);
  if (out_hi <= out_lo) return Status::OK();
  const size_t offset = out_lo * elem_size, len = out_hi - out_lo;
  ReduceInOrder(
      out, n, [&](int r) { return shm.slot(set, r) + offset; }, len, type, op);
  return Status::OK();
}

// The smallest vectors (up to kLinePayload bytes, shm_segment.h says why
// no more) travel in the barrier's own tagged line: a waiting rank has
// every rank's vector once it sees the barrier complete. The line of the
// barrier's epoch is written again two epochs later, when every rank is
// done with it.
Status CommunicatorImpl::ShmReduceInLine(const char* src, size_t count,
                                         DataType type, ReduceOp op, char* out,
                                         size_t out_lo, size_t out_hi) {
  const size_t elem_size = DataTypeSize(type);
  const int n = static_cast<int>(local_ranks.size());
  const int set = static_cast<int>((shm_epoch + 1) & 1);  // the barrier's
  std::memcpy(shm.line_payload(local_rank, set), src, count * elem_size);
  DT_RETURN_IF_ERROR(ShmBarrier());
  out_hi = std::min(out_hi, count);
  if (out_hi <= out_lo) return Status::OK();
  const size_t offset = out_lo * elem_size;
  ReduceInOrder(
      out, n, [&](int r) { return shm.line_payload(r, set) + offset; },
      out_hi - out_lo, type, op);
  return Status::OK();
}

// Rank `local_rank`'s share of a chunk: elements [lo, hi) of every rank's
// contribution reduced in rank order into the result area. Its own
// contribution is read from `mine` (its source), the others' from their
// slots.
void CommunicatorImpl::ShmReduceShare(int set, const char* mine, size_t lo,
                                      size_t hi, DataType type, ReduceOp op) {
  const size_t elem_size = DataTypeSize(type), offset = lo * elem_size;
  const int n = static_cast<int>(local_ranks.size());
  auto part = [&](int r) -> const char* {
    return r == local_rank ? mine + offset : shm.slot(set, r) + offset;
  };
  ReduceInOrder(shm.result(set) + offset, n, part, hi - lo, type, op);
}

// Chunk by chunk: every rank copies into its slot the parts of its chunk
// the others reduce (not its own share, which it reads from `src`),
// reduces its 1/n of the chunk across all ranks into the result area, and
// copies what it wants of the result out. Alternate chunks use alternate
// buffer sets, so two barriers per chunk suffice: a set is written again
// two chunks later (in any collective), after a barrier every rank reaches
// only once done with it. The same holds for the one-barrier broadcast,
// gather and small reduce.
Status CommunicatorImpl::ShmReduce(const char* src, size_t count, DataType type,
                                   ReduceOp op, char* out, size_t out_lo,
                                   size_t out_hi) {
  const size_t elem_size = DataTypeSize(type);
  if (count == 0) return Status::OK();  // every local rank: nothing to wait for
  if (count * elem_size <= std::min(kShmSmallBytes, shm.chunk()))
    return ShmReduceSmall(src, count, type, op, out, out_lo, out_hi);
  const size_t per_chunk = shm.chunk() / elem_size;
  const int n = static_cast<int>(local_ranks.size());
  for (size_t first = 0; first < count; first += per_chunk) {
    const int set = shm_set;
    shm_set ^= 1;
    const size_t len = std::min(per_chunk, count - first);
    const size_t lo = SegmentStart(len, n, local_rank),
                 hi = SegmentStart(len, n, local_rank + 1);
    const char* mine = src + first * elem_size;
    char* slot = shm.slot(set, local_rank);
    std::memcpy(slot, mine, lo * elem_size);
    std::memcpy(slot + hi * elem_size, mine + hi * elem_size,
                (len - hi) * elem_size);
    DT_RETURN_IF_ERROR(ShmBarrier());
    if (hi > lo) ShmReduceShare(set, mine, lo, hi, type, op);
    DT_RETURN_IF_ERROR(ShmBarrier());
    size_t want_lo = std::max(first, out_lo),
           want_hi = std::min(first + len, out_hi);
    if (want_lo < want_hi) {
      std::memcpy(out + (want_lo - out_lo) * elem_size,
                  shm.result(set) + (want_lo - first) * elem_size,
                  (want_hi - want_lo) * elem_size);
    }
  }
  return Status::OK();
}

Status CommunicatorImpl::ShmBroadcast(char* buf, size_t bytes, int from,
                                      bool patient) {
  for (size_t first = 0; first < bytes; first += shm.chunk()) {
    const int set = shm_set;
    shm_set ^= 1;
    size_t len = std::min(shm.chunk(), bytes - first);
    if (local_rank == from) std::memcpy(shm.result(set), buf + first, len);
    DT_RETURN_IF_ERROR(ShmBarrier(patient && first == 0));
    if (local_rank != from) std::memcpy(buf + first, shm.result(set), len);
  }
  return Status::OK();
}

Status CommunicatorImpl::ShmAllGather(char* buf, size_t piece) {
  const int n = static_cast<int>(local_ranks.size());
  for (size_t first = 0; first < piece; first += shm.chunk()) {
    const int set = shm_set;
    shm_set ^= 1;
    size_t len = std::min(shm.chunk(), piece - first);
    std::memcpy(shm.slot(set, local_rank), buf + local_rank * piece + first,
                len);
    DT_RETURN_IF_ERROR(ShmBarrier());
    for (int r = 0; r < n; ++r) {
      if (r != local_rank)
        std::memcpy(buf + r * piece + first, shm.slot(set, r), len);
    }
  }
  return Status::OK();
}

}  // namespace dist_train
