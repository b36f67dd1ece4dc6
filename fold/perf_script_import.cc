#include "fold/perf_script_import.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "fold/frame_name.h"
#include "fold/perf_script_reader.h"

namespace profcpu::fold {
namespace {

constexpr absl::string_view kInlined = "inlined";  // perf 6.1's "(inlined)" lines

uint64_t ParseDecimal(absl::string_view digits) {
  uint64_t value = 0;
  return absl::SimpleAtoi(digits, &value) ? value : 0;
}

uint64_t ParseHex(absl::string_view hex) {
  uint64_t value = 0;
  return absl::SimpleHexAtoi(hex, &value) ? value : 0;
}

// "SSS.UUUUUU:" (any number of fraction digits) to nanoseconds.
bool ParseTime(absl::string_view token, uint64_t* time_ns) {
  if (!absl::ConsumeSuffix(&token, ":")) return false;
  std::pair<absl::string_view, absl::string_view> parts = absl::StrSplit(token, '.');
  uint64_t seconds = 0;
  if (parts.second.empty() || !absl::SimpleAtoi(parts.first, &seconds)) return false;
  std::string fraction(parts.second.substr(0, 9));
  fraction.resize(9, '0');
  uint64_t nanoseconds = 0;
  if (!absl::SimpleAtoi(fraction, &nanoseconds)) return false;
  *time_ns = seconds * 1000000000 + nanoseconds;
  return true;
}

// The text of one frame line, as the importer keeps it.
struct FrameText {
  std::string pc;
  std::string symbol;
  std::string module;
};

class Importer {
 public:
  explicit Importer(ImportedProfile* out) : out_(out) {}

  void AddLine(absl::string_view line) {
    HeaderLine header;
    FrameLine frame;
    switch (ClassifyLine(line, &header, &frame)) {
      case LineKind::kComment:
        return;
      case LineKind::kBlank:
        EndSample();
        return;
      case LineKind::kHeader:
        EndSample();  // perf always ends samples with a blank line; be lenient
        StartSample(line, header);
        return;
      case LineKind::kFrame:
        if (!in_sample_) {
          ++out_->stats.orphan_frames;
          return;
        }
        AddFrame(frame);
        return;
      case LineKind::kUnrecognized:
        ++out_->stats.unrecognized_lines;
        return;
    }
  }

  void EndSample() {
    if (!in_sample_) return;
    FlushInlined();
    sample_.stack = out_->profile.InternStack(stack_);
    out_->profile.AddSample(sample_);
    ++out_->stats.samples;
    in_sample_ = false;
  }

 private:
  void StartSample(absl::string_view line, const HeaderLine& header) {
    Profile& profile = out_->profile;
    sample_ = Sample();
    sample_.comm = profile.InternString(absl::StripTrailingAsciiWhitespace(header.comm));
    sample_.tid = static_cast<uint32_t>(ParseDecimal(header.tid));
    sample_.pid = header.pid == "?" ? sample_.tid : static_cast<uint32_t>(ParseDecimal(header.pid));
    sample_.period = header.period.empty() ? 1 : ParseDecimal(header.period);
    sample_.event = profile.InternString(header.event);
    // After the ids: an optional "[cpu]", then the "time:" token.
    const char* ids_end = header.tid.data() + header.tid.size();
    if (header.pid != "?") ids_end = std::max(ids_end, header.pid.data() + header.pid.size());
    absl::string_view rest = line.substr(static_cast<size_t>(ids_end - line.data()));
    for (absl::string_view token : absl::StrSplit(rest, ' ', absl::SkipWhitespace())) {
      token = absl::StripAsciiWhitespace(token);
      if (token.size() > 2 && token.front() == '[' && token.back() == ']') {
        sample_.cpu = static_cast<uint32_t>(ParseDecimal(token.substr(1, token.size() - 2)));
      } else if (ParseTime(token, &sample_.time_ns)) {
        break;
      }
    }
    stack_.clear();
    in_sample_ = true;
  }

  void AddFrame(const FrameLine& frame) {
    FrameText text{std::string(frame.pc), std::string(frame.symbol), std::string(frame.module)};
    if (text.module == kInlined) {
      if (!inlined_.empty() && inlined_.back().pc != text.pc) FlushInlined();
      inlined_.push_back(std::move(text));
      return;
    }
    if (!inlined_.empty() && inlined_.back().pc != text.pc) FlushInlined();
    inlined_.push_back(std::move(text));
    stack_.push_back(InternLocation(inlined_, /*last_is_inlined=*/false));
    inlined_.clear();
  }

  // Inlined lines not followed by their function's line stand alone.
  void FlushInlined() {
    if (inlined_.empty()) return;
    stack_.push_back(InternLocation(inlined_, /*last_is_inlined=*/true));
    inlined_.clear();
  }

  // One location for `lines` (innermost first): all inlined frames but the
  // last, which is the function they are inlined into (or, if
  // `last_is_inlined`, inlined as well).
  uint32_t InternLocation(const std::vector<FrameText>& lines, bool last_is_inlined) {
    key_.clear();
    for (const FrameText& line : lines) {
      key_.append(line.pc).push_back('\0');
      key_.append(line.symbol).push_back('\0');
      key_.append(line.module).push_back('\n');
    }
    auto [it, inserted] = locations_.try_emplace(key_, 0);
    if (!inserted) return it->second;

    const FrameText& outer = lines.back();
    Location location;
    location.address = ParseHex(outer.pc);
    location.code = {symbolize::CodeKind::kImported, 0, next_code_++};
    symbolize::Symbolization symbolization;
    symbolization.module = last_is_inlined ? std::string(kUnknownFrame) : outer.module;
    location.kernel = IsKernelModule(symbolization.module);
    for (size_t i = 0; i < lines.size(); ++i) {
      symbolize::Frame frame;
      absl::string_view name = StripSymbolOffset(lines[i].symbol);
      if (name.size() < lines[i].symbol.size()) {
        frame.offset = ParseHex(absl::string_view(lines[i].symbol).substr(name.size() + 3));
      }
      // "[unknown]" is a nameless frame (an empty function); so is a blank
      // symbol (perf prints "ADDR  (module)" for a symbol with no name).
      if (name != kUnknownFrame && !absl::StripAsciiWhitespace(name).empty()) {
        frame.function = std::string(name);
      }
      frame.inlined = last_is_inlined || i + 1 < lines.size();
      symbolization.frames.push_back(std::move(frame));
    }
    // A lone unnamed frame is an unnamed location.
    if (lines.size() == 1 && symbolization.frames[0].function.empty()) {
      symbolization.frames.clear();
    }
    out_->profile.mutable_symbols().Insert(location.code, std::move(symbolization));
    it->second = out_->profile.InternLocation(location);
    return it->second;
  }

  ImportedProfile* out_;
  bool in_sample_ = false;
  Sample sample_;
  std::vector<uint32_t> stack_;
  std::vector<FrameText> inlined_;
  absl::flat_hash_map<std::string, uint32_t> locations_;
  std::string key_;
  uint64_t next_code_ = 0;
};

}  // namespace

absl::StatusOr<ImportedProfile> ImportPerfScript(LineReader& reader) {
  ImportedProfile out;
  Importer importer(&out);
  absl::string_view line;
  while (reader.Next(&line)) importer.AddLine(line);
  if (!reader.status().ok()) return reader.status();
  importer.EndSample();  // a last sample without its blank line still counts
  out.stats.overlong_lines = reader.overlong_lines();
  return out;
}

}  // namespace profcpu::fold
