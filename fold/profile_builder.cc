#include "fold/profile_builder.h"

#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "fold/profile_builder_parallel.h"
#include "fold/profile_builder_replay.h"
#include "recording/record_prefetcher.h"

namespace profcpu::fold {

absl::StatusOr<BuiltProfile> BuildProfile(recording::RecordingReader& reader,
                                          const BuildOptions& options) {
  // Records are decoded on another thread, a batch ahead of the replay.
  recording::RecordPrefetcher records(&reader);
  std::vector<recording::Record> batch = records.NextBatch();
  std::string one_thread_reason;
  // Two threads split nothing: the one-thread replay already keeps two cores
  // busy (the reader decodes the next batch beside it).
  if (options.threads > 2 && !batch.empty()) {
    if (const auto* header = std::get_if<recording::Header>(&batch.front())) {
      one_thread_reason = WhyReplayOnOneThread(*header);
      if (one_thread_reason.empty()) {
        return BuildProfileInParallel(reader, records, std::move(batch), options);
      }
    }
  }
  BuiltProfile out;
  out.one_thread_reason = std::move(one_thread_reason);
  replay::ReplayBuilder builder(&out, options);
  bool saw_header = false;
  for (; !batch.empty(); batch = records.NextBatch()) {
    for (const recording::Record& record : batch) {
      PROFCPU_RETURN_IF_ERROR(replay::CheckRecord(record, &saw_header));
      std::visit([&builder](const auto& r) { builder.On(r); }, record);
    }
    records.Recycle(std::move(batch));
  }
  PROFCPU_RETURN_IF_ERROR(records.status());
  if (!saw_header) return absl::DataLossError("recording holds no records");
  out.summary.file_truncated = reader.truncated();
  builder.Finish();
  return out;
}

}  // namespace profcpu::fold
