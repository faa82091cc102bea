// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/address_table.h"

#include <cstdint>
#include <string_view>
#include <unordered_map>

#include "base/coding.h"
#include "base/parse.h"

namespace dist_train {
namespace {

void PutU16(std::string* out, uint32_t v) {
  out->push_back(static_cast<char>((v >> 8) & 0xff));
  out->push_back(static_cast<char>(v & 0xff));
}

bool GetU16(const std::string& in, size_t* pos, uint32_t* v) {
  if (in.size() < *pos + 2) return false;
  *v = (uint32_t{static_cast<unsigned char>(in[*pos])} << 8) |
       static_cast<unsigned char>(in[*pos + 1]);
  *pos += 2;
  return true;
}

// What a host of ours looks like in text: an IPv4 address or a name,
// printable, without spaces or colons.
bool HostText(const std::string& h) {
  for (char c : h)
    if (c <= 0x20 || c >= 0x7f || c == ':') return false;
  return !h.empty();
}

Status Malformed(const std::string& why) {
  return Status::Internal("rank 0 sent a malformed address table: " + why);
}

}  // namespace

Status EncodeAddressTable(const std::vector<std::string>& addrs,
                          std::string* table) {
  std::vector<std::string> hosts;
  std::unordered_map<std::string, uint32_t> index;
  std::string entries;
  for (size_t r = 0; r < addrs.size(); ++r) {
    const std::string& a = addrs[r];
    const size_t colon = a.rfind(':');
    uint64_t port = 0;
    if (colon == std::string::npos || !HostText(a.substr(0, colon)) ||
        colon > kMaxHostBytes ||
        !ParseUint(std::string_view(a).substr(colon + 1), 1, 65535, &port)) {
      return Status::InvalidArgument("rank " + std::to_string(r) +
                                     "'s data address '" + a +
                                     "' is not host:port");
    }
    auto [it, fresh] = index.emplace(a.substr(0, colon), hosts.size());
    if (fresh) hosts.push_back(it->first);
    if (hosts.size() > 65535)
      return Status::InvalidArgument("more than 65,535 hosts");
    PutU16(&entries, it->second);
    PutU16(&entries, static_cast<uint32_t>(port));
  }
  table->clear();
  PutU32(table, static_cast<uint32_t>(hosts.size()));
  for (const std::string& h : hosts) PutString(table, h);
  *table += entries;
  return Status::OK();
}

Status DecodeAddressTable(const std::string& table, size_t ranks,
                          std::vector<std::string>* addrs) {
  size_t pos = 0;
  uint32_t count = 0;
  if (!GetU32(table, &pos, &count)) return Malformed("no host count");
  if (count == 0 || count > ranks)
    return Malformed(std::to_string(count) + " hosts for " +
                     std::to_string(ranks) + " ranks");
  std::vector<std::string> hosts(count);
  for (std::string& h : hosts) {
    if (!GetString(table, &pos, kMaxHostBytes, &h))
      return Malformed("a host name that is too long or cut short");
    if (!HostText(h))
      return Malformed("a host name that is empty or not printable text");
  }
  if (table.size() - pos != 4 * ranks)
    return Malformed(std::to_string(table.size() - pos) +
                     " bytes of entries for " + std::to_string(ranks) +
                     " ranks");
  std::vector<bool> used(count, false);
  addrs->assign(ranks, "");
  for (size_t r = 0; r < ranks; ++r) {
    uint32_t host = 0, port = 0;
    GetU16(table, &pos, &host);
    GetU16(table, &pos, &port);
    if (host >= count || port == 0)
      return Malformed("rank " + std::to_string(r) + " has host " +
                       std::to_string(host) + " of " + std::to_string(count) +
                       ", port " + std::to_string(port));
    used[host] = true;
    (*addrs)[r] = hosts[host] + ":" + std::to_string(port);
  }
  for (uint32_t h = 0; h < count; ++h)
    if (!used[h]) return Malformed("host '" + hosts[h] + "' has no rank");
  return Status::OK();
}

}  // namespace dist_train
