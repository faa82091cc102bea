// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "base/hostlist.h"

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "base/hostlist_handle.h"
#include "base/parse.h"

namespace dist_train {
namespace {

Status Malformed(std::string_view nodelist, const char* what) {
  return Status::InvalidArgument(std::string(what) + "='" +
                                 ShownValue(nodelist) +
                                 "' is not a valid Slurm node list");
}

// Saturating at kMaxHosts + 1: only "over the cap" matters past it.
uint64_t CapAdd(uint64_t a, uint64_t b) {
  return b > kMaxHosts + 1 - std::min(a, kMaxHosts + 1) ? kMaxHosts + 1 : a + b;
}
uint64_t CapMul(uint64_t a, uint64_t b) {
  return (b != 0 && a > (kMaxHosts + 1) / b) ? kMaxHosts + 1 : a * b;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// libslurm reads every number with strtoul and keeps ULONG_MAX on overflow:
// "node99999999999999999999" became host "node18446744073709551615".
bool NumbersFit(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    size_t j = i;
    while (j < text.size() && IsDigit(text[j])) ++j;
    uint64_t ignored = 0;
    if (j > i && !ParseUint(text.substr(i, j - i), 0, UINT64_MAX, &ignored))
      return false;
    i = j + 1;
  }
  return true;
}

// The hosts in the inside of one bracket group, "1-4,7": false when an
// item is not a number or an ascending range of numbers.
bool GroupSize(std::string_view group, uint64_t* size) {
  *size = 0;
  for (std::string_view item : Split(group, ',')) {
    size_t dash = item.find('-');
    uint64_t lo = 0, hi = 0;
    if (!ParseUint(item.substr(0, dash), 0, UINT64_MAX, &lo)) return false;
    hi = lo;
    if (dash != std::string_view::npos &&
        !ParseUint(item.substr(dash + 1), lo, UINT64_MAX, &hi))
      return false;
    *size = CapAdd(*size, std::min<uint64_t>(hi - lo, kMaxHosts) + 1);
  }
  return true;
}

// The hosts one name stands for: the product of its bracket groups
// ("n[1-3]x[1-2]" is 6 hosts; libslurm expands it as such). False for
// unbalanced or nested brackets, which libslurm partly accepts ("node[1-"
// expands to "node]").
bool NameSize(std::string_view name, uint64_t* size) {
  *size = name.empty() ? 0 : 1;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == ']') return false;
    if (name[i] != '[') continue;
    size_t close = name.find_first_of("[]", i + 1);
    if (close == std::string_view::npos || name[close] != ']') return false;
    uint64_t group = 0;
    if (!GroupSize(name.substr(i + 1, close - i - 1), &group)) return false;
    *size = CapMul(*size, group);
    i = close;
  }
  return true;
}

}  // namespace

bool CountHosts(std::string_view nodelist, uint64_t* count) {
  if (!NumbersFit(nodelist)) return false;
  uint64_t total = 0;
  size_t start = 0;
  bool in_group = false;
  for (size_t i = 0; i <= nodelist.size(); ++i) {
    char c = i < nodelist.size() ? nodelist[i] : ',';
    if (c == '[') in_group = true;
    if (c == ']') in_group = false;
    // libslurm separates names by blanks, but keeps a newline or any other
    // control byte inside a name (so "a[1-9]\nb[1-9]" expands as a product):
    // no node name has one.
    bool blank = c == ' ' || c == '\t';
    if ((!blank && static_cast<unsigned char>(c) < 0x20) || c == 0x7f)
      return false;
    if (in_group && blank) return false;
    if (in_group || (c != ',' && !blank)) continue;
    uint64_t size = 0;
    if (!NameSize(nodelist.substr(start, i - start), &size)) return false;
    total = CapAdd(total, size);
    start = i + 1;
  }
  *count = total;
  return !in_group;
}

namespace {

// The checks both share, then libslurm's list.
Status OpenList(std::string_view nodelist, const char* what, HostlistPtr* hl) {
  uint64_t expected = 0;
  if (nodelist.empty() || !CountHosts(nodelist, &expected)) {
    return Malformed(nodelist, what);
  }
  if (expected > kMaxHosts) {
    return Status::InvalidArgument(
        std::string(what) + "='" + ShownValue(nodelist) + "' names more than " +
        std::to_string(kMaxHosts) + " hosts (the cap)");
  }
  std::string copy(nodelist);
  hl->reset(slurm_hostlist_create(copy.c_str()));
  if (!*hl) return Malformed(nodelist, what);
  return Status::OK();
}

}  // namespace

Status FirstHost(std::string_view nodelist, const char* what,
                 std::string* first, int* count) {
  HostlistPtr hl;
  DT_RETURN_IF_ERROR(OpenList(nodelist, what, &hl));
  int n = slurm_hostlist_count(hl.get());
  char* host = slurm_hostlist_shift(hl.get());
  if (n <= 0 || host == nullptr || *host == '\0') {
    free(host);
    return Malformed(nodelist, what);
  }
  *first = host;
  *count = n;
  free(host);
  return Status::OK();
}

Status ExpandHosts(std::string_view nodelist, const char* what,
                   std::vector<std::string>* hosts) {
  HostlistPtr hl;
  DT_RETURN_IF_ERROR(OpenList(nodelist, what, &hl));
  std::vector<std::string> out;
  while (char* host = slurm_hostlist_shift(hl.get())) {
    bool empty = *host == '\0';
    if (!empty) out.emplace_back(host);
    free(host);
    if (empty) return Malformed(nodelist, what);
  }
  if (out.empty()) return Malformed(nodelist, what);
  *hosts = std::move(out);
  return Status::OK();
}

}  // namespace dist_train
