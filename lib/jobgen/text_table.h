// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// Plain-text tables for terminals: gen-sbatch --list-sweep and --collect.

#ifndef DIST_TRAIN_LIB_JOBGEN_TEXT_TABLE_H_
#define DIST_TRAIN_LIB_JOBGEN_TEXT_TABLE_H_

#include <string>
#include <vector>

namespace dist_train {

// Rows (the first is the head) as lines with columns padded to their
// longest value, up to 40 characters: one long value must not pad every
// row of a large table. Two spaces between columns, no trailing blanks.
std::string AlignedTable(const std::vector<std::vector<std::string>>& rows);

// One CSV record (RFC 4180): a field with a comma, quote, CR or LF quoted,
// quotes doubled. Ends with "\n".
std::string CsvRecord(const std::vector<std::string>& fields);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_JOBGEN_TEXT_TABLE_H_
