// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "binding/interfaces.h"

#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace dist_train {
namespace {

bool HasUsableAddress(const struct sockaddr* addr) {
  if (addr == nullptr) return false;
  if (addr->sa_family == AF_INET) return true;
  if (addr->sa_family != AF_INET6) return false;
  // A link-local address cannot reach another node's interface by itself.
  const auto* v6 = reinterpret_cast<const struct sockaddr_in6*>(addr);
  return !IN6_IS_ADDR_LINKLOCAL(&v6->sin6_addr);
}

}  // namespace

std::vector<std::string> SocketInterfaces(const struct ifaddrs* list) {
  std::vector<std::string> names;
  for (const struct ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_name == nullptr || (i->ifa_flags & IFF_UP) == 0 ||
        (i->ifa_flags & IFF_LOOPBACK) != 0 || !HasUsableAddress(i->ifa_addr))
      continue;
    if (std::find(names.begin(), names.end(), i->ifa_name) == names.end())
      names.emplace_back(i->ifa_name);
  }
  return names;
}

Status LiveSocketInterfaces(std::vector<std::string>* names) {
  struct ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) {
    return Status::IOError(std::string("cannot list network interfaces: ") +
                           strerror(errno));
  }
  *names = SocketInterfaces(list);
  freeifaddrs(list);
  return Status::OK();
}

}  // namespace dist_train
