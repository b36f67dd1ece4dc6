// Decodes the kernel's perf records (linux/perf_event.h, "enum
// perf_event_type") into recording records. Records come from our own ring
// buffers, but are still decoded with bounds checks: a malformed record is
// counted and skipped, never trusted.
#ifndef PROFCPU_COLLECTOR_PERF_PERF_RECORD_PARSER_H_
#define PROFCPU_COLLECTOR_PERF_PERF_RECORD_PARSER_H_

#include <cstdint>
#include <optional>

#include <linux/perf_event.h>

#include "absl/strings/string_view.h"
#include "collector/recording/records.h"

namespace profcpu::collector {

// The sample_type bits every profcpu event uses; the parser relies on them.
inline constexpr uint64_t kSampleType = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                        PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
                                        PERF_SAMPLE_CALLCHAIN;

class PerfRecordParser {
 public:
  // `max_stack`: the kernel's perf_event_max_stack; a chain that long was cut.
  explicit PerfRecordParser(int max_stack) : max_stack_(max_stack) {}

  // Returns the decoded record, or nullopt for record types profcpu ignores
  // and for malformed ones (counted in malformed()).
  std::optional<recording::Record> Parse(absl::string_view bytes);

  uint64_t malformed() const { return malformed_; }

 private:
  std::optional<recording::Record> ParseSample(absl::string_view bytes, uint16_t misc);
  int max_stack_;
  uint64_t malformed_ = 0;
};

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_PERF_PERF_RECORD_PARSER_H_
