#include "fold/dotnet_event_profiles.h"

#include <fcntl.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/types/span.h"
#include "base/unique_fd.h"
#include "fold/dotnet_runtime_events.h"
#include "nettrace/reader.h"
#include "nettrace/runtime_events.h"
#include "nettrace/source.h"
#include "recording/run_folder.h"

namespace profcpu::fold {
namespace {

using nettrace::NettraceEvent;
using nettrace::RuntimeEventId;

// The leaf type frames' kImported space: the replay's synthetic frames
// ([on-cpu], [off-cpu]) use 0xFFFFFFFF, text tables count up from 0.
constexpr uint32_t kTypeFrameSpace = 0xFFFFFFFE;
constexpr char kTypeFrameModule[] = "[dotnet]";
// Bounds on what the target's stream can make us hold. The runtime walks at
// most 100 frames (EventPipe's EP_MAX_STACK_DEPTH); a deeper stack keeps its
// innermost frames.
constexpr size_t kMaxFrames = 1024;
constexpr size_t kMaxTypeNames = 1 << 16;
constexpr size_t kMaxTypeNameBytes = 1024;
constexpr size_t kMaxWaitingThreads = 4096;
constexpr size_t kMaxSamplesPerKind = 1 << 22;

size_t IndexOf(DotnetEventKind kind) { return static_cast<size_t>(kind); }

// A hostile double (NaN, negative, past 2^64) is no duration.
uint64_t DurationNs(double ns) {
  if (!(ns > 0) || ns >= 1.8e19) return 0;
  return static_cast<uint64_t>(ns);
}

// Microseconds, rounded; a wait the runtime reported is at least 1 µs, so
// every contention shows in the profile.
uint64_t WaitMicroseconds(uint64_t ns) { return std::max<uint64_t>(1, (ns + 500) / 1000); }

uint64_t AddCapped(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

// A ContentionStart waiting for its thread's ContentionStop.
struct PendingWait {
  uint64_t start_ns = 0;
  std::vector<uint32_t> frames;  // the Start's, as location ids of the lock profile
};

// Reads the files one after the other into one DotnetEventProfiles: the
// profiles, the requests (deduplicated across files and kinds) and the type
// frames' names are shared.
class EventStackReader {
 public:
  EventStackReader(symbolize::JitCodeHistory* jit, DotnetEventProfiles* out)
      : jit_(jit), out_(out) {
    for (DotnetEventKind kind :
         {DotnetEventKind::kAlloc, DotnetEventKind::kLockWait, DotnetEventKind::kException}) {
      DotnetEventProfile& p = out_->profiles.emplace_back();
      p.kind = kind;
      event_names_[IndexOf(kind)] = p.profile.InternString(DotnetEventKindName(kind));
    }
  }

  // Reads `path` (process `pid`, named `comm`); returns why it stopped
  // early (OK when it read to the end).
  absl::Status ReadFile(const std::string& path, uint32_t pid, const std::string& comm) {
    base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) return absl::NotFoundError(absl::StrCat("cannot open ", path));
    nettrace::NettraceFdSource source(fd.get());
    nettrace::NettraceReader reader(&source);
    if (absl::Status header = reader.ReadHeader(); !header.ok()) return header;
    const int32_t pointer_size = reader.trace().pointer_size;
    pid_ = pid;
    for (DotnetEventProfile& p : out_->profiles) {
      comm_ids_[IndexOf(p.kind)] = p.profile.InternString(comm);
    }
    waiting_.clear();
    NettraceEvent e;
    absl::Status stopped;
    while (true) {
      absl::StatusOr<bool> more = reader.Next(&e);
      if (!more.ok()) {
        stopped = more.status();
        break;
      }
      if (!*more) break;
      const nettrace::NettraceEventMetadata& m = *e.metadata;
      if (m.provider != nettrace::kDotNetRuntimeProvider) continue;
      const uint64_t time_ns = reader.ToMonotonicNs(e.timestamp);
      switch (static_cast<RuntimeEventId>(m.event_id)) {
        case RuntimeEventId::kGcAllocationTick:
          if (auto tick = nettrace::DecodeGcAllocationTick(e.payload, m.version, pointer_size);
              tick.ok()) {
            OnEvent(DotnetEventKind::kAlloc, e, time_ns, tick->amount, tick->type_name);
          }
          break;
        case RuntimeEventId::kExceptionThrown:
          if (auto thrown = nettrace::DecodeExceptionThrown(e.payload, m.version, pointer_size);
              thrown.ok()) {
            OnEvent(DotnetEventKind::kException, e, time_ns, 1, thrown->type);
          }
          break;
        case RuntimeEventId::kContentionStart:
          OnContentionStart(e, time_ns);
          break;
        case RuntimeEventId::kContentionStop: {
          absl::StatusOr<nettrace::ContentionEvent> stop =
              nettrace::DecodeContentionStop(e.payload, m.version);
          OnContentionStop(e, time_ns, stop.ok() ? DurationNs(stop->duration_ns) : 0);
          break;
        }
        default:
          break;
      }
    }
    // Starts still waiting when the session ended: the wait's length is unknown.
    lock_waits().unpaired += waiting_.size();
    waiting_.clear();
    return stopped;
  }

 private:
  DotnetEventProfile& profile(DotnetEventKind kind) { return out_->profiles[IndexOf(kind)]; }
  DotnetEventProfile& lock_waits() { return profile(DotnetEventKind::kLockWait); }

  // The event's frames as location ids of `p`, leaf first, each JIT address
  // at its generation at `time_ns`.
  std::vector<uint32_t> Frames(Profile& p, absl::Span<const uint64_t> ips, uint64_t time_ns) {
    std::vector<uint32_t> ids;
    ips = ips.subspan(0, std::min(ips.size(), kMaxFrames));
    ids.reserve(ips.size() + 1);
    for (uint64_t ip : ips) {
      // Every frame the runtime's stack walk gives is where a call returns
      // to (the leaf too: the thread is inside the runtime raising the
      // event), so the byte before names the calling line, as for the CPU
      // samples' callers.
      const uint8_t adjust = ip > 0 ? 1 : 0;
      Location location;
      location.address = ip;
      location.code.kind = symbolize::CodeKind::kProcess;
      location.code.space = pid_;
      location.code.value = ip - adjust;
      if (jit_ != nullptr) location.code.epoch = jit_->Generation(pid_, ip - adjust, time_ns);
      location.offset_adjust = adjust;
      ids.push_back(p.InternLocation(location));
      if (requested_.insert(location.code).second) {
        out_->requests.push_back({location.code, std::string()});
      }
    }
    return ids;
  }

  // The type frame's location value: one per distinct name (bounded).
  uint64_t TypeId(const std::string& name) {
    std::string shown = name.empty() ? "[unknown type]" : name.substr(0, kMaxTypeNameBytes);
    auto it = type_ids_.find(shown);
    if (it != type_ids_.end()) return it->second;
    if (type_ids_.size() >= kMaxTypeNames) shown = "[more types]";
    auto [at, inserted] = type_ids_.try_emplace(shown, type_ids_.size());
    if (inserted) {
      symbolize::Symbolization s;
      s.module = kTypeFrameModule;
      s.frames.emplace_back().function = shown;
      out_->known_names.Insert({symbolize::CodeKind::kImported, kTypeFrameSpace, at->second},
                               std::move(s));
    }
    return at->second;
  }

  uint32_t TypeFrame(Profile& p, uint64_t type) {
    Location location;
    location.code = {symbolize::CodeKind::kImported, kTypeFrameSpace, type};
    return p.InternLocation(location);
  }

  // An allocation tick or a throw: one sample, its type as the leaf frame.
  void OnEvent(DotnetEventKind kind, const NettraceEvent& e, uint64_t time_ns, uint64_t period,
               const std::string& type) {
    DotnetEventProfile& p = profile(kind);
    if (e.stack.empty()) {
      ++p.no_stack;
      return;
    }
    std::vector<uint32_t> frames = Frames(p.profile, e.stack, time_ns);
    frames.insert(frames.begin(), TypeFrame(p.profile, TypeId(type)));
    AddSample(p, time_ns, e, period, frames);
  }

  void OnContentionStart(const NettraceEvent& e, uint64_t time_ns) {
    if (waiting_.size() >= kMaxWaitingThreads && !waiting_.contains(e.thread_id)) {
      lock_waits().unpaired += waiting_.size();
      waiting_.clear();
    }
    PendingWait& wait = waiting_[e.thread_id];
    if (wait.start_ns != 0) ++lock_waits().unpaired;  // a Start whose Stop never came
    wait.start_ns = std::max<uint64_t>(time_ns, 1);
    wait.frames = Frames(lock_waits().profile, e.stack, time_ns);
  }

  // The wait: the Stop's duration when it has one (V1+), else Start to
  // Stop; the Start's stack (where the thread began to wait), else the
  // Stop's. A Stop whose Start came before the session counts when it says
  // how long it waited.
  void OnContentionStop(const NettraceEvent& e, uint64_t time_ns, uint64_t duration_ns) {
    DotnetEventProfile& p = lock_waits();
    PendingWait wait;
    if (auto it = waiting_.find(e.thread_id); it != waiting_.end()) {
      wait = std::move(it->second);
      waiting_.erase(it);
    }
    if (duration_ns == 0 && wait.start_ns != 0 && time_ns >= wait.start_ns) {
      duration_ns = time_ns - wait.start_ns;
    }
    if (wait.start_ns == 0 && duration_ns == 0) {
      ++p.unpaired;
      return;
    }
    uint64_t start_ns = wait.start_ns;
    if (start_ns == 0) start_ns = time_ns > duration_ns ? time_ns - duration_ns : 0;
    if (wait.frames.empty()) wait.frames = Frames(p.profile, e.stack, time_ns);
    if (wait.frames.empty()) {
      ++p.no_stack;
      return;
    }
    AddSample(p, start_ns, e, WaitMicroseconds(duration_ns), wait.frames);
  }

  void AddSample(DotnetEventProfile& p, uint64_t time_ns, const NettraceEvent& e, uint64_t period,
                 const std::vector<uint32_t>& frames) {
    if (p.profile.samples().size() >= kMaxSamplesPerKind) {
      ++p.over_limit;
      return;
    }
    Sample s;
    s.time_ns = time_ns;
    s.pid = pid_;
    s.tid = static_cast<uint32_t>(e.thread_id);
    s.cpu = e.processor;
    s.period = period;
    s.comm = comm_ids_[IndexOf(p.kind)];
    s.event = event_names_[IndexOf(p.kind)];
    s.stack = p.profile.InternStack(frames);
    p.profile.AddSample(s);
    ++p.events;
    p.weight = AddCapped(p.weight, period);
  }

  symbolize::JitCodeHistory* jit_;
  DotnetEventProfiles* out_;
  uint32_t pid_ = 0;
  uint32_t comm_ids_[3] = {};
  uint32_t event_names_[3] = {};
  absl::flat_hash_set<symbolize::CodeLocation> requested_;
  absl::flat_hash_map<std::string, uint64_t> type_ids_;
  absl::flat_hash_map<uint64_t, PendingWait> waiting_;  // by the runtime's thread id
};

}  // namespace

void DotnetEventProfiles::SetSymbols(const symbolize::SymbolTable& table) {
  // Each profile keeps the names of its own locations only: the run's table
  // names every CPU frame too.
  for (DotnetEventProfile& p : profiles) {
    symbolize::SymbolTable own;
    for (size_t id = 0; id < p.profile.location_count(); ++id) {
      const symbolize::CodeLocation& code = p.profile.location(static_cast<uint32_t>(id)).code;
      if (const symbolize::Symbolization* named = table.Find(code)) own.Insert(code, *named);
    }
    p.profile.SetSymbols(std::move(own));
  }
}

void CountDotnetEventsDropped(const std::vector<recording::DotnetRuntime>& runtimes,
                              DotnetEventProfiles* profiles) {
  if (profiles->profiles.empty()) return;
  for (const recording::DotnetRuntime& runtime : runtimes) {
    for (const recording::DotnetRuntime::Dropped& d : runtime.events_dropped) {
      DotnetEventKind kind;
      if (d.kind == "GCAllocationTick") {
        kind = DotnetEventKind::kAlloc;
      } else if (d.kind == "ContentionStop") {
        kind = DotnetEventKind::kLockWait;
      } else if (d.kind == "ExceptionThrown") {
        kind = DotnetEventKind::kException;
      } else {
        continue;
      }
      DotnetEventProfile& p = profiles->profiles[IndexOf(kind)];
      p.dropped = AddCapped(p.dropped, d.count);
    }
  }
}

DotnetEventProfiles ReadDotnetEventStacks(const std::string& dir, symbolize::JitCodeHistory* jit,
                                          const std::function<std::string(uint32_t)>& comm_of_pid,
                                          base::RunLog* log) {
  DotnetEventProfiles out;
  const std::vector<std::pair<uint32_t, std::string>> found = DotnetEventFiles(dir);
  if (found.empty()) return out;
  EventStackReader reader(jit, &out);
  for (const auto& [pid, name] : found) {
    // The process's name as the recording knew it (the CPU profile's root);
    // as perf names a task it never saw named, else.
    std::string comm = comm_of_pid ? comm_of_pid(pid) : std::string();
    if (comm.empty()) comm = absl::StrCat(":", pid);
    const std::string relative = absl::StrCat(recording::kDotnetEventsDir, "/", name);
    absl::Status read = reader.ReadFile(absl::StrCat(dir, "/", relative), pid, comm);
    // The events' summary (dotnet_runtime_events.h) warns about a damaged
    // file already: one warning per file is enough.
    if (!read.ok() && log != nullptr) {
      log->Info(absl::StrCat(relative, ": event stacks read up to here: ", read.message()));
    }
  }
  // In time order, as the CPU profile's samples (the stream's order is each
  // thread's, interleaved by block).
  for (DotnetEventProfile& p : out.profiles) {
    std::stable_sort(p.profile.mutable_samples().begin(), p.profile.mutable_samples().end(),
                     [](const Sample& a, const Sample& b) { return a.time_ns < b.time_ns; });
  }
  if (log != nullptr) {
    std::string line = "event stacks:";
    for (const DotnetEventProfile& p : out.profiles) {
      absl::StrAppend(&line, " ", DotnetEventKindName(p.kind), " ", p.events, " (", p.weight, " ",
                      DotnetEventUnit(p.kind), ", ", p.no_stack, " without a stack");
      if (p.kind == DotnetEventKind::kLockWait) absl::StrAppend(&line, ", ", p.unpaired, " unpaired");
      if (p.over_limit > 0) absl::StrAppend(&line, ", ", p.over_limit, " past the bound");
      absl::StrAppend(&line, ")");
    }
    absl::StrAppend(&line, "; ", out.requests.size(), " code locations to name");
    log->Info(line);
  }
  return out;
}

}  // namespace profcpu::fold
