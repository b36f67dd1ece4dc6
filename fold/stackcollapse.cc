#include "fold/stackcollapse.h"

#include <algorithm>

namespace profcpu::fold {
namespace {

FrameNameOptions NameOptions(const StackCollapseOptions& options) {
  FrameNameOptions names;
  names.annotate_kernel = options.annotate_kernel;
  names.annotate_jit = options.annotate_jit;
  names.include_addrs = options.include_addrs;
  names.annotate_precompiled = options.annotate_precompiled;
  return names;
}

}  // namespace

StackCollapser::StackCollapser(StackCollapseOptions options)
    : options_(std::move(options)),
      namer_(NameOptions(options_)),
      event_filter_(options_.event_filter) {}

void StackCollapser::AddLine(absl::string_view line) {
  ++stats_.lines;
  if (line.empty()) {
    EndSample();
    return;
  }
  if (line[0] == '#') return;
  HeaderLine header;
  if (ParseHeaderLine(line, &header)) {
    OnHeader(header);
    return;
  }
  FrameLine frame;
  if (ParseFrameLine(line, &frame)) {
    // Frames of a filtered sample (or before any header) are dropped.
    if (!has_root_) return;
    size_t before = names_.size();
    if (before > options_.max_stack_bytes) {
      truncated_ = true;
      return;
    }
    if (namer_.AppendNames(frame.pc, frame.symbol, frame.module, java_, &names_) > 0) {
      segments_.emplace_back(before, names_.size() - before);
    }
    return;
  }
  ++stats_.unrecognized_lines;
}

void StackCollapser::OnHeader(const HeaderLine& header) {
  if (header.has_event) {
    if (event_filter_.empty()) {
      // Merging different events (cycles and instructions, say) would mislead,
      // so by default only the first one met is kept.
      event_filter_.assign(header.event.data(), header.event.size());
      event_defaulted_ = true;
    } else if (header.event != event_filter_) {
      if (event_defaulted_ && stats_.warned_event.empty()) {
        stats_.warned_event.assign(header.event.data(), header.event.size());
      }
      // The script skips the header only: it neither ends the sample being
      // read nor starts a new one.
      ++stats_.filtered_headers;
      return;
    }
  }
  // "if (not $period) { $period = 1 }": no period, or exactly "0".
  if (header.period.empty() || header.period == "0") {
    period_.assign("1");
  } else {
    period_.assign(header.period.data(), header.period.size());
  }
  root_.clear();
  AppendRootName(header.comm, header.pid, header.tid, options_.include_pid,
                 options_.include_tid, &root_);
  java_ = IsJavaRoot(root_);
  has_root_ = true;
}

void StackCollapser::EndSample() {
  if (!has_root_) return;
  // Frames come leaf first; the folded stack is root first.
  key_.assign(root_);
  for (auto it = segments_.rbegin(); it != segments_.rend(); ++it) {
    key_.push_back(';');
    key_.append(names_, it->first, it->second);
  }
  counts_[key_].AddDigits(period_);
  ++stats_.samples;
  if (truncated_) ++stats_.truncated_stacks;
  truncated_ = false;
  names_.clear();
  segments_.clear();
  has_root_ = false;
}

std::vector<std::pair<absl::string_view, const PerlCount*>> StackCollapser::SortedStacks()
    const {
  std::vector<std::pair<absl::string_view, const PerlCount*>> sorted;
  sorted.reserve(counts_.size());
  for (const auto& [stack, count] : counts_) sorted.emplace_back(stack, &count);
  // Perl's `sort { $a cmp $b }` on byte strings: unsigned bytewise order, as
  // string_view compares.
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return sorted;
}

void StackCollapser::Write(OutputBuffer* out) const {
  for (const auto& [stack, count] : SortedStacks()) {
    std::string* buffer = out->buffer();
    buffer->append(stack.data(), stack.size());
    buffer->push_back(' ');
    count->AppendTo(buffer);
    buffer->push_back('\n');
    out->MaybeFlush();
  }
}

std::string StackCollapser::Format() const {
  std::string text;
  OutputBuffer out(&text);
  Write(&out);
  return text;
}

absl::Status CollapsePerfScript(LineReader& reader, const StackCollapseOptions& options,
                                OutputBuffer* out, StackCollapseStats* stats) {
  StackCollapser collapser(options);
  absl::string_view line;
  while (reader.Next(&line)) collapser.AddLine(line);
  collapser.mutable_stats().overlong_lines = reader.overlong_lines();
  if (stats != nullptr) *stats = collapser.stats();
  if (!reader.status().ok()) return reader.status();
  collapser.Write(out);
  return out->Finish();
}

std::string CollapsePerfScriptText(absl::string_view text, const StackCollapseOptions& options) {
  LineReader reader = LineReader::FromString(text);
  std::string folded;
  OutputBuffer out(&folded);
  // Reading a string cannot fail.
  CollapsePerfScript(reader, options, &out).IgnoreError();
  return folded;
}

}  // namespace profcpu::fold
