// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/shm_segment.h"

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <vector>

namespace dist_train {
namespace {

TEST(ShmSegmentTest, OthersMapWhatTheLeaderMadeAndNothingIsLeft) {
  ShmSegment made, mapped, wrong;
  std::string name;
  ASSERT_TRUE(made.Create(3, 4096, &name).ok());
  EXPECT_EQ(name.size(), 20u);  // "/dt-" + 16 hex digits
  EXPECT_NE(name, ShmSegment::RandomName());
  ASSERT_TRUE(mapped.Open(name, 3, 4096).ok());
  std::memcpy(made.slot(1, 2), "hello", 6);
  EXPECT_STREQ(mapped.slot(1, 2), "hello");
  made.wake()->store(7);
  EXPECT_EQ(mapped.wake()->load(), 7u);
  // a segment of another size is not taken for ours
  EXPECT_EQ(wrong.Open(name, 4, 4096).code(), Status::Code::kPermissionDenied);
  made.Unlink();
  EXPECT_EQ(wrong.Open(name, 3, 4096).code(), Status::Code::kIOError);
  // a name that exists is never reused
  ShmSegment again, twice;
  ASSERT_TRUE(again.CreateNamed(name + ".0", 2, 4096).ok());
  EXPECT_FALSE(twice.CreateNamed(name + ".0", 2, 4096).ok());
  again.Unlink();
}

TEST(ShmSegmentTest, EveryLineSlotAndWordHasItsOwnBytes) {
  const int ranks = 3;
  const size_t chunk = 4096;
  ShmSegment seg;
  std::string name;
  ASSERT_TRUE(seg.Create(ranks, chunk, &name).ok());
  // Every byte written once, by whichever part owns it; a second owner
  // (two parts overlapping) or a part outside the segment fails.
  std::vector<int> owner(ShmSegment::Bytes(ranks, chunk), -1);
  const char* base = reinterpret_cast<char*>(seg.tag(0, 0));  // first
  int part = 0;
  auto claim = [&](const void* p, size_t len) {
    size_t at = static_cast<const char*>(p) - base;
    ASSERT_LE(at + len, owner.size()) << "part " << part;
    for (size_t i = at; i < at + len; ++i) {
      ASSERT_EQ(owner[i], -1) << "part " << part << " byte " << i;
      owner[i] = part;
    }
    ++part;
  };
  for (int r = 0; r < ranks; ++r) {
    for (int set = 0; set < 2; ++set) {
      std::atomic<uint64_t>* tag = seg.tag(r, set);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(tag) % 64, 0u);  // own line
      claim(tag, sizeof(*tag));
      claim(seg.line_payload(r, set), ShmSegment::kLinePayload);
      claim(seg.slot(set, r), chunk);
    }
  }
  claim(seg.wake(), sizeof(uint32_t));
  claim(seg.sleepers(), sizeof(uint32_t));
  for (int set = 0; set < 2; ++set) claim(seg.result(set), chunk);
}

// Runs `fn` in a child as user and group 65534 (nobody); its exit status.
int AsNobody(const std::function<int()>& fn) {
  pid_t pid = fork();
  if (pid == 0) {
    if (setgroups(0, nullptr) != 0 || setresgid(65534, 65534, 65534) != 0 ||
        setresuid(65534, 65534, 65534) != 0)
      _exit(99);
    _exit(fn());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(ShmSegmentTest, AnotherUserCanNeitherMapNorReadTheSegment) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to act as a second user";
  ShmSegment made;
  std::string name;
  ASSERT_TRUE(made.Create(2, 4096, &name).ok());
  std::memcpy(made.slot(0, 0), "secret", 7);
  // 1: opened for reading, 2: for writing; 0: refused both ways.
  EXPECT_EQ(AsNobody([name] {
              int r = shm_open(name.c_str(), O_RDONLY, 0);
              if (r >= 0 || errno != EACCES) return 1;
              int w = shm_open(name.c_str(), O_RDWR, 0);
              return w >= 0 || errno != EACCES ? 2 : 0;
            }),
            0);
  EXPECT_STREQ(made.slot(0, 0), "secret");
}

TEST(ShmSegmentTest, ANameSomeoneElseTookIsNeverUsed) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to act as a second user";
  // The squatter makes a segment of the right size, open to everyone,
  // under the name the job is about to use.
  const std::string name = ShmSegment::RandomName();
  const size_t bytes = ShmSegment::Bytes(2, 4096);
  ASSERT_EQ(AsNobody([&] {
              int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0666);
              if (fd < 0 || fchmod(fd, 0666) != 0) return 1;
              return ftruncate(fd, static_cast<off_t>(bytes)) == 0 ? 0 : 2;
            }),
            0);
  ShmSegment leader, other;
  EXPECT_EQ(leader.CreateNamed(name, 2, 4096).message(),
            "shm_open " + name + ": File exists");
  EXPECT_FALSE(leader.mapped());
  EXPECT_EQ(other.Open(name, 2, 4096).message(),
            name + " is not this job's segment");
  // Ours, but someone opened it up: not taken either.
  ShmSegment opened, again;
  std::string ours;
  ASSERT_TRUE(opened.Create(2, 4096, &ours).ok());
  ASSERT_EQ(chmod(("/dev/shm" + ours).c_str(), 0666), 0);
  EXPECT_EQ(again.Open(ours, 2, 4096).message(),
            ours + " is not this job's segment");
  shm_unlink(name.c_str());
}

}  // namespace
}  // namespace dist_train
