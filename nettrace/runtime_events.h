// The .NET runtime's own events that profcpu reads from a NetTrace stream
// (providers Microsoft-Windows-DotNETRuntime and its rundown; layouts from the
// runtime's ClrEtwAll.man): their ids, and a decoder for each one's payload.
// The payload is the target's: every decoder reads only inside it.
#ifndef PROFCPU_NETTRACE_RUNTIME_EVENTS_H_
#define PROFCPU_NETTRACE_RUNTIME_EVENTS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace profcpu::nettrace {

// The runtime provider's events profcpu reads (Microsoft-Windows-DotNETRuntime,
// layouts from the runtime's ClrEtwAll.man). Each decoder takes the event's
// payload and version; fields a version lacks stay zero. DataLoss when the
// payload is shorter than its version's layout.
inline constexpr absl::string_view kDotNetRuntimeProvider = "Microsoft-Windows-DotNETRuntime";

enum class RuntimeEventId : uint32_t {
  kGcStart = 1,
  kGcEnd = 2,
  kGcRestartEeEnd = 3,
  kGcHeapStats = 4,
  kGcRestartEeBegin = 7,
  kGcSuspendEeEnd = 8,
  kGcSuspendEeBegin = 9,
  kGcAllocationTick = 10,  // verbose level: one per ~100 KB allocated, with a stack
  kThreadPoolWorkerThreadStart = 50,
  kThreadPoolWorkerThreadStop = 51,
  kThreadPoolWorkerThreadAdjustmentSample = 54,
  kThreadPoolWorkerThreadAdjustmentAdjustment = 55,
  kExceptionThrown = 80,
  kContentionStart = 81,
  kContentionStop = 91,
  kMethodLoad = 141,  // informational: no names (not decoded)
  kMethodLoadVerbose = 143,
  kMethodUnloadVerbose = 144,  // same layout as MethodLoadVerbose
  kMethodJittingStarted = 145,
  kModuleLoad = 152,
};

// The rundown provider: what the runtime lists at a session's end when asked
// (EventPipeConfig::request_rundown), for code loaded before the session.
inline constexpr absl::string_view kDotNetRundownProvider = "Microsoft-Windows-DotNETRuntimeRundown";
enum class RundownEventId : uint32_t {
  kMethodDcEndVerbose = 144,  // MethodLoadVerbose's layout
  kModuleDcEnd = 154,         // ModuleLoad's layout
};

struct GcStartEvent {
  uint32_t count = 0;
  uint32_t depth = 0;   // the generation collected (V1+)
  uint32_t reason = 0;  // 0 small alloc, 1 induced, ...
  uint32_t type = 0;    // 0 blocking, 1 background, 2 foreground (V1+)
  uint64_t client_sequence_number = 0;  // V2
};
absl::StatusOr<GcStartEvent> DecodeGcStart(absl::string_view payload, uint32_t version);

struct GcEndEvent {
  uint32_t count = 0;
  uint32_t depth = 0;
};
absl::StatusOr<GcEndEvent> DecodeGcEnd(absl::string_view payload, uint32_t version);

struct GcSuspendEeBeginEvent {
  uint32_t reason = 0;
  uint32_t count = 0;  // V1+
};
absl::StatusOr<GcSuspendEeBeginEvent> DecodeGcSuspendEeBegin(absl::string_view payload,
                                                             uint32_t version);

struct GcHeapStatsEvent {
  uint64_t generation_size[5] = {};   // gen0, gen1, gen2, LOH, POH (V2)
  uint64_t total_promoted_size[5] = {};
  uint64_t finalization_promoted_size = 0;
  uint64_t finalization_promoted_count = 0;
  uint32_t pinned_object_count = 0;
  uint32_t sink_block_count = 0;
  uint32_t gc_handle_count = 0;
};
absl::StatusOr<GcHeapStatsEvent> DecodeGcHeapStats(absl::string_view payload, uint32_t version);

// GCAllocationTick (10): the allocation that crossed the ~100 KB tick on a
// heap, and what was allocated on it since the previous tick.
struct GcAllocationTickEvent {
  uint64_t amount = 0;  // bytes since the previous tick: AllocationAmount64
                        // (V2+), else the 32-bit AllocationAmount
  uint32_t kind = 0;    // 0 small object heap, 1 large, 2 pinned
  std::string type_name;     // UTF-8, the allocated object's type (V2+)
  uint64_t type_id = 0;      // its MethodTable (V2+)
  uint32_t heap_index = 0;   // V2+
  uint64_t address = 0;      // of the object (V3+)
  uint64_t object_size = 0;  // its size in bytes (V4)
};
absl::StatusOr<GcAllocationTickEvent> DecodeGcAllocationTick(absl::string_view payload,
                                                             uint32_t version,
                                                             int32_t pointer_size);

struct ExceptionThrownEvent {
  std::string type;     // UTF-8
  std::string message;  // UTF-8
  uint64_t eip = 0;
  uint32_t hresult = 0;
  uint16_t flags = 0;
};
// Version 1 and later (version 0 has no payload).
absl::StatusOr<ExceptionThrownEvent> DecodeExceptionThrown(absl::string_view payload,
                                                           uint32_t version,
                                                           int32_t pointer_size);

struct ContentionEvent {
  uint8_t flags = 0;  // 0 managed, 1 native
  double duration_ns = 0;  // ContentionStop V1+
  uint64_t lock_id = 0;    // ContentionStart V2+
  uint64_t associated_object_id = 0;
  uint64_t lock_owner_thread_id = 0;
};
absl::StatusOr<ContentionEvent> DecodeContentionStart(absl::string_view payload, uint32_t version,
                                                      int32_t pointer_size);
absl::StatusOr<ContentionEvent> DecodeContentionStop(absl::string_view payload, uint32_t version);

// ThreadPoolWorkerThreadStart (50) and Stop (51).
struct ThreadPoolWorkerThreadEvent {
  uint32_t active_worker_thread_count = 0;
  uint32_t retired_worker_thread_count = 0;
};
absl::StatusOr<ThreadPoolWorkerThreadEvent> DecodeThreadPoolWorkerThread(absl::string_view payload,
                                                                         uint32_t version);

// ThreadPoolWorkerThreadAdjustmentAdjustment (55): the hill climbing's or
// the starvation detector's new thread count.
struct ThreadPoolAdjustmentEvent {
  double average_throughput = 0;
  uint32_t new_worker_thread_count = 0;
  uint32_t reason = 0;  // 0 warmup, 1 initializing, 2 random move, 3 climbing
                        // move, 4 change point, 5 stabilizing, 6 starvation,
                        // 7 thread timed out
};
absl::StatusOr<ThreadPoolAdjustmentEvent> DecodeThreadPoolAdjustment(absl::string_view payload,
                                                                     uint32_t version);

struct MethodEvent {
  uint64_t method_id = 0;
  uint64_t module_id = 0;
  uint64_t start_address = 0;  // MethodLoadVerbose only
  uint32_t size = 0;           // MethodLoadVerbose only
  uint32_t token = 0;
  uint32_t flags = 0;          // MethodLoadVerbose only
  uint32_t il_size = 0;        // MethodJittingStarted only
  std::string method_namespace;  // UTF-8: the declaring type
  std::string name;
  std::string signature;
  uint64_t rejit_id = 0;       // MethodLoadVerbose V2
};
// MethodLoadVerbose, MethodUnloadVerbose and the rundown's MethodDCEndVerbose.
absl::StatusOr<MethodEvent> DecodeMethodLoadVerbose(absl::string_view payload, uint32_t version);
absl::StatusOr<MethodEvent> DecodeMethodJittingStarted(absl::string_view payload,
                                                       uint32_t version);

// ModuleLoad (V1+) and the rundown's ModuleDCEnd: the module a method's
// module_id names, with the path its IL was loaded from.
struct ModuleEvent {
  uint64_t module_id = 0;
  uint64_t assembly_id = 0;
  uint32_t flags = 0;
  std::string il_path;      // UTF-8; empty for a module loaded from memory
  std::string native_path;
};
absl::StatusOr<ModuleEvent> DecodeModuleLoad(absl::string_view payload, uint32_t version);

}  // namespace profcpu::nettrace

#endif  // PROFCPU_NETTRACE_RUNTIME_EVENTS_H_
