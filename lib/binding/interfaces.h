// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The node's network interfaces that sockets can use: up, not loopback,
// with an IPv4 or a global IPv6 address. NCCL_SOCKET_IFNAME and
// GLOO_SOCKET_IFNAME name the rank's NIC only when its interface is one of
// these (an InfiniBand port without IPoIB, or a NIC outside the task's
// network namespace, would make NCCL's bootstrap and Gloo fail).

#ifndef DIST_TRAIN_LIB_BINDING_INTERFACES_H_
#define DIST_TRAIN_LIB_BINDING_INTERFACES_H_

#include <ifaddrs.h>

#include <string>
#include <vector>

#include "dist_train/status.h"

namespace dist_train {

// The names in `list` (getifaddrs' chain) that sockets can use, each once,
// in the order first seen (pure).
std::vector<std::string> SocketInterfaces(const struct ifaddrs* list);

// The same, of this process's network namespace.
Status LiveSocketInterfaces(std::vector<std::string>* names);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_BINDING_INTERFACES_H_
