// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "base/coding.h"

namespace dist_train {

void PutU32(std::string* out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out->push_back(static_cast<char>((v >> shift) & 0xff));
}

void PutString(std::string* out, const std::string& s) {
  PutU32(out, static_cast<uint32_t>(s.size()));
  *out += s;
}

bool GetU32(const std::string& in, size_t* pos, uint32_t* v) {
  if (in.size() < *pos + 4) return false;
  *v = 0;
  for (int i = 0; i < 4; ++i)
    *v = (*v << 8) | static_cast<unsigned char>(in[(*pos)++]);
  return true;
}

bool GetString(const std::string& in, size_t* pos, size_t max, std::string* s) {
  uint32_t len = 0;
  if (!GetU32(in, pos, &len) || len > max || in.size() < *pos + len)
    return false;
  *s = in.substr(*pos, len);
  *pos += len;
  return true;
}

}  // namespace dist_train
