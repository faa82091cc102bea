// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The table of every rank's data address ("host:port") that rank 0 sends
// each rank after the rendezvous, encoded with each host once: u32 host
// count, the hosts (u32 length + bytes, at most kMaxHostBytes each), then
// per rank u16 host index and u16 port. 4 bytes a rank instead of ~20: the
// table goes to every rank, so its size is n^2 (1,024 ranks on one
// machine: 20 MiB from rank 0, 0.27-0.30 s; now 4 MiB).
//
// The table comes over an authenticated connection, but nothing in it is
// trusted: a host index past the hosts, a port 0, a host that is not used,
// a length past the end or bytes left over are errors, never guesses.

#ifndef DIST_TRAIN_LIB_RUNTIME_ADDRESS_TABLE_H_
#define DIST_TRAIN_LIB_RUNTIME_ADDRESS_TABLE_H_

#include <cstddef>
#include <string>
#include <vector>

#include "dist_train/status.h"

namespace dist_train {

constexpr size_t kMaxHostBytes = 253;  // a DNS name; IPv4 text is shorter

// `addrs` ("host:port", port 1-65535, host at most kMaxHostBytes) into
// `table`; kInvalidArgument names the first address that is not one.
Status EncodeAddressTable(const std::vector<std::string>& addrs,
                          std::string* table);

// A table of exactly `ranks` addresses back into "host:port" strings.
Status DecodeAddressTable(const std::string& table, size_t ranks,
                          std::vector<std::string>* addrs);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_RUNTIME_ADDRESS_TABLE_H_
