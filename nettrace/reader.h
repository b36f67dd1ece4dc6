// Reads the NetTrace stream a .NET runtime's EventPipe session writes
// (format versions 4 and 5, what .NET Core 3 to .NET 10 write; docs/nettrace.md
// says where the spec lives and what is accepted).
//
// The stream comes from the target process: it is hostile input. The reader
// pulls bytes from a NettraceSource one object at a time, so its memory is one
// block (at most NettraceLimits::max_block_bytes) plus the event metadata
// (at most max_metadata records); no length field is trusted before it is
// checked against what remains and a cap. Every error is a DataLoss or
// Unimplemented status naming the byte offset in the stream and what was wrong.
#ifndef PROFCPU_COLLECTOR_DOTNET_NETTRACE_READER_H_
#define PROFCPU_COLLECTOR_DOTNET_NETTRACE_READER_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace profcpu::collector::dotnet {

// Where the bytes come from: Read fills up to `n` bytes and returns how many
// (0 at the end of the stream).
class NettraceSource {
 public:
  virtual ~NettraceSource() = default;
  virtual absl::StatusOr<size_t> Read(char* buffer, size_t n) = 0;
};

// Over bytes held by the caller (tests, the fuzzer).
class NettraceStringSource : public NettraceSource {
 public:
  explicit NettraceStringSource(absl::string_view bytes) : bytes_(bytes) {}
  absl::StatusOr<size_t> Read(char* buffer, size_t n) override;

 private:
  absl::string_view bytes_;
};

// Over a file descriptor the caller keeps open (a saved .nettrace file).
class NettraceFdSource : public NettraceSource {
 public:
  explicit NettraceFdSource(int fd) : fd_(fd) {}
  absl::StatusOr<size_t> Read(char* buffer, size_t n) override;

 private:
  int fd_;
};

struct NettraceLimits {
  size_t max_block_bytes = 16 << 20;  // the runtime's blocks are ~100 KiB
  size_t max_metadata = 1 << 16;      // distinct event types
};

// The Trace object at the start of the stream.
struct NettraceTraceInfo {
  int32_t version = 0;          // of the Trace object: 4 (also in V5 files)
  absl::Time sync_time;         // UTC wall time at sync_time_qpc
  int64_t sync_time_qpc = 0;
  int64_t qpc_frequency = 0;    // ticks per second (1e9 on Linux)
  int32_t pointer_size = 0;     // 4 or 8
  int32_t process_id = 0;
  int32_t processor_count = 0;
  int32_t expected_cpu_sampling_rate = 0;
};

// One metadata record: what an event's metadata id stands for.
struct NettraceEventMetadata {
  uint32_t metadata_id = 0;
  std::string provider;     // e.g. "Microsoft-Windows-DotNETRuntime"
  uint32_t event_id = 0;
  std::string event_name;   // often empty for the runtime's own events
  uint64_t keywords = 0;
  uint32_t version = 0;
  uint32_t level = 0;
};

struct NettraceEvent {
  const NettraceEventMetadata* metadata = nullptr;  // valid while the reader lives
  uint64_t thread_id = 0;
  uint64_t capture_thread_id = 0;
  uint32_t processor = 0;
  uint32_t sequence_number = 0;
  uint32_t stack_id = 0;
  int64_t timestamp = 0;  // QPC ticks: NettraceReader::ToTime converts
  bool sorted = false;
  std::array<uint8_t, 16> activity_id{};
  std::array<uint8_t, 16> related_activity_id{};
  absl::string_view payload;  // valid until the next call to Next
  uint64_t offset = 0;        // of the event's header in the stream
};

// What the reader went through, for logs and tests.
struct NettraceCounts {
  uint64_t event_blocks = 0;
  uint64_t metadata_blocks = 0;
  uint64_t stack_blocks = 0;
  uint64_t stacks = 0;
  uint64_t sequence_points = 0;
  uint64_t events = 0;
  uint64_t metadata = 0;
};

class NettraceReader {
 public:
  explicit NettraceReader(NettraceSource* source, NettraceLimits limits = {});

  // Reads the magic, the serialization header and the Trace object.
  absl::Status ReadHeader();
  const NettraceTraceInfo& trace() const { return trace_; }

  // The next event in stream order (not time order: the runtime sorts only
  // between sequence points). False once the end-of-stream tag is read. After
  // an error every later call returns it again.
  absl::StatusOr<bool> Next(NettraceEvent* event);

  // A QPC timestamp of this trace as wall time.
  absl::Time ToTime(int64_t qpc) const;
  // A QPC timestamp as CLOCK_MONOTONIC nanoseconds, the clock profcpu's
  // samples carry: on Linux the runtime's QPC is that clock in ns (frequency
  // 1e9); another frequency is scaled. 0 for a timestamp at or before 0.
  uint64_t ToMonotonicNs(int64_t qpc) const;

  const NettraceCounts& counts() const { return counts_; }
  uint64_t offset() const { return offset_; }

 private:
  absl::Status Fill(size_t n, std::string* out, absl::string_view what);
  absl::StatusOr<uint8_t> Tag(absl::string_view what);
  absl::Status ExpectTag(uint8_t tag, absl::string_view what);
  absl::Status ReadObjectType(std::string* name, int32_t* version, int32_t* min_version);
  absl::Status ReadTrace();
  // Reads the next object up to its block; false at the end of the stream.
  absl::StatusOr<bool> NextBlock();
  // One event blob of the current block, in either encoding.
  absl::Status ReadBlob(NettraceEvent* event, uint32_t* metadata_id);
  absl::Status ParseMetadataBlock();
  absl::Status ParseStackBlock();
  absl::Status ParseSequencePointBlock();
  absl::Status Fail(absl::Status status);

  NettraceSource* source_;
  NettraceLimits limits_;
  NettraceTraceInfo trace_;
  NettraceCounts counts_;
  uint64_t offset_ = 0;
  absl::Status error_;
  bool header_read_ = false;
  bool ended_ = false;
  absl::flat_hash_map<uint32_t, std::unique_ptr<NettraceEventMetadata>> metadata_;
  // The event block being read.
  std::string block_;
  uint64_t block_offset_ = 0;  // stream offset of block_[0]
  size_t block_pos_ = 0;
  bool in_event_block_ = false;
  bool compressed_ = false;
  NettraceEvent previous_;  // header compression state
  uint32_t previous_payload_size_ = 0;
  uint32_t previous_metadata_id_ = 0;
};

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

}  // namespace profcpu::collector::dotnet

#endif  // PROFCPU_COLLECTOR_DOTNET_NETTRACE_READER_H_
