// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The runtime's two uses of OpenSSL, HMAC-SHA256 and random bytes, from a
// library context of its own. OpenSSL's default context, on first use,
// reads the system's openssl.cnf and builds its table of every legacy
// algorithm name: about 0.6 ms of CPU in every rank's start (measured on a
// 2-CPU VM with perf stat, one HMAC in a fresh process: 2.49 ms against
// 1.92), which 1,024 ranks on one machine pay 1,024 times. A context of our
// own skips the legacy names and leaves the program's default context (and
// whatever it configured) alone. Both calls fail closed: no MAC and no
// random bytes mean an error, never an empty MAC or a zero nonce.

#ifndef DIST_TRAIN_LIB_RUNTIME_CRYPTO_H_
#define DIST_TRAIN_LIB_RUNTIME_CRYPTO_H_

#include <cstddef>
#include <string>

namespace dist_train {

// HMAC-SHA256(key, data), 32 bytes; "" when OpenSSL failed.
std::string Mac(const std::string& key, const std::string& data);

// Fills buf with n bytes from OpenSSL's DRBG; false when it failed.
bool RandomBytes(void* buf, size_t n);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_RUNTIME_CRYPTO_H_
