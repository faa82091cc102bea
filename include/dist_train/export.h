// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// DT_EXPORT marks the public API: libdist-train.so is built with
// -fvisibility=hidden, so only what carries it is visible to programs.

#ifndef DIST_TRAIN_EXPORT_H_
#define DIST_TRAIN_EXPORT_H_

#define DT_EXPORT [[gnu::visibility("default")]]

#endif  // DIST_TRAIN_EXPORT_H_
