// Exports a Profile as a pprof profile (the gzipped profile.proto that `go
// tool pprof`, Pyroscope, Parca and Cloud Profiler read), with its mappings,
// build-ids, functions, inlined frames and source lines.
//
// Addresses stay real: a native frame's location keeps the address sampled,
// and its mapping is the module loaded at that place (one mapping per module
// and load address), so memory_start - file_offset is the load bias and pprof
// can name still-unknown frames later from the module's build-id
// ($PPROF_BINARY_PATH). Kernel code maps to "[kernel.kallsyms]" and JIT or
// anonymous memory to "[perf-PID.map]"-style names, which pprof does not try
// to open. Samples are aggregated per stack, process, thread and thread name,
// with values [samples, period sum] and "pid", "tid", "thread" labels.
#ifndef PROFCPU_RENDER_PPROF_WRITER_H_
#define PROFCPU_RENDER_PPROF_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fold/profile.h"
#include "fold/recording_summary.h"

namespace profcpu::render {

struct PprofOptions {
  std::string event_name = "cpu-clock";  // the sampled event
  bool frequency_mode = true;            // sample_rate is in Hz (else a period)
  uint64_t sample_rate = 99;
  // What each sample's period measures, as pprof's (type, unit), e.g.
  // ("off-cpu", "microseconds"). Empty: "cpu"/"nanoseconds" for cpu-clock and
  // task-clock, (event_name, "count") for other events.
  std::string period_type;
  std::string period_unit;
  // What the first value counts, as pprof's (type, unit): CPU samples, or
  // the events of a .NET event profile ("alloc_objects", "contentions").
  std::string count_type = "samples";
  std::string count_unit = "count";
  // The period is itself a count (stacks counted in the kernel, one per
  // throw): one value, (count_type, count_unit), summing the periods.
  bool periods_are_samples = false;
  // Period sums are multiplied by this (saturating) on the way out: a lock
  // wait's microseconds become the nanoseconds pprof's "delay" is in.
  uint64_t period_scale = 1;
  int64_t start_unix_ns = 0;  // wall clock when collection began
  int64_t duration_ns = 0;
  std::vector<std::string> comments;  // free text shown by pprof -comments
};

// The options that describe a recording's samples: event and rate, what the
// periods measure per mode (off-CPU and wall time, BPF counts), start and
// duration, and comments naming profcpu, the target and the sampling.
PprofOptions PprofOptionsFor(const fold::RecordingSummary& summary);

// The uncompressed profile.proto bytes. Native frames' mappings come from
// the profile's modules (build-ids included).
absl::StatusOr<std::string> SerializePprof(const fold::Profile& profile,
                                           const PprofOptions& options);

// gzip (RFC 1952) of `data`, as pprof files are stored.
absl::StatusOr<std::string> Gzip(absl::string_view data);

// Writes the gzipped profile to `path`.
absl::Status WritePprofFile(const fold::Profile& profile, const PprofOptions& options,
                            const std::string& path);

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_PPROF_WRITER_H_
