// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// dt-topo: shows the binding plan the SPANK plugin would apply on this node
// (or on a saved hwloc XML topology), computed by the very same planner.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "binding/binding.h"
#include "binding/plan_report.h"
#include "binding/plan_svg.h"
#include "binding/topology.h"

namespace dist_train {
namespace {

struct Args {
  std::string topology, gpus, cpus, share = "exclusive", svg;
  int ntasks = 0, gpus_per_task = 0, node_rank = 0;
  bool json = false;
};

Status BuildRequest(const Args& a, const NodeModel& model, BindRequest* req) {
  if (!a.gpus.empty()) {
    std::vector<int> g;
    DT_RETURN_IF_ERROR(ParseIndexList(a.gpus, "--gpus", &g));
    req->gpus = g;
  }
  if (!a.cpus.empty()) {
    std::vector<int> c;
    DT_RETURN_IF_ERROR(ParseIndexList(a.cpus, "--cpus", &c));
    req->cpus = c;
  }
  size_t ngpus = req->gpus ? req->gpus->size() : model.gpus.size();
  size_t per = a.gpus_per_task > 0 ? a.gpus_per_task : 1;
  req->gpus_per_task = static_cast<uint32_t>(a.gpus_per_task);
  req->ntasks =
      a.ntasks > 0
          ? a.ntasks
          : static_cast<uint32_t>(std::max<size_t>((ngpus + per - 1) / per, 1));
  req->parts.share = a.share == "domain" ? CpuShare::kDomain
                     : a.share == "none" ? CpuShare::kNone
                                         : CpuShare::kExclusive;
  return Status::OK();
}

// Writes the drawing next to `path` first, then renames it into place: a
// failed write leaves an existing file as it was.
Status WriteSvg(const std::string& path, const std::string& svg) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << svg;
    if (!out.flush()) {
      Status s = Status::IOError(path + ": cannot write: " + strerror(errno));
      remove(tmp.c_str());
      return s;
    }
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    Status s = Status::IOError(path + ": cannot write: " + strerror(errno));
    remove(tmp.c_str());
    return s;
  }
  return Status::OK();
}

std::string SvgTitle(const Args& a, const BindPlan& plan) {
  std::string source = a.topology.empty() ? "this node" : a.topology;
  return "dt-topo: " + source + ", " + std::to_string(plan.ranks.size()) +
         " local ranks";
}

int Run(const Args& a) {
  NodeModel model;
  BindRequest req;
  BindPlan plan;
  // A file from anywhere: hwloc parses it in a child first (it crashes on
  // some malformed XML), so a crash is reported as an error.
  Status s = a.topology.empty() ? LoadNodeModel("", &model)
                                : LoadNodeModelIsolated(a.topology, &model);
  if (s.ok()) s = BuildRequest(a, model, &req);
  if (s.ok()) s = PlanBinding(model, req, &plan);
  // Global ranks as srun's default (block) distribution numbers them.
  for (RankPlan& r : plan.ranks)
    r.rank = static_cast<int64_t>(a.node_rank) * req.ntasks + r.local_rank;
  if (!s.ok()) {
    fprintf(stderr, "dt-topo: %s\n", s.message().c_str());
    return 1;
  }
  if (!a.svg.empty()) {
    Status w = WriteSvg(a.svg, PlanSvg(model, plan, SvgTitle(a, plan)));
    if (!w.ok()) {
      fprintf(stderr, "dt-topo: %s\n", w.message().c_str());
      return 1;
    }
  }
  fputs((a.json ? PlanJson(model, plan) : PlanTable(model, plan)).c_str(),
        stdout);
  for (const std::string& w : plan.warnings)
    fprintf(stderr, "dt-topo: warning: %s\n", w.c_str());
  return 0;
}

}  // namespace
}  // namespace dist_train

int main(int argc, char** argv) {
  dist_train::Args a;
  CLI::App app{
      "Show the binding plan dist-train applies on this node: each local "
      "rank's GPUs, "
      "nearest NICs, CPU share and NUMA nodes."};
  app.set_version_flag("--version", DT_VERSION);
  app.add_option("--topology", a.topology,
                 "saved hwloc XML topology (default: this machine)")
      ->check(CLI::ExistingFile);
  app.add_option(
      "--gpus", a.gpus,
      "the step's GPUs as bus-order indexes, e.g. 0,2-3 (default: all)");
  app.add_option("--ntasks", a.ntasks,
                 "local ranks (default: one per GPU, or per --gpus-per-task "
                 "GPUs, or 1)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--gpus-per-task", a.gpus_per_task,
                 "GPUs each rank drives, like Slurm's --gpus-per-task "
                 "(default: one, or all GPUs divided among fewer ranks)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--node-rank", a.node_rank,
                 "this node's place in the job (NODE_RANK, 0-based): the "
                 "rank column is node-rank x ntasks + local rank, srun's "
                 "default block distribution (default: 0)")
      ->check(CLI::Range(0, 1 << 20));
  app.add_option("--cpus", a.cpus,
                 "the step's CPUs as OS PU indexes (default: all allowed)");
  app.add_option("--cpu-share", a.share, "exclusive (default), domain or none")
      ->check(CLI::IsMember({"exclusive", "domain", "none"}));
  app.add_option("--svg", a.svg,
                 "also draw the node and the plan into this SVG file "
                 "(packages, NUMA nodes, PCIe switches, GPUs, NICs, each "
                 "rank's share in its colour)");
  app.add_flag("--json", a.json,
               "print a JSON list, one object per local rank");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return dist_train::Run(a);
}
