// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "health/node_probe.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <vector>

#include "base/clock.h"
#include "base/parse.h"
#include "runtime/nccl_backend.h"

namespace dist_train {
namespace {

// Eight independent multiply-add chains, so the loop is bound by the
// core's FP throughput and not by one chain's latency.
double MultiplyAdds(long rounds, double seed) {
  double a[8];
  for (int i = 0; i < 8; ++i) a[i] = seed + i;
  const double m = 0.999999, c = 1e-7;
  for (long r = 0; r < rounds; ++r) {
    for (double& x : a) x = x * m + c;
  }
  double sum = 0;
  for (double x : a) sum += x;
  return sum;
}

std::string FirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  return line;
}

}  // namespace

double MeasureCpuRate(double seconds) {
  constexpr long kRounds = 1 << 16;  // 1 Mi multiply-adds, ~0.3 ms
  volatile double sink = 0;
  long chunks = 0;
  double start = MonotonicSeconds(), end = start;
  do {
    sink = sink + MultiplyAdds(kRounds, static_cast<double>(chunks));
    ++chunks;
    end = MonotonicSeconds();
  } while (end - start < seconds);
  return 2.0 * 8 * kRounds * chunks / (end - start) / 1e9;
}

double MeasureMemoryBandwidth(double seconds) {
  constexpr size_t kBytes = 32u << 20;  // well past any last-level cache
  std::vector<char> from(kBytes, 1), to(kBytes, 0);
  long copies = 0;
  double start = MonotonicSeconds(), end = start;
  do {
    memcpy(to.data(), from.data(), kBytes);
    from[copies % kBytes] = static_cast<char>(to[kBytes - 1 - copies % 7]);
    ++copies;
    end = MonotonicSeconds();
  } while (end - start < seconds);
  return 2.0 * kBytes * copies / (end - start) / 1e9;
}

int VisibleDeviceCount(const std::string* value) {
  if (value == nullptr) return -1;
  if (value->empty() || *value == "-1" || *value == "NoDevFiles") return 0;
  int n = 0;
  for (std::string_view part : Split(*value, ',')) n += part.empty() ? 0 : 1;
  return n;
}

Status ReadLink(const std::string& sys_class_net, const std::string& name,
                NodeProbe* probe) {
  std::string dir = sys_class_net + "/" + name;
  std::string state = FirstLine(dir + "/operstate");
  if (state.empty()) {
    return Status::NotFound("interface " + name + ": no " + dir + "/operstate");
  }
  probe->nic = name;
  probe->nic_state = state;
  probe->nic_up = state == "up" || state == "unknown";
  uint64_t speed = 0;
  // Virtual links have no speed (the read fails, or says -1).
  probe->nic_speed_mbps =
      ParseUint(FirstLine(dir + "/speed"), 1, 10000000, &speed)
          ? static_cast<int>(speed)
          : -1;
  return Status::OK();
}

std::string RouteInterface(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), "9", &hints, &res) != 0 || res == nullptr)
    return "";
  std::string name;
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in local{};
  socklen_t len = sizeof(local);
  bool routed = fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0 &&
                getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0;
  if (fd >= 0) close(fd);
  freeaddrinfo(res);
  ifaddrs* list = nullptr;
  if (!routed || getifaddrs(&list) != 0) return "";
  for (ifaddrs* a = list; a != nullptr && name.empty(); a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET) continue;
    auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
    if (in->sin_addr.s_addr == local.sin_addr.s_addr) name = a->ifa_name;
  }
  freeifaddrs(list);
  return name;
}

std::string NamedSocketInterface(const std::string* value) {
  if (value == nullptr) return "";
  std::string_view v = *value;
  if (!v.empty() && v[0] == '=') v.remove_prefix(1);
  if (v.empty() || v[0] == '^' || v.find(',') != std::string_view::npos)
    return "";
  return std::string(v);
}

NodeProbe ProbeNode(const EnvMap& env, double seconds) {
  NodeProbe p;
  char host[256] = "";
  gethostname(host, sizeof(host) - 1);
  const std::string* node = EnvFind(env, "SLURMD_NODENAME");
  p.host = node ? *node : host;
  p.gpus_expected = VisibleDeviceCount(EnvFind(env, "CUDA_VISIBLE_DEVICES"));
  if (NcclBackend::Compiled() || p.gpus_expected > 0)
    p.gpus_found = NcclBackend::DeviceCount();
  std::string nic = NamedSocketInterface(EnvFind(env, "NCCL_SOCKET_IFNAME"));
  const std::string* master = EnvFind(env, "MASTER_ADDR");
  if (nic.empty() && master != nullptr) nic = RouteInterface(*master);
  if (!nic.empty()) (void)ReadLink("/sys/class/net", nic, &p);
  p.cpu_gflops = MeasureCpuRate(seconds);
  p.mem_gbps = MeasureMemoryBandwidth(seconds);
  return p;
}

}  // namespace dist_train
