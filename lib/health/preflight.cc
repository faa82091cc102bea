// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "health/preflight.h"

#include <time.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "base/clock.h"
#include "dist_train/runtime.h"
#include "runtime/node_exclusion.h"

namespace dist_train {
namespace {

constexpr int kSmallRounds = 20;           // 8-byte all-reduces
constexpr int kLargeRounds = 5;            // 4 MiB all-reduces
constexpr size_t kLargeFloats = 1u << 20;  // 4 MiB of float
constexpr size_t kRecordWords = kProbeRecordBytes / 4;

// Record layout: "dtp1" measured cpu mem gpus_expected gpus_found nic_up
// speed, then host and nic, NUL-terminated, in the rest.
struct Record {
  char magic[4];
  int32_t measured, gpus_expected, gpus_found, nic_up, nic_speed_mbps;
  double cpu_gflops, mem_gbps;
  char host[96];
  char nic[32];
  char nic_state[16];
  char pad[kProbeRecordBytes - 4 - 20 - 16 - 96 - 32 - 16];
};
static_assert(sizeof(Record) == kProbeRecordBytes, "record size");

void CopyText(const std::string& from, char* to, size_t size) {
  size_t n = std::min(from.size(), size - 1);
  memcpy(to, from.data(), n);
  to[n] = '\0';
}

std::string TextOf(const char* from, size_t size) {
  return std::string(from, strnlen(from, size));
}

Status EnvInt(const EnvMap& env, const char* name, uint64_t min, uint64_t max,
              int* out) {
  if (*out >= 0) return Status::OK();
  std::optional<uint64_t> v;
  DT_RETURN_IF_ERROR(EnvUint(env, name, min, max, &v));
  if (!v) return Status::NotFound(std::string(name) + " is not set");
  *out = static_cast<int>(*v);
  return Status::OK();
}

NetworkResult MeasureNetwork(Communicator& comm, Status* status) {
  NetworkResult net;
  net.ranks = comm.size();
  net.how = comm.Describe();
  std::vector<double> small, large;
  double word[1] = {1};
  for (int i = 0; i < kSmallRounds && status->ok(); ++i) {
    double t = MonotonicSeconds();
    *status = comm.AllReduce(word, word, 1, DataType::kFloat64, ReduceOp::kSum);
    small.push_back((MonotonicSeconds() - t) * 1e6);
  }
  std::vector<float> buf(kLargeFloats, 1.0f);
  for (int i = 0; i < kLargeRounds && status->ok(); ++i) {
    double t = MonotonicSeconds();
    *status = comm.AllReduce(buf.data(), buf.data(), buf.size(),
                             DataType::kFloat32, ReduceOp::kMax);
    large.push_back(buf.size() * sizeof(float) / (MonotonicSeconds() - t) /
                    1e9);
  }
  net.small_us = MedianOf(small);
  net.large_gbps = MedianOf(large);
  return net;
}

// Every task's record, in rank order.
Status GatherProbes(Communicator& comm, const PreflightRun& run,
                    const EnvMap& env, std::vector<NodeProbe>* probes) {
  DT_RETURN_IF_ERROR(comm.Barrier());
  std::string mine;
  if (run.probe == 1) {
    mine = EncodeProbe(ProbeNode(env, run.probe_seconds), true);
  } else {
    // Stay off the CPUs while the node's first task measures them.
    double idle = 2 * run.probe_seconds + 0.05;
    timespec ts{static_cast<time_t>(idle),
                static_cast<long>((idle - static_cast<time_t>(idle)) * 1e9)};
    nanosleep(&ts, nullptr);
    mine = EncodeProbe(NodeProbe{}, false);
  }
  std::string all(kProbeRecordBytes * comm.size(), '\0');
  DT_RETURN_IF_ERROR(
      comm.AllGather(mine.data(), all.data(), kRecordWords, DataType::kInt32));
  for (int r = 0; r < comm.size(); ++r) {
    NodeProbe p;
    bool measured = false;
    if (!DecodeProbe(all.substr(r * kProbeRecordBytes, kProbeRecordBytes), &p,
                     &measured)) {
      return Status::InvalidArgument("preflight: rank " + std::to_string(r) +
                                     " sent a malformed probe record");
    }
    if (measured) probes->push_back(std::move(p));
  }
  return Status::OK();
}

Status Connect(const EnvMap& env, const PreflightRun& run,
               std::unique_ptr<Communicator>* comm) {
  Options o;
  o.rank = run.rank;
  o.world_size = run.size;
  o.job_identity = run.identity;
  o.timeout_seconds = run.seconds;
  if (const std::string* a = EnvFind(env, "MASTER_ADDR")) o.master_addr = *a;
  std::optional<uint64_t> port;
  DT_RETURN_IF_ERROR(EnvUint(env, "MASTER_PORT", 1, 65535, &port));
  if (port) o.master_port = static_cast<int>(*port);
  if (const std::string* t = EnvFind(env, "DT_JOB_TOKEN")) o.job_token = *t;
  return Communicator::Create(o, comm);
}

int Verdict(const PreflightRun& run, const Status& s, FILE* out) {
  if (s.ok()) return kPreflightPassed;
  // Under requeue too: without a verdict there is no node to leave out.
  bool fail = run.policy != PreflightPolicy::kWarn;
  fprintf(out, "dist-train: preflight: rank %d: could not complete: %s%s\n",
          run.rank, s.message().c_str(),
          fail ? "" : " (policy warn: starting the program)");
  return fail ? kPreflightFailed : kPreflightPassed;
}

}  // namespace

std::string EncodeProbe(const NodeProbe& p, bool measured) {
  Record r{};
  memcpy(r.magic, "dtp1", 4);
  r.measured = measured ? 1 : 0;
  r.gpus_expected = p.gpus_expected;
  r.gpus_found = p.gpus_found;
  r.nic_up = p.nic_up ? 1 : 0;
  r.nic_speed_mbps = p.nic_speed_mbps;
  r.cpu_gflops = p.cpu_gflops;
  r.mem_gbps = p.mem_gbps;
  CopyText(p.host, r.host, sizeof(r.host));
  CopyText(p.nic, r.nic, sizeof(r.nic));
  CopyText(p.nic_state, r.nic_state, sizeof(r.nic_state));
  return std::string(reinterpret_cast<const char*>(&r), sizeof(r));
}

bool DecodeProbe(const std::string& record, NodeProbe* p, bool* measured) {
  Record r;
  if (record.size() != sizeof(r)) return false;
  memcpy(&r, record.data(), sizeof(r));
  // A peer passed admission with the job's token, but its record is still
  // checked: finite, in range, texts terminated within their fields.
  bool sane = memcmp(r.magic, "dtp1", 4) == 0 &&
              (r.measured == 0 || r.measured == 1) && r.cpu_gflops >= -1 &&
              r.cpu_gflops < 1e6 && r.mem_gbps >= -1 && r.mem_gbps < 1e6 &&
              r.gpus_expected >= -1 && r.gpus_expected <= 1024 &&
              r.gpus_found >= -1 && r.gpus_found <= 1024;
  if (!sane) return false;
  *measured = r.measured == 1;
  p->host = TextOf(r.host, sizeof(r.host));
  p->nic = TextOf(r.nic, sizeof(r.nic));
  p->nic_state = TextOf(r.nic_state, sizeof(r.nic_state));
  p->cpu_gflops = r.cpu_gflops;
  p->mem_gbps = r.mem_gbps;
  p->gpus_expected = r.gpus_expected;
  p->gpus_found = r.gpus_found;
  p->nic_up = r.nic_up != 0;
  p->nic_speed_mbps = r.nic_speed_mbps;
  return true;
}

Status ResolvePreflightRun(const EnvMap& env, PreflightRun* run) {
  DT_RETURN_IF_ERROR(EnvInt(env, "SLURM_PROCID", 0, 1 << 24, &run->rank));
  DT_RETURN_IF_ERROR(EnvInt(env, "SLURM_NTASKS", 1, 1 << 24, &run->size));
  if (run->rank >= run->size) {
    return Status::InvalidArgument("rank " + std::to_string(run->rank) +
                                   " is not below " +
                                   std::to_string(run->size) + " tasks");
  }
  if (run->probe < 0) {
    int local = -1;
    DT_RETURN_IF_ERROR(EnvInt(env, "SLURM_LOCALID", 0, 1 << 24, &local));
    run->probe = local == 0 ? 1 : 0;
  }
  if (run->identity.empty()) {
    const std::string* job = EnvFind(env, "SLURM_JOB_ID");
    const std::string* step = EnvFind(env, "SLURM_STEP_ID");
    run->identity = "slurm:" + (job ? *job : std::string("nojob")) + "." +
                    (step ? *step : std::string("batch")) + ":preflight";
  }
  return Status::OK();
}

namespace {

constexpr const char* kSayPrefix = "dist-train: preflight: ";

// Task 0's part of policy requeue (runtime/node_exclusion.h). Each line is
// flushed as it is said: the requeue ends this very step.
void RequeueFromTaskZero(const EnvMap& env, const PreflightRun& run,
                         const PreflightScore& score, FILE* out) {
  std::vector<std::string> hosts;
  for (const NodeVerdict& v : score.bad) hosts.push_back(v.host);
  RequeueAndSay(env, run.requeue_ops, hosts, kSayPrefix,
                [out](const std::string& line) {
                  fprintf(out, "%s\n", line.c_str());
                  fflush(out);
                });
}

// Task 0 requeues the job without the bad nodes, if its budget allows; the
// others wait for it at a barrier, so the step does not end first.
void RequeueWithoutBad(const EnvMap& env, const PreflightRun& run,
                       const PreflightScore& score, Communicator& comm,
                       FILE* out) {
  if (run.rank == 0) {
    RequeueFromTaskZero(env, run, score, out);
    fflush(out);
  }
  Status s = comm.Barrier();
  if (!s.ok() && run.rank != 0)
    fprintf(out, "dist-train: preflight: rank %d: %s\n", run.rank,
            s.message().c_str());
}

// On a requeued run of a policy-requeue step, task 0 says which run this
// is and what the job excludes now: the job's log keeps the history even
// where the previous run's last lines were cut by its requeue.
void RequeueHistory(const EnvMap& env, const PreflightRun& run, FILE* out) {
  SayRequeueHistory(
      env, run.requeue_ops, kSayPrefix,
      [out](const std::string& line) { fprintf(out, "%s\n", line.c_str()); });
}

const char* PolicySuffix(const PreflightRun& run, const PreflightScore& score) {
  if (score.bad.empty()) return "";
  switch (run.policy) {
    case PreflightPolicy::kFail:
      return ": the step ends before the program starts";
    case PreflightPolicy::kRequeue:
      return ": the step ends before the program starts, and the job is "
             "requeued without the bad nodes";
    case PreflightPolicy::kWarn:
      break;
  }
  return "";
}

}  // namespace

int RunPreflight(const EnvMap& env, const PreflightRun& run, FILE* out) {
  double start = MonotonicSeconds();
  std::unique_ptr<Communicator> comm;
  Status s = Connect(env, run, &comm);
  std::vector<NodeProbe> probes;
  if (s.ok()) s = GatherProbes(*comm, run, env, &probes);
  NetworkResult net;
  if (s.ok()) net = MeasureNetwork(*comm, &s);
  if (!s.ok()) return Verdict(run, s, out);
  PreflightScore score = ScoreProbes(probes, run.score);
  if (run.rank == 0) {
    if (run.policy == PreflightPolicy::kRequeue) RequeueHistory(env, run, out);
    std::string report = PreflightReport(probes, score, net);
    fprintf(out, "%s", report.c_str());
    fprintf(out, "dist-train: preflight: took %.1f s, policy %s%s\n",
            MonotonicSeconds() - start, PreflightPolicyName(run.policy),
            PolicySuffix(run, score));
    fflush(out);
  }
  if (score.bad.empty() || run.policy == PreflightPolicy::kWarn)
    return kPreflightPassed;
  if (run.policy == PreflightPolicy::kRequeue)
    RequeueWithoutBad(env, run, score, *comm, out);
  return kPreflightFailed;
}

}  // namespace dist_train
