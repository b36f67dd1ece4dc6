#include "collector/dotnet/event_budget.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "nettrace/runtime_events.h"

namespace profcpu::collector::dotnet {
namespace {

using nettrace::RuntimeEventId;

// The runtime provider's ids of kinds named in reports (ClrEtwAll.man);
// the rest are reported by id.
const char* RuntimeEventName(uint32_t id) {
  switch (id) {
    case 1: return "GCStart";
    case 2: return "GCEnd";
    case 3: return "GCRestartEEEnd";
    case 4: return "GCHeapStats";
    case 7: return "GCRestartEEBegin";
    case 8: return "GCSuspendEEEnd";
    case 9: return "GCSuspendEEBegin";
    case 10: return "GCAllocationTick";
    case 35: return "GCTriggered";
    case 50: return "ThreadPoolWorkerThreadStart";
    case 51: return "ThreadPoolWorkerThreadStop";
    case 54: return "ThreadPoolWorkerThreadAdjustmentSample";
    case 55: return "ThreadPoolWorkerThreadAdjustmentAdjustment";
    case 56: return "ThreadPoolWorkerThreadAdjustmentStats";
    case 57: return "ThreadPoolWorkerThreadWait";
    case 80: return "ExceptionThrown";
    case 81: return "ContentionStart";
    case 91: return "ContentionStop";
    case 90: return "ContentionLockCreated";
    case 141: return "MethodLoad";
    case 143: return "MethodLoadVerbose";
    case 144: return "MethodUnloadVerbose";
    case 145: return "MethodJittingStarted";
    case 146: return "MethodJitMemoryAllocatedForCode";
    case 152: return "ModuleLoad";
    case 202: return "GCMarkWithType";
    case 250: return "ExceptionCatchStart";
    case 251: return "ExceptionCatchStop";
    case 252: return "ExceptionFinallyStart";
    case 253: return "ExceptionFinallyStop";
    case 254: return "ExceptionFilterStart";
    case 255: return "ExceptionFilterStop";
    case 256: return "ExceptionThrownStop";
    case 267: return "GCDynamicEvent";
    case 301: return "YieldProcessorMeasurement";
    default: return nullptr;
  }
}

bool Is(uint32_t id, RuntimeEventId which) { return id == static_cast<uint32_t>(which); }

}  // namespace

EventTier TierOf(absl::string_view provider, uint32_t event_id) {
  // The rundown lists what names the code loaded before the session.
  if (provider == nettrace::kDotNetRundownProvider) return EventTier::kNaming;
  if (provider != nettrace::kDotNetRuntimeProvider) return EventTier::kBulk;
  const uint32_t id = event_id;
  if (Is(id, RuntimeEventId::kMethodLoad) || Is(id, RuntimeEventId::kMethodLoadVerbose) ||
      Is(id, RuntimeEventId::kMethodUnloadVerbose) ||
      Is(id, RuntimeEventId::kMethodJittingStarted) || Is(id, RuntimeEventId::kModuleLoad) ||
      Is(id, RuntimeEventId::kGcStart) || Is(id, RuntimeEventId::kGcEnd) ||
      Is(id, RuntimeEventId::kGcSuspendEeBegin) || Is(id, RuntimeEventId::kGcRestartEeEnd) ||
      Is(id, RuntimeEventId::kGcHeapStats) ||
      Is(id, RuntimeEventId::kThreadPoolWorkerThreadStart) ||
      Is(id, RuntimeEventId::kThreadPoolWorkerThreadStop) ||
      Is(id, RuntimeEventId::kThreadPoolWorkerThreadAdjustmentAdjustment)) {
    return EventTier::kNaming;
  }
  if (Is(id, RuntimeEventId::kExceptionThrown) || Is(id, RuntimeEventId::kContentionStart) ||
      Is(id, RuntimeEventId::kContentionStop)) {
    return EventTier::kCounted;
  }
  return EventTier::kBulk;
}

std::string EventKindName(absl::string_view provider, uint32_t event_id) {
  if (provider == nettrace::kDotNetRuntimeProvider) {
    if (const char* name = RuntimeEventName(event_id)) return name;
    return absl::StrCat("DotNETRuntime/", event_id);
  }
  if (provider == nettrace::kDotNetRundownProvider) return absl::StrCat("Rundown/", event_id);
  return absl::StrCat(provider, "/", event_id);
}

EventBudget::EventBudget(uint64_t max_bytes, uint64_t planned_seconds)
    : max_bytes_(max_bytes),
      reserve_(max_bytes / 8),
      // The bank is spent once on top of the rate: both fit in the cap.
      rate_(static_cast<double>(max_bytes - max_bytes / 8) /
            static_cast<double>((planned_seconds > 0 ? planned_seconds : kPlannedSeconds) +
                                kBurstSeconds)),
      capacity_(rate_ * kBurstSeconds),
      tokens_(capacity_) {}

void EventBudget::Charge(uint64_t bytes) {
  kept_bytes_ += bytes;
  if (!rundown_) tokens_ -= static_cast<double>(bytes);
}

bool EventBudget::Keep(absl::string_view provider, uint32_t event_id, uint64_t bytes,
                       uint64_t time_ns) {
  if (last_ns_ == 0) last_ns_ = time_ns;
  if (time_ns > last_ns_) {
    tokens_ = std::min(capacity_, tokens_ + rate_ * static_cast<double>(time_ns - last_ns_) / 1e9);
    last_ns_ = time_ns;
  }
  const EventTier tier = TierOf(provider, event_id);
  // The hard line: the cap, less the rundown's reserve until it begins.
  const uint64_t limit = rundown_ ? max_bytes_ : max_bytes_ - reserve_;
  bool keep = kept_bytes_ + bytes <= limit;
  if (keep && !rundown_) {
    switch (tier) {
      case EventTier::kNaming: break;
      case EventTier::kCounted: keep = tokens_ >= static_cast<double>(bytes); break;
      case EventTier::kBulk: keep = tokens_ - static_cast<double>(bytes) >= capacity_ / 2; break;
    }
  }
  if (keep) {
    kept_bytes_ += bytes;
    // Naming events are paid for too (the bucket may go negative), so a
    // storm of them leaves less room for the others.
    if (!rundown_) tokens_ -= static_cast<double>(bytes);
    return true;
  }
  // Past the hard line, every kind is cut: reported as one kind, "all".
  const bool over_cap = kept_bytes_ + bytes > limit;
  recording::DotnetRuntime::Dropped& d =
      dropped_[over_cap ? std::string("all") : EventKindName(provider, event_id)];
  if (d.count == 0) {
    d.kind = over_cap ? "all" : EventKindName(provider, event_id);
    d.first_ns = time_ns;
  }
  ++d.count;
  d.bytes += bytes;
  return false;
}

std::vector<recording::DotnetRuntime::Dropped> EventBudget::Dropped() const {
  std::vector<recording::DotnetRuntime::Dropped> out;
  for (const auto& [kind, d] : dropped_) out.push_back(d);
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.count > b.count; });
  return out;
}

}  // namespace profcpu::collector::dotnet
