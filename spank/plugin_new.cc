// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The plugin's operator new and delete: the task arena's while task_init
// turns it on (task_arena.h), malloc's otherwise. Linked into the plugin
// only, where the version script keeps them local: they serve the plugin's
// own code and its static libstdc++, never slurmstepd, and the unit tests
// (and their sanitizers) keep the standard ones. The aligned and nothrow
// forms stay libstdc++'s: those call these or pair malloc with free.

#include <cstdlib>
#include <new>

#include "task_arena.h"

namespace {

void* Take(std::size_t n) {
  if (void* p = dist_train::PluginTaskArena().Allocate(n)) return p;
  for (;;) {
    if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

void Give(void* p) noexcept {
  if (p != nullptr && !dist_train::PluginTaskArena().Release(p)) std::free(p);
}

}  // namespace

void* operator new(std::size_t n) { return Take(n); }
void* operator new[](std::size_t n) { return Take(n); }
void operator delete(void* p) noexcept { Give(p); }
void operator delete[](void* p) noexcept { Give(p); }
void operator delete(void* p, std::size_t /*n*/) noexcept { Give(p); }
void operator delete[](void* p, std::size_t /*n*/) noexcept { Give(p); }
