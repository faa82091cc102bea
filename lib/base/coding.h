// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Appending and reading integers and strings in network byte order, for
// the runtime's wire messages and the checkpoint header.

#ifndef DIST_TRAIN_LIB_BASE_CODING_H_
#define DIST_TRAIN_LIB_BASE_CODING_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace dist_train {

void PutU32(std::string* out, uint32_t v);
void PutString(std::string* out, const std::string& s);
// False (and *pos unchanged in meaning) when `in` is too short from *pos.
bool GetU32(const std::string& in, size_t* pos, uint32_t* v);
// A PutString value of at most `max` bytes.
bool GetString(const std::string& in, size_t* pos, size_t max, std::string* s);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_BASE_CODING_H_
