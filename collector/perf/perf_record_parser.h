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
#include "recording/records.h"

namespace profcpu::collector {

// The sample_type bits every profcpu event uses; the parser relies on them.
inline constexpr uint64_t kSampleType = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                        PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
                                        PERF_SAMPLE_CALLCHAIN;

// -callgraph dwarf adds the user registers and a copy of the user stack
// (perf's --call-graph dwarf), and asks the kernel for kernel chains only.
inline constexpr uint64_t kDwarfSampleType =
    kSampleType | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
// x86-64: AX BX CX DX SI DI BP SP IP and R8..R15 (enum perf_event_x86_regs,
// asm/perf_regs.h), every register DWARF call frame information may name.
inline constexpr uint64_t kDwarfRegsMask = 0xff01ffull;
// -callgraph fp+cfi adds BP, SP and IP (and a small stack copy) to the
// frame-pointer chain: all a leaf repair reads.
inline constexpr uint64_t kLeafRegsMask = 0x1c0ull;

// What a sample record holds beyond kSampleType's fields.
struct SampleLayout {
  uint64_t regs_user_mask = 0;  // PERF_SAMPLE_REGS_USER with this mask; 0: absent
  bool stack_user = false;      // PERF_SAMPLE_STACK_USER
  // The kernel walks user frame pointers (not with -callgraph dwarf).
  bool user_chain = true;
  // -callgraph fp+cfi: keep only the stack bytes below the end of the frame
  // record two links above the sampled BP's, when BP points into the copy:
  // the leaf repair reads up to BP + 16, the .NET OSR repair up to the OSR
  // frame's caller's record (perf_record_parser.cc, FrameRecordEnd).
  bool trim_to_frame_record = false;
};

class PerfRecordParser {
 public:
  // `max_stack`: the kernel's perf_event_max_stack; a chain that long was cut.
  explicit PerfRecordParser(int max_stack, SampleLayout layout = {})
      : max_stack_(max_stack), layout_(layout) {}

  // Returns the decoded record, or nullopt for record types profcpu ignores
  // and for malformed ones (counted in malformed()).
  std::optional<recording::Record> Parse(absl::string_view bytes);

  uint64_t malformed() const { return malformed_; }

 private:
  std::optional<recording::Record> ParseSample(absl::string_view bytes, uint16_t misc);
  int max_stack_;
  SampleLayout layout_;
  uint64_t malformed_ = 0;
};

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_PERF_PERF_RECORD_PARSER_H_
