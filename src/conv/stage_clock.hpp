// Stage timing of executes (Plan::set_profiling): per-thread accumulators of the time spent in each
// stage, and the lap clock a task uses to charge its work to them. Internal to src/conv.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>

namespace nova::conv {

enum class Stage : int { kPack, kScales, kInput, kConvert, kGemm, kOutput, kDirect, kCount };
inline constexpr int kStageCount = static_cast<int>(Stage::kCount);

// One thread's nanoseconds per stage, a cache line (or two) of its own so that threads do not share lines.
struct alignas(64) StageNs {
  std::array<int64_t, kStageCount> ns{};
};

// A task's clock: started when made, each lap(stage) charges the time since the last lap (or the start)
// to that stage of its thread. A null accumulator (profiling off) makes every call a test and return.
class StageLaps {
 public:
  explicit StageLaps(StageNs* acc) : acc_(acc) {
    if (acc_ != nullptr) last_ = now();
  }
  void lap(Stage stage) {
    if (acc_ == nullptr) return;
    const int64_t t = now();
    acc_->ns[static_cast<std::size_t>(stage)] += t - last_;
    last_ = t;
  }

 private:
  static int64_t now() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  StageNs* acc_;
  int64_t last_ = 0;
};

}  // namespace nova::conv
