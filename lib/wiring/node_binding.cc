// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "wiring/node_binding.h"

#include "base/slurm_ids.h"
#include "binding/binding_env.h"
#include "binding/interfaces.h"
#include "binding/plan_report.h"
#include "binding/rdma_check.h"

namespace dist_train {
namespace {

bool AnyPart(const BindParts& parts) {
  return parts.cpu || parts.gpu || parts.nic;
}

Status Plan(const PluginConfig& cfg, const JobOptions& opts, BindSource& source,
            NodeBinding* b) {
  DT_RETURN_IF_ERROR(source.LoadModel(&b->model, &b->topology_source));
  BindRequest req;
  DT_RETURN_IF_ERROR(source.Request(b->model, EffectiveBind(cfg, opts), &req));
  DT_RETURN_IF_ERROR(PlanBinding(b->model, req, &b->plan));
  source.NameRanks(&b->plan);
  if (req.parts.nic) {
    b->socket_interfaces = source.UsableInterfaces();
    b->rdma_note = source.RdmaNote(b->model, b->plan);
  }
  return Status::OK();
}

}  // namespace

std::string BindSource::RdmaNote(const NodeModel& model, const BindPlan& plan) {
  return RdmaFallbackNote(model, plan, RdmaRoots());
}

std::vector<std::string> BindSource::UsableInterfaces() {
  std::vector<std::string> names;
  if (!LiveSocketInterfaces(&names).ok()) names.clear();
  return names;
}

bool BindsStep(const PluginConfig& cfg, const JobOptions& opts,
               uint32_t step_id) {
  return opts.mode.value_or(cfg.default_mode) == Mode::kTask &&
         step_id != kBatchStepId && AnyPart(EffectiveBind(cfg, opts));
}

void PlanNodeBinding(const PluginConfig& cfg, const JobOptions& opts,
                     BindSource& source, NodeBinding* out) {
  Status s = Plan(cfg, opts, source, out);
  out->note = BindingNote(s, out->plan);
  out->bound = s.ok();
  if (out->bound && !out->rdma_note.empty())
    out->note += (out->note.empty() ? "" : "\n") + out->rdma_note;
}

const RankPlan* RankOf(const NodeBinding& b, uint32_t local_rank) {
  if (!b.bound) return nullptr;
  const std::vector<RankPlan>& ranks = b.plan.ranks;
  if (local_rank < ranks.size() && ranks[local_rank].local_rank == local_rank)
    return &ranks[local_rank];
  for (const RankPlan& r : ranks)
    if (r.local_rank == local_rank) return &r;
  return nullptr;
}

EnvAssignments RankBindingEnv(const PluginConfig& cfg, const JobOptions& opts,
                              const NodeBinding& b, uint32_t local_rank,
                              const EnvMap& env) {
  const RankPlan* rank = RankOf(b, local_rank);
  if (rank == nullptr) return {};
  BindingEnvInputs in;
  in.parts = EffectiveBind(cfg, opts);
  in.nccl_ib_hca = cfg.nccl_ib_hca;
  in.socket_interfaces = b.socket_interfaces;
  const std::string* cvd = EnvFind(env, "CUDA_VISIBLE_DEVICES");
  if (cvd != nullptr) in.slurm_cuda_visible_devices = *cvd;
  return BindingEnv(b.model, b.plan, *rank, in);
}

std::string ApplyRankAffinity(const PluginConfig& cfg, const JobOptions& opts,
                              const NodeBinding& b, uint32_t local_rank) {
  const RankPlan* rank = RankOf(b, local_rank);
  if (rank == nullptr || !EffectiveBind(cfg, opts).cpu || rank->cpus.empty())
    return "";
  Status s = ApplyCpuAffinity(rank->cpus);
  if (s.ok()) return "";
  return "dist-train: warning: local rank " + std::to_string(local_rank) +
         ": " + s.message();
}

}  // namespace dist_train
