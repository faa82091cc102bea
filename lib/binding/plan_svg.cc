// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "binding/plan_svg.h"

#include <algorithm>
#include <cstdio>

#include "binding/binding_env.h"
#include "binding/plan_report.h"

namespace dist_train {
namespace {

// Tableau 10 and two more: distinct for up to 12 ranks, then repeated.
constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                    "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
                                    "#9c755f", "#bab0ac", "#86bcb6", "#d37295"};
constexpr const char* kUnplanned = "#d9d9d9";

// Box sizes (px). Text is 11 px monospace: about 6.7 px per character.
constexpr int kDevW = 200, kDevH = 36, kBoxW = 220, kGap = 10;
constexpr size_t kDevChars = 28, kBoxChars = 30;

const char* Colour(uint32_t rank) { return kPalette[rank % 12]; }

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Clip(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(0, n - 3) + "...";
}

std::string Num(int v) { return std::to_string(v); }

std::string Rect(const char* cls, int x, int y, int w, int h,
                 const std::string& fill, const std::string& extra = "") {
  return "<rect class=\"" + std::string(cls) + "\" x=\"" + Num(x) + "\" y=\"" +
         Num(y) + "\" width=\"" + Num(w) + "\" height=\"" + Num(h) +
         "\" fill=\"" + fill + "\"" + extra + "/>\n";
}

std::string Text(int x, int y, const std::string& text,
                 const std::string& extra = "") {
  return "<text x=\"" + Num(x) + "\" y=\"" + Num(y) + "\"" + extra + ">" +
         Escape(text) + "</text>\n";
}

// A device drawn in a switch box: a GPU or a NIC, by model index.
struct Device {
  bool gpu = false;
  int index = 0;
};

struct SwitchBox {
  uint64_t key = 0;
  std::string kind;  // "PCIe switch", "host bridge", "PCI bus"
  std::vector<Device> devices;
};

// One package (or, for what has no CPU locality, the machine).
struct Column {
  std::string label;
  std::vector<int> pus;
  std::vector<int> numa;  // indexes into NodeModel::numa
  std::vector<SwitchBox> switches;
};

// The topmost PCIe switch below the device's host bridge, else the host
// bridge, else its parent: devices with the same key are drawn together.
uint64_t SwitchKey(const PciDevice& d, std::string* kind) {
  auto host =
      std::find(d.path_kinds.begin(), d.path_kinds.end(), "host bridge");
  size_t h = static_cast<size_t>(host - d.path_kinds.begin());
  if (host != d.path_kinds.end() && h < d.path.size()) {
    if (h >= 2 && d.path_kinds[h - 1] == "PCIe switch") {
      *kind = "PCIe switch";
      return d.path[h - 1];
    }
    *kind = "host bridge";
    return d.path[h];
  }
  *kind = "PCI bus";
  return d.path.size() > 1 ? d.path[1] : 0;
}

// The column whose PUs include the first of `pus`; the last column (the
// machine) when none does.
size_t ColumnOf(const std::vector<Column>& cols, const std::vector<int>& pus) {
  for (size_t c = 0; c + 1 < cols.size(); ++c) {
    if (!Intersect(pus, cols[c].pus).empty()) return c;
  }
  return cols.size() - 1;
}

void AddDevice(const PciDevice& d, Device dev, Column* col) {
  std::string kind;
  uint64_t key = SwitchKey(d, &kind);
  for (SwitchBox& s : col->switches) {
    if (s.key == key) {
      s.devices.push_back(dev);
      return;
    }
  }
  col->switches.push_back({key, kind, {dev}});
}

std::vector<Column> Columns(const NodeModel& m) {
  std::vector<Column> cols;
  for (const Package& p : m.packages)
    cols.push_back({"Package " + Num(p.os_index), p.pus, {}, {}});
  cols.push_back({"Machine (no CPU locality)", {}, {}, {}});
  if (m.packages.empty()) cols.back().label = "Machine";
  for (size_t i = 0; i < m.numa.size(); ++i)
    cols[ColumnOf(cols, m.numa[i].pus)].numa.push_back(static_cast<int>(i));
  for (size_t i = 0; i < m.gpus.size(); ++i) {
    AddDevice(m.gpus[i], {true, static_cast<int>(i)},
              &cols[ColumnOf(cols, m.gpus[i].local_pus)]);
  }
  for (size_t i = 0; i < m.nics.size(); ++i) {
    AddDevice(m.nics[i], {false, static_cast<int>(i)},
              &cols[ColumnOf(cols, m.nics[i].local_pus)]);
  }
  if (cols.size() > 1 && cols.back().numa.empty() &&
      cols.back().switches.empty()) {
    cols.pop_back();
  }
  return cols;
}

// Who uses what: the rank of each GPU (-1: none), the ranks of each NIC.
struct Owners {
  std::vector<int> gpu;
  std::vector<std::vector<int>> nic;
};

Owners OwnersOf(const NodeModel& m, const BindPlan& plan) {
  Owners o{std::vector<int>(m.gpus.size(), -1),
           std::vector<std::vector<int>>(m.nics.size())};
  for (const RankPlan& r : plan.ranks) {
    for (int g : RankGpus(r)) o.gpu[g] = static_cast<int>(r.local_rank);
    std::vector<int> nics = r.nics;
    if (nics.empty() && r.nic >= 0) nics.push_back(r.nic);
    for (int n : nics) o.nic[n].push_back(static_cast<int>(r.local_rank));
  }
  return o;
}

std::string RankName(const RankPlan& r) {
  return r.rank < 0 ? "local rank " + Num(static_cast<int>(r.local_rank))
                    : "rank " + std::to_string(r.rank);
}

// The ranks of these local ranks: global numbers when all are known.
std::string Ranks(const BindPlan& plan, const std::vector<int>& local) {
  if (local.empty()) return "no rank";
  std::vector<int> global;
  for (int l : local) {
    if (plan.ranks[l].rank < 0) break;
    global.push_back(static_cast<int>(plan.ranks[l].rank));
  }
  bool known = global.size() == local.size();
  std::sort(global.begin(), global.end());
  return std::string(known ? "rank" : "local rank") +
         (local.size() > 1 ? "s " : " ") +
         FormatIndexList(known ? global : local);
}

std::string NicNames(const NodeModel& m, const RankPlan& r) {
  std::vector<int> nics = r.nics;
  if (nics.empty() && r.nic >= 0) nics.push_back(r.nic);
  std::string out;
  for (int n : nics) out += (out.empty() ? "" : ",") + NicName(m.nics[n]);
  return out.empty() ? "-" : out;
}

// A drawing in progress: the SVG body and how far down it reached.
struct Canvas {
  std::string body;
  int bottom = 0;
};

int DrawDevice(const NodeModel& m, const BindPlan& plan, const Owners& o,
               Device d, int x, int y, Canvas* c) {
  std::string line1, line2, fill = kUnplanned, data;
  if (d.gpu) {
    int owner = o.gpu[d.index];
    line1 = "GPU " + Num(d.index) + "  " +
            (owner < 0 ? "in no plan" : RankName(plan.ranks[owner]));
    RankPlan probe;
    probe.gpu = d.index;
    line2 = GpuModel(m, probe);
    if (owner >= 0) fill = Colour(static_cast<uint32_t>(owner));
    data = " data-gpu=\"" + Num(d.index) + "\"" +
           (owner < 0 ? "" : " data-rank=\"" + Num(owner) + "\"");
  } else {
    const PciDevice& n = m.nics[d.index];
    line1 = "NIC " + NicName(n);
    const std::vector<int>& users = o.nic[d.index];
    line2 = Ranks(plan, users);
    if (!users.empty()) fill = Colour(static_cast<uint32_t>(users[0]));
    data = " data-ranks=\"" + FormatIndexList(users) + "\"";
  }
  c->body += Rect(d.gpu ? "gpu" : "nic", x, y, kDevW, kDevH, fill,
                  " fill-opacity=\"0.45\" stroke=\"#333\"" + data);
  c->body += Text(x + 6, y + 15, Clip(line1, kDevChars));
  c->body += Text(x + 6, y + 29, Clip(line2, kDevChars));
  return y + kDevH + 6;
}

int SwitchHeight(const SwitchBox& s) {
  return 24 + static_cast<int>(s.devices.size()) * (kDevH + 6);
}

void DrawSwitch(const NodeModel& m, const BindPlan& plan, const Owners& o,
                const SwitchBox& s, int x, int y, int h, Canvas* c) {
  c->body += Rect("switch", x, y, kBoxW, h, "#f7f7f7", " stroke=\"#999\"");
  c->body += Text(x + 6, y + 15, s.kind);
  int dy = y + 22;
  for (Device d : s.devices) dy = DrawDevice(m, plan, o, d, x + 10, dy, c);
}

// The CPU share of each rank in this NUMA node, one line each.
std::vector<std::pair<uint32_t, std::vector<int>>> Shares(
    const BindPlan& plan, const NumaNode& numa) {
  std::vector<std::pair<uint32_t, std::vector<int>>> out;
  for (const RankPlan& r : plan.ranks) {
    std::vector<int> mine = Intersect(r.cpus, numa.pus);
    if (!mine.empty()) out.push_back({r.local_rank, mine});
  }
  return out;
}

int NumaHeight(const BindPlan& plan, const NumaNode& numa) {
  return 26 + static_cast<int>(Shares(plan, numa).size()) * 16;
}

void DrawNuma(const BindPlan& plan, const NumaNode& numa, int x, int y, int h,
              Canvas* c) {
  c->body += Rect("numa", x, y, kBoxW, h, "#eef3f8", " stroke=\"#999\"");
  c->body += Text(
      x + 6, y + 15,
      Clip("NUMA " + Num(numa.os_index) + ": CPUs " + FormatIndexList(numa.pus),
           kBoxChars));
  int dy = y + 22;
  for (const auto& [local, cpus] : Shares(plan, numa)) {
    c->body += Rect("cpus", x + 6, dy, 10, 10, Colour(local),
                    " data-rank=\"" + Num(static_cast<int>(local)) + "\"");
    c->body +=
        Text(x + 22, dy + 9,
             Clip(RankName(plan.ranks[local]) + ": " + FormatIndexList(cpus),
                  kBoxChars - 3));
    dy += 16;
  }
}

// One column: its frame, its NUMA nodes in a row, its switches below in
// rows of at most kAcross.
constexpr size_t kAcross = 4;

int DrawColumn(const NodeModel& m, const BindPlan& plan, const Owners& o,
               const Column& col, int x, int y, Canvas* c) {
  size_t across = std::min(
      kAcross, std::max({col.numa.size(), col.switches.size(), size_t{1}}));
  across = std::max(across, col.numa.size());
  int w = static_cast<int>(across) * (kBoxW + kGap) + kGap;
  int numa_h = 0;
  for (int i : col.numa) numa_h = std::max(numa_h, NumaHeight(plan, m.numa[i]));
  size_t frame = c->body.size();
  int bx = x + kGap;
  for (int i : col.numa) {
    DrawNuma(plan, m.numa[i], bx, y + 26, numa_h, c);
    bx += kBoxW + kGap;
  }
  int sy = y + 26 + numa_h + (numa_h > 0 ? kGap : 0);
  for (size_t first = 0; first < col.switches.size(); first += kAcross) {
    size_t last = std::min(first + kAcross, col.switches.size());
    int row_h = 0;
    for (size_t i = first; i < last; ++i)
      row_h = std::max(row_h, SwitchHeight(col.switches[i]));
    bx = x + kGap;
    for (size_t i = first; i < last; ++i) {
      DrawSwitch(m, plan, o, col.switches[i], bx, sy, row_h, c);
      bx += kBoxW + kGap;
    }
    sy += row_h + kGap;
  }
  int h = sy - y;
  // The frame goes first, under its contents.
  c->body.insert(frame,
                 Rect("package", x, y, w, h, "#ffffff", " stroke=\"#555\"") +
                     Text(x + 8, y + 18, col.label, " font-weight=\"bold\""));
  c->bottom = std::max(c->bottom, y + h);
  return x + w + 2 * kGap;
}

// One line per rank: its colour, GPUs, NICs and CPUs.
int DrawLegend(const NodeModel& m, const BindPlan& plan, int y, Canvas* c) {
  size_t longest = 0;
  for (const RankPlan& r : plan.ranks) {
    std::string gpus = FormatIndexList(RankGpus(r));
    std::string line =
        RankName(r) + " (local " + Num(static_cast<int>(r.local_rank)) +
        "): GPU " + (gpus.empty() ? "-" : gpus) + ", NIC " + NicNames(m, r) +
        ", CPUs " + (r.cpus.empty() ? "not bound" : FormatIndexList(r.cpus));
    c->body += "<g class=\"legend-row\" data-rank=\"" +
               Num(static_cast<int>(r.local_rank)) + "\">\n";
    c->body += Rect("swatch", 10, y, 12, 12, Colour(r.local_rank));
    c->body += Text(30, y + 10, line);
    c->body += "</g>\n";
    longest = std::max(longest, line.size());
    y += 18;
  }
  c->bottom = y;
  return 40 + static_cast<int>(longest * 7);
}

}  // namespace

std::string PlanSvg(const NodeModel& model, const BindPlan& plan,
                    const std::string& title) {
  Owners owners = OwnersOf(model, plan);
  Canvas c;
  c.body += Text(10, 20, title, " font-weight=\"bold\"");
  int x = 10;
  for (const Column& col : Columns(model))
    x = DrawColumn(model, plan, owners, col, x, 32, &c);
  int legend_w = DrawLegend(model, plan, c.bottom + 20, &c);
  int width = std::max({x, legend_w, 40 + static_cast<int>(title.size()) * 7});
  int height = c.bottom + 10;
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(width) +
         "\" height=\"" + Num(height) + "\" viewBox=\"0 0 " + Num(width) + " " +
         Num(height) +
         "\" font-family=\"DejaVu Sans Mono, monospace\" font-size=\"11\">\n" +
         Rect("background", 0, 0, width, height, "#ffffff") + c.body +
         "</svg>\n";
}

}  // namespace dist_train
