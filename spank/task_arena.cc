// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "task_arena.h"

#include <cstddef>

namespace dist_train {

namespace {

constexpr size_t kAlign = alignof(std::max_align_t);

// Constant-initialized (constexpr constructor): ready before any static
// constructor of the plugin runs operator new.
alignas(64) char g_storage[256 << 10];
TaskArena g_arena(g_storage, sizeof(g_storage));

}  // namespace

void* TaskArena::Allocate(size_t n) {
  if (!on_) return nullptr;
  if (n > size_) return nullptr;
  size_t rounded = n == 0 ? kAlign : (n + kAlign - 1) & ~(kAlign - 1);
  if (rounded > size_ - used_) return nullptr;
  newest_ = used_;
  used_ += rounded;
  ++live_;
  return base_ + newest_;
}

bool TaskArena::Release(void* p) {
  if (!Owns(p)) return false;
  size_t offset = static_cast<size_t>(static_cast<char*>(p) - base_);
  if (live_ == 0) return true;  // not ours to judge: a stray release
  if (--live_ == 0) {
    used_ = 0;
    newest_ = kNone;
  } else if (offset == newest_) {
    used_ = newest_;
    newest_ = kNone;
  }
  return true;
}

TaskArena& PluginTaskArena() { return g_arena; }

}  // namespace dist_train
