#include "fold/perf_script_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/direct_file_writer.h"
#include "base/errno_status.h"
#include "base/status_macros.h"
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

// An upper bound of the bytes the samples take (their frame lines exactly,
// the headers at their widest).
uint64_t SizeBound(const Profile& profile, int event_width, Cache* cache) {
  // " %5d/%-5d [%03d] " 36, "%5lu.%06lu" 27, ": %10lu " 23, ": \n" 3, a space
  // after a short comm, the blank line: at most 91 bytes besides names.
  constexpr uint64_t kHeaderBytes = 96;
  std::vector<uint64_t> stack_bytes(profile.stack_count(), 0);
  for (uint32_t id = 0; id < stack_bytes.size(); ++id) {
    for (uint32_t location : profile.stack(id)) {
      stack_bytes[id] += cache->LocationLines(location).size();
    }
  }
  uint64_t comm_bytes = 0;
  uint32_t last_comm = UINT32_MAX;
  uint64_t total = 0;
  for (const Sample& sample : profile.samples()) {
    if (sample.comm != last_comm) {
      last_comm = sample.comm;
      comm_bytes = cache->Comm(sample.comm).size();
    }
    total += comm_bytes + kHeaderBytes + static_cast<uint64_t>(event_width) +
             stack_bytes[sample.stack];
  }
  return total;
}

// Sample headers from the parts that repeat, kept as text: each thread's
// "comm pid/tid [cpu] " and the ": period event: \n" of the last sample;
// only the time is formatted per sample.
class SampleHeaders {
 public:
  SampleHeaders(Cache* cache, int event_width) : cache_(cache), event_width_(event_width) {}

  void Append(const Sample& sample, std::string* out) {
    const ThreadKey key{sample.comm, sample.pid, sample.tid, sample.cpu};
    if (thread_ == nullptr || key != thread_key_) {
      auto [it, inserted] = threads_.try_emplace(key);
      if (inserted) AppendSampleThread(cache_->Comm(sample.comm), sample, &it->second);
      thread_ = &it->second;  // flat_hash_map moves values: valid until the next insert
      thread_key_ = key;
    }
    out->append(*thread_);
    AppendSampleTime(sample.time_ns, out);
    if (event_text_.empty() || sample.period != period_ || sample.event != event_) {
      period_ = sample.period;
      event_ = sample.event;
      event_text_.clear();
      AppendSampleEvent(period_, cache_->Event(event_), event_width_, &event_text_);
    }
    out->append(event_text_);
  }

 private:
  using ThreadKey = std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>;  // comm, pid, tid, cpu

  Cache* cache_;
  const int event_width_;
  absl::flat_hash_map<ThreadKey, std::string> threads_;
  const std::string* thread_ = nullptr;
  ThreadKey thread_key_{};
  uint64_t period_ = 0;
  uint32_t event_ = 0;
  std::string event_text_;
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

// The text into a sink: buffer() for the pieces formatted per sample,
// Append() for the cached frame lines (no copy through buffer()), then
// MaybeFlush, Preallocate and Finish as OutputBuffer's.
template <typename Sink>
absl::Status WriteTo(const Profile& profile, const PerfScriptWriteOptions& options, Sink* out) {
  if (options.header.has_value()) AppendHeaderBlock(*options.header, out->buffer());

  const uint64_t spacing_ns = options.perfview_spacing_ns;
  Cache cache(profile, spacing_ns != 0 ? FrameDialect::kPerfView : FrameDialect::kPerf);
  PerfViewGaps gaps(spacing_ns);
  std::vector<GapFiller> fillers;
  // perf pads event names to the longest one in the file.
  int event_width = 0;
  uint32_t last_event = UINT32_MAX;
  for (const Sample& sample : profile.samples()) {
    if (sample.event == last_event) continue;  // runs of one event: no lookup
    last_event = sample.event;
    event_width = std::max(event_width, static_cast<int>(cache.Event(sample.event).size()));
  }
  SampleHeaders headers(&cache, event_width);
  // perf's own text has no fillers; its size is known well enough up front.
  if (spacing_ns == 0) {
    out->Preallocate(out->buffer()->size() + SizeBound(profile, event_width, &cache));
  }
  for (const Sample& sample : profile.samples()) {
    std::string* buffer = out->buffer();
    if (spacing_ns != 0) {
      gaps.Before(sample, &fillers);
      AppendGapFillers(fillers, spacing_ns, &cache, event_width, buffer);
    }
    headers.Append(sample, buffer);
    for (uint32_t location : profile.stack(sample.stack)) {
      out->Append(cache.LocationLines(location));
    }
    out->buffer()->push_back('\n');
    out->MaybeFlush();
  }
  if (spacing_ns != 0) {
    gaps.Finish(&fillers);
    AppendGapFillers(fillers, spacing_ns, &cache, event_width, out->buffer());
  }
  return out->Finish();
}

// OutputBuffer as a sink: everything through its buffer.
class OutputBufferSink {
 public:
  explicit OutputBufferSink(OutputBuffer* out) : out_(out) {}
  std::string* buffer() { return out_->buffer(); }
  void Append(absl::string_view piece) { out_->buffer()->append(piece.data(), piece.size()); }
  void MaybeFlush() { out_->MaybeFlush(); }
  void Preallocate(uint64_t bytes) { out_->Preallocate(bytes); }
  absl::Status Finish() { return out_->Finish(); }

 private:
  OutputBuffer* out_;
};

// A file around the page cache (base/direct_file_writer.h: the kernel's copy
// of a large perf script cost more than formatting it). The frame lines,
// nearly all of the bytes, are copied once, from the cache into the file's
// block; the headers go through a small text first.
class DirectFileSink {
 public:
  explicit DirectFileSink(base::DirectFileWriter* file) : file_(file) { text_.reserve(4096); }
  std::string* buffer() { return &text_; }
  void Append(absl::string_view piece) {
    FlushText();  // what buffer() took comes first
    file_->Append(piece);
  }
  void MaybeFlush() {
    if (text_.size() >= 4096) FlushText();
  }
  void Preallocate(uint64_t bytes) { file_->Reserve(bytes); }
  absl::Status Finish() {
    FlushText();
    return file_->Finish();
  }

 private:
  void FlushText() {
    if (text_.empty()) return;
    file_->Append(text_);
    text_.clear();
  }
  base::DirectFileWriter* file_;
  std::string text_;
};

}  // namespace

absl::Status WritePerfScript(const Profile& profile, const PerfScriptWriteOptions& options,
                             OutputBuffer* out) {
  OutputBufferSink sink(out);
  return WriteTo(profile, options, &sink);
}

absl::Status WritePerfScriptFile(const Profile& profile, const PerfScriptWriteOptions& options,
                                 const std::string& path) {
  PROFCPU_ASSIGN_OR_RETURN(std::unique_ptr<base::DirectFileWriter> file,
                           base::DirectFileWriter::Create(path));
  DirectFileSink sink(file.get());
  return WriteTo(profile, options, &sink);
}

std::string FormatPerfScript(const Profile& profile, const PerfScriptWriteOptions& options) {
  std::string text;
  OutputBuffer out(&text);
  WritePerfScript(profile, options, &out).IgnoreError();  // a string sink cannot fail
  return text;
}

}  // namespace profcpu::fold
