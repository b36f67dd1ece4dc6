#include "fold/perf_script_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/errno_status.h"
#include "fold/perf_script_format.h"
#include "fold/perfview_gaps.h"

namespace profcpu::fold {
namespace {

void AppendCommentLine(absl::string_view key, absl::string_view value, std::string* out) {
  out->append("# ");
  AppendSanitized(key, out);
  out->append(" : ");
  AppendSanitized(value, out);
  out->push_back('\n');
}

void AppendHeaderBlock(const PerfScriptHeader& header, std::string* out) {
  out->append("# ========\n");
  AppendCommentLine("profcpu version", header.profcpu_version, out);
  if (!header.target.empty()) AppendCommentLine("target", header.target, out);
  if (!header.event.empty()) AppendCommentLine("event", header.event, out);
  AppendCommentLine("samples", absl::StrCat(header.samples), out);
  for (const auto& [reason, count] : header.losses) {
    AppendCommentLine(absl::StrCat("lost (", reason, ")"), absl::StrCat(count), out);
  }
  for (const auto& [key, value] : header.extra) AppendCommentLine(key, value, out);
  out->append("# ========\n#\n");
}

// Names printed once per distinct string or location, not once per sample.
class Cache {
 public:
  Cache(const Profile& profile, FrameDialect dialect)
      : profile_(profile), dialect_(dialect), locations_(profile.location_count()),
        location_done_(profile.location_count(), false) {}

  const std::string& Comm(uint32_t id) {
    auto [it, inserted] = comms_.try_emplace(id);
    if (inserted) it->second = SanitizeComm(profile_.string(id));
    return it->second;
  }
  const std::string& Event(uint32_t id) {
    auto [it, inserted] = events_.try_emplace(id);
    if (inserted) it->second = SanitizeEvent(profile_.string(id));
    return it->second;
  }
  const std::string& LocationLines(uint32_t id) {
    if (!location_done_[id]) {
      AppendFrameLines(profile_.symbols(), profile_.location(id), &locations_[id], dialect_);
      location_done_[id] = true;
    }
    return locations_[id];
  }

 private:
  const Profile& profile_;
  const FrameDialect dialect_;
  absl::flat_hash_map<uint32_t, std::string> comms_;
  absl::flat_hash_map<uint32_t, std::string> events_;
  std::vector<std::string> locations_;
  std::vector<bool> location_done_;
};

void AppendGapFillers(const std::vector<GapFiller>& fillers, uint64_t spacing_ns, Cache* cache,
                      int event_width, std::string* out) {
  for (const GapFiller& filler : fillers) {
    Sample sample;
    sample.time_ns = filler.time_ns;
    sample.cpu = filler.cpu;
    sample.period = spacing_ns;
    AppendSampleHeader("unprofiled", sample, cache->Event(filler.event), event_width, out);
    out->append(kPerfViewGapFrame);
    out->push_back('\n');
  }
}

}  // namespace

absl::Status WritePerfScript(const Profile& profile, const PerfScriptWriteOptions& options,
                             OutputBuffer* out) {
  if (options.header.has_value()) AppendHeaderBlock(*options.header, out->buffer());

  const uint64_t spacing_ns = options.perfview_spacing_ns;
  Cache cache(profile, spacing_ns != 0 ? FrameDialect::kPerfView : FrameDialect::kPerf);
  PerfViewGaps gaps(spacing_ns);
  std::vector<GapFiller> fillers;
  // perf pads event names to the longest one in the file.
  int event_width = 0;
  for (const Sample& sample : profile.samples()) {
    event_width = std::max(event_width, static_cast<int>(cache.Event(sample.event).size()));
  }
  for (const Sample& sample : profile.samples()) {
    std::string* buffer = out->buffer();
    if (spacing_ns != 0) {
      gaps.Before(sample, &fillers);
      AppendGapFillers(fillers, spacing_ns, &cache, event_width, buffer);
    }
    AppendSampleHeader(cache.Comm(sample.comm), sample, cache.Event(sample.event), event_width,
                       buffer);
    for (uint32_t location : profile.stack(sample.stack)) {
      buffer->append(cache.LocationLines(location));
    }
    buffer->push_back('\n');
    out->MaybeFlush();
  }
  if (spacing_ns != 0) {
    gaps.Finish(&fillers);
    AppendGapFillers(fillers, spacing_ns, &cache, event_width, out->buffer());
  }
  return out->Finish();
}

absl::Status WritePerfScriptFile(const Profile& profile, const PerfScriptWriteOptions& options,
                                 const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "we");
  if (file == nullptr) return base::ErrnoStatus(errno, absl::StrCat("create ", path));
  absl::Status status;
  {
    OutputBuffer out(file);
    status = WritePerfScript(profile, options, &out);
  }
  if (std::fclose(file) != 0 && status.ok()) {
    status = base::ErrnoStatus(errno, absl::StrCat("close ", path));
  }
  return status;
}

std::string FormatPerfScript(const Profile& profile, const PerfScriptWriteOptions& options) {
  std::string text;
  OutputBuffer out(&text);
  WritePerfScript(profile, options, &out).IgnoreError();  // a string sink cannot fail
  return text;
}

}  // namespace profcpu::fold
