#include "symbolize/managed_code_events.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "nettrace/reader.h"
#include "symbolize/dotnet_tier.h"

namespace profcpu::symbolize {
namespace {

using nettrace::DecodeMethodLoadVerbose;
using nettrace::DecodeModuleLoad;
using nettrace::MethodEvent;
using nettrace::ModuleEvent;
using nettrace::NettraceEvent;
using nettrace::NettraceEventMetadata;
using nettrace::NettraceReader;
using nettrace::RundownEventId;
using nettrace::RuntimeEventId;

// MethodFlags (ClrEtwAll.man, eventtrace.cpp): the code's optimization tier
// sits in bits 7-9, numbered as PrepareCodeConfig::JitOptimizationTier,
// which is the order of kDotnetTiers' first eight.
constexpr uint32_t kTierShift = 7;
constexpr uint32_t kTierMask = 0x7;
// Set for code the JIT compiled; precompiled (ReadyToRun) code lacks it,
// which the perf map tags [PreJIT].
constexpr uint32_t kJittedFlag = 0x8;
constexpr absl::string_view kPrecompiledTier = "PreJIT";

// The event writes types as the runtime's SigFormat does ("class
// System.String", "value class System.DateTime"), the perf map with ILDASM's
// keywords ("string", "valuetype ..."): the common ones are rewritten so an
// argument list reads as in the perf map, except for the assemblies the perf
// map puts before types from elsewhere ("valuetype [System.Runtime]System.
// DateTime"), which the event does not carry. Folded stacks and flame graphs
// leave argument lists out, so they name a method alike either way.
std::string PerfMapStyleArguments(absl::string_view arguments) {
  static constexpr std::pair<absl::string_view, absl::string_view> kRewrites[] = {
      {"class System.Object", "object"},
      {"class System.String", "string"},
      {"value class ", "valuetype "},
  };
  std::string out;
  out.reserve(arguments.size());
  size_t i = 0;
  while (i < arguments.size()) {
    bool rewritten = false;
    // Only at the start of a type: after '(', ',' or '<'.
    if (i == 0 || arguments[i - 1] == '(' || arguments[i - 1] == ',' || arguments[i - 1] == '<') {
      for (const auto& [from, to] : kRewrites) {
        if (absl::StartsWith(arguments.substr(i), from)) {
          // "class System.ObjectModel..." is not System.Object.
          const size_t after = i + from.size();
          const bool whole = from.back() == ' ' || after == arguments.size() ||
                             !(absl::ascii_isalnum(arguments[after]) || arguments[after] == '.' ||
                               arguments[after] == '`' || arguments[after] == '_');
          if (!whole) continue;
          out.append(to.data(), to.size());
          i = after;
          rewritten = true;
          break;
        }
      }
    }
    if (!rewritten) out.push_back(arguments[i++]);
  }
  return out;
}

// The module's simple name, as the perf map brackets it: the file's name
// without its directory and extension.
std::string ModuleSimpleName(absl::string_view path) {
  const size_t slash = path.find_last_of("/\\");
  if (slash != absl::string_view::npos) path.remove_prefix(slash + 1);
  for (absl::string_view ext : {".dll", ".exe", ".ni.dll", ".DLL", ".EXE"}) {
    if (absl::ConsumeSuffix(&path, ext)) break;
  }
  return std::string(path);
}

// A method seen in the stream, named only at the end (its module's path may
// come later: the rundown lists modules loaded before the session).
struct Seen {
  ManagedMethodCode code;
  uint64_t method_id = 0;
  MethodEvent event;
};

class Collector {
 public:
  Collector(const ManagedCodeLimits& limits, const NettraceReader& reader)
      : limits_(limits), reader_(reader) {}

  void Load(MethodEvent e, int64_t timestamp) {
    ++history_.loads;
    Add(std::move(e), ToNs(timestamp));
  }

  void Unload(const MethodEvent& e, int64_t timestamp) {
    auto it = live_.find(e.start_address);
    if (it == live_.end()) return;
    Seen& seen = seen_[it->second];
    if (seen.method_id != e.method_id) return;
    // A stream's clock does not run backwards, but a hostile one may.
    seen.code.unload_ns = std::max(seen.code.load_ns, ToNs(timestamp));
    ++history_.unloads;
    live_.erase(it);
  }

  void Rundown(MethodEvent e) {
    history_.rundown_seen = true;
    auto it = live_.find(e.start_address);
    if (it != live_.end() && seen_[it->second].method_id == e.method_id) return;  // announced
    ++history_.rundown;
    Add(std::move(e), 0);
  }

  void Module(ModuleEvent m) {
    if (modules_.size() >= limits_.max_modules) {
      history_.capped = true;
      return;
    }
    modules_.insert_or_assign(m.module_id, std::move(m.il_path));
  }

  ManagedCodeHistory Finish() {
    history_.methods.reserve(seen_.size());
    for (Seen& seen : seen_) {
      auto module = modules_.find(seen.event.module_id);
      seen.code.name = PerfMapStyleName(
          seen.event, module == modules_.end() ? absl::string_view() : module->second);
      history_.methods.push_back(std::move(seen.code));
    }
    seen_.clear();
    return std::move(history_);
  }

  ManagedCodeHistory& history() { return history_; }

 private:
  void Add(MethodEvent e, uint64_t load_ns) {
    if (e.size == 0) return;
    const size_t bytes = e.method_namespace.size() + e.name.size() + e.signature.size();
    if (seen_.size() >= limits_.max_methods || name_bytes_ + bytes > limits_.max_name_bytes) {
      history_.capped = true;
      return;
    }
    name_bytes_ += bytes;
    Seen seen;
    seen.code.start = e.start_address;
    seen.code.size = e.size;
    seen.code.load_ns = load_ns;
    seen.method_id = e.method_id;
    seen.event = std::move(e);
    live_.insert_or_assign(seen.code.start, seen_.size());
    seen_.push_back(std::move(seen));
  }

  uint64_t ToNs(int64_t ticks) const { return reader_.ToMonotonicNs(ticks); }

  const ManagedCodeLimits& limits_;
  const NettraceReader& reader_;
  ManagedCodeHistory history_;
  std::vector<Seen> seen_;
  absl::flat_hash_map<uint64_t, size_t> live_;  // start address -> seen_ index
  absl::flat_hash_map<uint64_t, std::string> modules_;
  size_t name_bytes_ = 0;
};

}  // namespace

std::string PerfMapStyleName(const MethodEvent& method, absl::string_view module_path) {
  // The event's signature is "[instance ][generic ]RETURN  (ARGUMENTS)"; the
  // name starts at the module, as profcpu shows perf-map names
  // (symbolize/dotnet_names.h: WithoutReturnType).
  absl::string_view arguments = "()";
  const size_t open = method.signature.find('(');
  if (open != std::string::npos) arguments = absl::string_view(method.signature).substr(open);
  std::string name = absl::StrCat("[", ModuleSimpleName(module_path), "] ",
                                  method.method_namespace, "::", method.name,
                                  PerfMapStyleArguments(arguments));
  const absl::string_view tier = (method.flags & kJittedFlag) == 0
                                     ? kPrecompiledTier
                                     : kDotnetTiers[(method.flags >> kTierShift) & kTierMask];
  absl::StrAppend(&name, "[", tier, "]");
  return name;
}

absl::StatusOr<ManagedCodeHistory> ReadManagedCode(nettrace::NettraceSource* source,
                                                   const ManagedCodeLimits& limits) {
  NettraceReader reader(source);
  if (absl::Status header = reader.ReadHeader(); !header.ok()) return header;
  Collector collector(limits, reader);
  NettraceEvent event;
  while (true) {
    absl::StatusOr<bool> next = reader.Next(&event);
    if (!next.ok()) {
      collector.history().read_error = next.status();
      break;
    }
    if (!*next) break;
    const NettraceEventMetadata& meta = *event.metadata;
    const bool runtime = meta.provider == nettrace::kDotNetRuntimeProvider;
    const bool rundown = !runtime && meta.provider == nettrace::kDotNetRundownProvider;
    if (!runtime && !rundown) continue;
    // A payload cut short is skipped: the rest of the stream still names code.
    if (runtime && meta.event_id == static_cast<uint32_t>(RuntimeEventId::kMethodLoadVerbose)) {
      auto e = DecodeMethodLoadVerbose(event.payload, meta.version);
      if (e.ok()) collector.Load(std::move(*e), event.timestamp);
    } else if (runtime &&
               meta.event_id == static_cast<uint32_t>(RuntimeEventId::kMethodUnloadVerbose)) {
      auto e = DecodeMethodLoadVerbose(event.payload, meta.version);
      if (e.ok()) collector.Unload(*e, event.timestamp);
    } else if (rundown &&
               meta.event_id == static_cast<uint32_t>(RundownEventId::kMethodDcEndVerbose)) {
      auto e = DecodeMethodLoadVerbose(event.payload, meta.version);
      if (e.ok()) collector.Rundown(std::move(*e));
    } else if ((runtime && meta.event_id == static_cast<uint32_t>(RuntimeEventId::kModuleLoad)) ||
               (rundown && meta.event_id == static_cast<uint32_t>(RundownEventId::kModuleDcEnd))) {
      auto m = DecodeModuleLoad(event.payload, meta.version);
      if (m.ok()) collector.Module(std::move(*m));
    }
  }
  return collector.Finish();
}

}  // namespace profcpu::symbolize
