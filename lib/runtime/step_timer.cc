// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/step_timer.h"

#include <unistd.h>

#include <ctime>
#include <utility>

#include "runtime/checkpoint_files.h"

namespace dist_train {

std::string LiveRecordName(int rank) {
  return "rank-" + std::to_string(rank) + ".live";
}

StepTimer::StepTimer(const WatchdogOptions& options, pid_t worker,
                     const ProgressRecord* record, int dir_fd,
                     std::string step_dir)
    : options_(options),
      record_(record),
      dir_fd_(dir_fd),
      step_dir_(std::move(step_dir)),
      window_start_(SampleTiming(*record)),
      tracker_(options.straggler) {
  live_.rank = options.rank;
  live_.host = options.host;
  live_.pid = worker;
  live_.watchdog_seconds = options.seconds;
}

void StepTimer::Publish(const ProgressSnapshot& now, double idle, bool ended) {
  TimingSample sample = SampleTiming(*record_);
  StepWindow window;
  if (window_start_.steps == 0 || sample.steps < window_start_.steps) {
    // The first window starts after a step: not the start-up (rendezvous,
    // first loads). Steps count collectives until the first heartbeat,
    // heartbeats from then on: the count may fall, and starts again.
    window_start_ = sample;
  } else if (MeasureWindow(window_start_, sample, options_.window_steps,
                           &window)) {
    window_start_ = sample;
    live_.windows++;
    live_.compute_ms = window.compute_ms;
    live_.step_ms = window.step_ms;
  }
  live_.steps = sample.steps;
  live_.collectives = now.collectives;
  live_.idle_seconds = idle;
  live_.updated = time(nullptr);
  live_.ended = ended;
  WriteAtomically(dir_fd_, step_dir_, LiveRecordName(options_.rank),
                  EncodeLiveRecord(live_), /*durable=*/false)
      .ok();
}

std::vector<LiveRecord> StepTimer::ReadLive() const {
  std::vector<LiveRecord> out;
  for (int r = 0; r < options_.world_size; ++r) {
    std::string text, name = LiveRecordName(r);
    LiveRecord rec;
    if (ReadOwnFile(dir_fd_, name, name, 4095, &text).ok() &&
        DecodeLiveRecord(text, &rec) && rec.rank == r)
      out.push_back(rec);
  }
  return out;
}

void StepTimer::CheckStragglers() {
  std::string lines = tracker_.Update(ReadLive());
  if (lines.empty()) return;
  if (write(STDERR_FILENO, lines.data(), lines.size()) < 0) {
  }
  WriteAtomically(dir_fd_, step_dir_, "stragglers.txt", tracker_.NamedText())
      .ok();
}

}  // namespace dist_train
