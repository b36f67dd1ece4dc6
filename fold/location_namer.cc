#include "fold/location_namer.h"

#include <utility>

#include "absl/strings/str_split.h"
#include "fold/perf_script_format.h"
#include "fold/perf_script_reader.h"

namespace profcpu::fold {
namespace {

FrameNameOptions NameOptions(const FoldOptions& options) {
  FrameNameOptions names;
  names.annotate_kernel = options.annotate_kernel;
  names.annotate_jit = options.annotate_jit;
  names.include_addrs = options.include_addrs;
  names.annotate_precompiled = options.annotate_precompiled;
  names.keep_dotnet_tiers = options.keep_dotnet_tiers;
  names.keep_anonymous_namespaces = options.keep_anonymous_namespaces;
  return names;
}

}  // namespace

LocationNamer::LocationNamer(const Profile& profile, const FoldOptions& options)
    : profile_(profile), namer_(NameOptions(options)) {
  for (int java = 0; java < 2; ++java) {
    names_[java].resize(profile.location_count());
    done_[java].resize(profile.location_count(), false);
    ids_[java].resize(profile.location_count());
    ids_done_[java].resize(profile.location_count(), false);
  }
}

const std::vector<std::string>& LocationNamer::Names(uint32_t location, bool java) {
  std::vector<std::string>& names = names_[java][location];
  if (done_[java][location]) return names;
  done_[java][location] = true;

  // Name the lines the perf script writer prints, as stackcollapse would
  // read them: innermost line first, so prepend each line's names.
  lines_.clear();
  AppendFrameLines(profile_.symbols(), profile_.location(location), &lines_);
  std::vector<std::vector<std::string>> per_line;
  for (absl::string_view line : absl::StrSplit(lines_, '\n', absl::SkipEmpty())) {
    FrameLine frame;
    if (!ParseFrameLine(line, &frame)) continue;  // cannot happen: we printed it
    line_names_.clear();
    if (namer_.AppendNames(frame.pc, frame.symbol, frame.module, java, &line_names_) == 0) {
      continue;
    }
    // Frame names never contain ';' (the rules turn it into ':').
    per_line.push_back(absl::StrSplit(line_names_, ';'));
  }
  for (auto it = per_line.rbegin(); it != per_line.rend(); ++it) {
    for (std::string& name : *it) names.push_back(std::move(name));
  }
  return names;
}

const std::vector<uint32_t>& LocationNamer::NameIds(
    uint32_t location, bool java, absl::FunctionRef<uint32_t(const std::string&)> intern) {
  std::vector<uint32_t>& ids = ids_[java][location];
  if (ids_done_[java][location]) return ids;
  ids_done_[java][location] = true;
  for (const std::string& name : Names(location, java)) ids.push_back(intern(name));
  return ids;
}

}  // namespace profcpu::fold
