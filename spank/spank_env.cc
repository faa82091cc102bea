// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "spank_env.h"

#include <vector>

namespace dist_train {

bool GetEnv(spank_t sp, const char* name, std::string* out) {
  constexpr size_t kMaxEnvValue = 1 << 20;
  std::vector<char> buf(4096);
  for (;;) {
    spank_err_t rc =
        spank_getenv(sp, name, buf.data(), static_cast<int>(buf.size()));
    if (rc == ESPANK_SUCCESS) return *out = buf.data(), true;
    if (rc != ESPANK_NOSPACE || buf.size() >= kMaxEnvValue) return false;
    buf.resize(buf.size() * 4);
  }
}

}  // namespace dist_train
