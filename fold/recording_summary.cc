#include "fold/recording_summary.h"

#include "absl/strings/str_cat.h"

namespace profcpu::fold {

std::string ModeDescription(const RecordingSummary& summary) {
  const recording::Header& h = summary.header;
  std::string sampling = absl::StrCat(h.event_name, ", ", h.sample_rate,
                                      h.frequency_mode ? " Hz" : " period");
  if (summary.mode == "offcpu") {
    return "offcpu-time (sched_switch, BPF): period = microseconds off the CPU, stamped when "
           "the thread blocked";
  }
  std::string counted = h.backend == "bpf" ? ", BPF backend" : "";
  if (summary.mode == "wall") {
    return absl::StrCat("wall-time: on-CPU samples (", sampling, counted,
                        ") under [on-cpu] and off-CPU time (sched_switch, BPF) under [off-cpu]; "
                        "period = microseconds");
  }
  if (h.backend == "bpf") {
    return absl::StrCat(sampling, ", BPF backend: period = samples; without -timestamps "
                        "stacks are counted in the kernel and each entry sums one second");
  }
  return sampling;
}

PerfScriptHeader PerfScriptHeaderFor(const RecordingSummary& summary) {
  const recording::Header& header = summary.header;
  PerfScriptHeader script_header;
  script_header.profcpu_version = header.profcpu_version;
  script_header.target = header.target;
  script_header.event = ModeDescription(summary);
  script_header.samples = summary.samples_kept.value_or(summary.samples);
  script_header.losses = {{"ring buffer full", summary.lost_ring_buffer},
                          {"dropped by the kernel", summary.lost_dropped}};
  if (header.backend == "bpf" || summary.mode != "cpu") {
    script_header.losses.push_back({"BPF ring buffer full", summary.lost_bpf_ring_buffer});
    script_header.losses.push_back({"stacks lost (BPF)", summary.lost_stacks});
    script_header.losses.push_back({"BPF map full", summary.lost_bpf_map_full});
    script_header.losses.push_back({"off-CPU stays never ended", summary.lost_offcpu_unended});
  }
  // Samples all present, their stacks short of the thread's root.
  const StackEnds& ends = summary.stack_ends;
  std::string cut = absl::StrCat(ends.cut_short);
  for (size_t i = 0; i < ends.cut_by_module.size() && i < 3; ++i) {
    absl::StrAppend(&cut, i == 0 ? " (" : ", ", ends.cut_by_module[i].second, " in ",
                    ends.cut_by_module[i].first);
  }
  if (!ends.cut_by_module.empty()) cut.push_back(')');
  script_header.extra = {{"stacks cut short (outermost frame not a thread root)", cut}};
  if (header.callgraph == "fp+cfi") {
    script_header.extra.push_back({"stacks repaired from their stack copy",
                                   absl::StrCat(summary.stacks_repaired)});
  }
  script_header.extra.push_back({"hostname", header.hostname});
  script_header.extra.push_back({"os release", header.kernel_release});
  return script_header;
}

std::string SummaryLine(const RecordingSummary& s, const UnknownFrames& unknown) {
  std::string line = s.samples_kept.has_value()
                         ? absl::StrCat(*s.samples_kept, " of ", s.samples,
                                        " samples kept by the filters")
                         : absl::StrCat(s.samples, " samples");
  const uint64_t lost =
      s.lost_ring_buffer + s.lost_dropped + s.lost_bpf_ring_buffer + s.lost_bpf_map_full;
  absl::StrAppend(&line, ", ", lost, " lost");
  if (s.offcpu_samples > 0) {
    absl::StrAppend(&line, " (", s.offcpu_samples, " off-CPU, ",
                    absl::SixDigits(static_cast<double>(s.offcpu_ns) / 1e9), " s blocked)");
  }
  if (s.lost_stacks > 0) absl::StrAppend(&line, ", ", s.lost_stacks, " stacks lost");
  line.append(DescribeCutStacks(s.stack_ends));
  if (s.stacks_repaired > 0) absl::StrAppend(&line, ", ", s.stacks_repaired, " repaired");
  line.append(DescribeUnknownFrames(unknown));
  return line;
}

}  // namespace profcpu::fold
