#include "fold/perfview_gaps.h"

#include <algorithm>

namespace profcpu::fold {

uint64_t PerfViewSampleSpacingNs(const recording::Header& header) {
  constexpr uint64_t kOneMs = 1000000;
  if (header.sample_rate == 0) return kOneMs;
  if (header.frequency_mode) return std::max<uint64_t>(1, 1000000000 / header.sample_rate);
  if (header.event_name == "cpu-clock" || header.event_name == "task-clock") {
    return header.sample_rate;
  }
  return kOneMs;
}

void PerfViewGaps::TakeUntil(uint64_t time_ns, std::vector<GapFiller>* due) {
  while (!by_time_.empty() && by_time_.begin()->first <= time_ns) {
    const uint32_t cpu = by_time_.begin()->second;
    by_time_.erase(by_time_.begin());
    auto it = by_cpu_.find(cpu);
    due->push_back(it->second);
    by_cpu_.erase(it);
  }
}

void PerfViewGaps::Before(const Sample& sample, std::vector<GapFiller>* due) {
  due->clear();
  // This CPU's open filler, if later than this sample, is not needed: the
  // sample itself ends the previous one's time, sooner.
  auto mine = by_cpu_.find(sample.cpu);
  if (mine != by_cpu_.end() && mine->second.time_ns > sample.time_ns) {
    by_time_.erase({mine->second.time_ns, sample.cpu});
    by_cpu_.erase(mine);
  }
  TakeUntil(sample.time_ns, due);
  const GapFiller filler{sample.time_ns + spacing_ns_, sample.cpu, sample.event};
  by_time_.insert({filler.time_ns, filler.cpu});
  by_cpu_[sample.cpu] = filler;
}

void PerfViewGaps::Finish(std::vector<GapFiller>* due) {
  due->clear();
  TakeUntil(UINT64_MAX, due);
}

}  // namespace profcpu::fold
