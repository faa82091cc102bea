// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/crypto.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

namespace dist_train {
namespace {

// Made once per process, on first use (a function-local static: thread
// safe), never freed (ranks may authenticate until exit).
OSSL_LIB_CTX* Context() {
  static OSSL_LIB_CTX* const ctx = OSSL_LIB_CTX_new();
  return ctx;
}

EVP_MAC* Hmac() {
  static EVP_MAC* const mac =
      Context() ? EVP_MAC_fetch(Context(), "HMAC", nullptr) : nullptr;
  return mac;
}

}  // namespace

std::string Mac(const std::string& key, const std::string& data) {
  EVP_MAC_CTX* ctx = Hmac() ? EVP_MAC_CTX_new(Hmac()) : nullptr;
  if (!ctx) return "";
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_end()};
  unsigned char out[EVP_MAX_MD_SIZE];
  size_t len = 0;
  bool ok =
      EVP_MAC_init(ctx, reinterpret_cast<const unsigned char*>(key.data()),
                   key.size(), params) == 1 &&
      EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(data.data()),
                     data.size()) == 1 &&
      EVP_MAC_final(ctx, out, &len, sizeof(out)) == 1;
  EVP_MAC_CTX_free(ctx);
  return ok ? std::string(reinterpret_cast<char*>(out), len) : "";
}

bool RandomBytes(void* buf, size_t n) {
  return Context() &&
         RAND_bytes_ex(Context(), static_cast<unsigned char*>(buf), n, 0) == 1;
}

}  // namespace dist_train
