#include "nettrace/runtime_events.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "nettrace/cursor.h"

namespace profcpu::nettrace {
namespace {

// Sequential reads of an event payload; the first failure sticks.
class PayloadReader {
 public:
  PayloadReader(absl::string_view payload, absl::string_view event)
      : c_(payload, 0), event_(event) {}
  template <typename T>
  T Get() {
    T v{};
    if (!status_.ok()) return v;
    // Checked here, not by the cursor: its message would be built only to
    // be replaced (a payload of another event's layout fails here often).
    if (c_.remaining() < sizeof(T)) {
      status_ = Ended();
    } else {
      (void)c_.Fixed(&v, "a field");
    }
    return v;
  }
  uint64_t Pointer(int32_t size) { return size == 4 ? Get<uint32_t>() : Get<uint64_t>(); }
  std::string String() {
    std::string s;
    if (status_.ok()) status_ = Annotate(c_.Utf16z(&s, "a string field"));
    return s;
  }
  const absl::Status& status() const { return status_; }

 private:
  absl::Status Annotate(absl::Status s) { return s.ok() ? s : Ended(); }
  absl::Status Ended() const {
    return absl::DataLossError(absl::StrCat("a ", event_, " payload of ", c_.pos() + c_.remaining(),
                                            " bytes ends inside the field at byte ", c_.pos()));
  }
  NettraceCursor c_;
  absl::string_view event_;
  absl::Status status_;
};

}  // namespace

absl::StatusOr<GcStartEvent> DecodeGcStart(absl::string_view payload, uint32_t version) {
  PayloadReader r(payload, "GCStart");
  GcStartEvent e;
  e.count = r.Get<uint32_t>();
  if (version >= 1) e.depth = r.Get<uint32_t>();
  e.reason = r.Get<uint32_t>();
  if (version >= 1) {
    e.type = r.Get<uint32_t>();
    r.Get<uint16_t>();  // ClrInstanceID
  }
  if (version >= 2) e.client_sequence_number = r.Get<uint64_t>();
  if (!r.status().ok()) return r.status();
  return e;
}

absl::StatusOr<GcEndEvent> DecodeGcEnd(absl::string_view payload, uint32_t version) {
  PayloadReader r(payload, "GCEnd");
  GcEndEvent e;
  e.count = r.Get<uint32_t>();
  e.depth = r.Get<uint32_t>();
  if (version >= 1) r.Get<uint16_t>();
  if (!r.status().ok()) return r.status();
  return e;
}

absl::StatusOr<GcSuspendEeBeginEvent> DecodeGcSuspendEeBegin(absl::string_view payload,
                                                             uint32_t version) {
  PayloadReader r(payload, "GCSuspendEEBegin");
  GcSuspendEeBeginEvent e;
  if (version == 0) {
    e.reason = r.Get<uint16_t>();
  } else {
    e.reason = r.Get<uint32_t>();
    e.count = r.Get<uint32_t>();
    r.Get<uint16_t>();
  }
  if (!r.status().ok()) return r.status();
  return e;
}

absl::StatusOr<GcHeapStatsEvent> DecodeGcHeapStats(absl::string_view payload, uint32_t version) {
  PayloadReader r(payload, "GCHeapStats");
  GcHeapStatsEvent e;
  for (int g = 0; g < 4; ++g) {
    e.generation_size[g] = r.Get<uint64_t>();
    e.total_promoted_size[g] = r.Get<uint64_t>();
  }
  e.finalization_promoted_size = r.Get<uint64_t>();
  e.finalization_promoted_count = r.Get<uint64_t>();
  e.pinned_object_count = r.Get<uint32_t>();
  e.sink_block_count = r.Get<uint32_t>();
  e.gc_handle_count = r.Get<uint32_t>();
  if (version >= 1) r.Get<uint16_t>();
  if (version >= 2) {
    e.generation_size[4] = r.Get<uint64_t>();
    e.total_promoted_size[4] = r.Get<uint64_t>();
  }
  if (!r.status().ok()) return r.status();
  return e;
}

absl::StatusOr<GcAllocationTickEvent> DecodeGcAllocationTick(absl::string_view payload,
                                                             uint32_t version,
                                                             int32_t pointer_size) {
  PayloadReader r(payload, "GCAllocationTick");
  GcAllocationTickEvent e;
  e.amount = r.Get<uint32_t>();
  e.kind = r.Get<uint32_t>();
  if (version >= 1) r.Get<uint16_t>();  // ClrInstanceID
  if (version >= 2) {
    // The 32-bit amount wraps past 4 GB; the 64-bit one is the truth.
    e.amount = r.Get<uint64_t>();
    e.type_id = r.Pointer(pointer_size);
    e.type_name = r.String();
    e.heap_index = r.Get<uint32_t>();
  }
  if (version >= 3) e.address = r.Pointer(pointer_size);
  if (version >= 4) e.object_size = r.Get<uint64_t>();
  if (!r.status().ok()) return r.status();
  return e;
}

absl::StatusOr<ExceptionThrownEvent> DecodeExceptionThrown(absl::string_view payload,
                                                           uint32_t version,
                                                           int32_t pointer_size) {
  if (version < 1) {
    return absl::InvalidArgumentError("ExceptionThrown version 0 carries no payload");
  }
  PayloadReader r(payload, "ExceptionThrown");
  ExceptionThrownEvent e;
  e.type = r.String();
  e.message = r.String();
  e.eip = r.Pointer(pointer_size);
  e.hresult = r.Get<uint32_t>();
  e.flags = r.Get<uint16_t>();
  r.Get<uint16_t>();
  if (!r.status().ok()) return r.status();
  return e;
}

absl::StatusOr<ContentionEvent> DecodeContentionStart(absl::string_view payload, uint32_t version,
                                                      int32_t pointer_size) {
  PayloadReader r(payload, "ContentionStart");
  ContentionEvent e;
  if (version >= 1) {
    e.flags = r.Get<uint8_t>();
    r.Get<uint16_t>();
  }
  if (version >= 2) {
    e.lock_id = r.Pointer(pointer_size);
    e.associated_object_id = r.Pointer(pointer_size);
    e.lock_owner_thread_id = r.Get<uint64_t>();
  }
  if (!r.status().ok()) return r.status();
  return e;
}

absl::StatusOr<ContentionEvent> DecodeContentionStop(absl::string_view payload, uint32_t version) {
  PayloadReader r(payload, "ContentionStop");
  ContentionEvent e;
  e.flags = r.Get<uint8_t>();
  r.Get<uint16_t>();
  if (version >= 1) e.duration_ns = r.Get<double>();
  if (!r.status().ok()) return r.status();
  return e;
}

absl::StatusOr<ThreadPoolWorkerThreadEvent> DecodeThreadPoolWorkerThread(absl::string_view payload,
                                                                         uint32_t version) {
  PayloadReader r(payload, "ThreadPoolWorkerThread");
  ThreadPoolWorkerThreadEvent e;
  e.active_worker_thread_count = r.Get<uint32_t>();
  e.retired_worker_thread_count = r.Get<uint32_t>();
  (void)version;  // .NET 10 writes version 0; a ClrInstanceID may follow
  if (!r.status().ok()) return r.status();
  return e;
}

absl::StatusOr<ThreadPoolAdjustmentEvent> DecodeThreadPoolAdjustment(absl::string_view payload,
                                                                     uint32_t version) {
  PayloadReader r(payload, "ThreadPoolWorkerThreadAdjustmentAdjustment");
  ThreadPoolAdjustmentEvent e;
  e.average_throughput = r.Get<double>();
  e.new_worker_thread_count = r.Get<uint32_t>();
  e.reason = r.Get<uint32_t>();
  (void)version;  // .NET 10 writes version 0; a ClrInstanceID may follow
  if (!r.status().ok()) return r.status();
  return e;
}

absl::StatusOr<MethodEvent> DecodeMethodLoadVerbose(absl::string_view payload, uint32_t version) {
  PayloadReader r(payload, "MethodLoadVerbose");
  MethodEvent e;
  e.method_id = r.Get<uint64_t>();
  e.module_id = r.Get<uint64_t>();
  e.start_address = r.Get<uint64_t>();
  e.size = r.Get<uint32_t>();
  e.token = r.Get<uint32_t>();
  e.flags = r.Get<uint32_t>();
  e.method_namespace = r.String();
  e.name = r.String();
  e.signature = r.String();
  if (version >= 1) r.Get<uint16_t>();
  if (version >= 2) e.rejit_id = r.Get<uint64_t>();
  if (!r.status().ok()) return r.status();
  return e;
}

absl::StatusOr<MethodEvent> DecodeMethodJittingStarted(absl::string_view payload,
                                                       uint32_t version) {
  PayloadReader r(payload, "MethodJittingStarted");
  MethodEvent e;
  e.method_id = r.Get<uint64_t>();
  e.module_id = r.Get<uint64_t>();
  e.token = r.Get<uint32_t>();
  e.il_size = r.Get<uint32_t>();
  e.method_namespace = r.String();
  e.name = r.String();
  e.signature = r.String();
  if (version >= 1) r.Get<uint16_t>();
  if (!r.status().ok()) return r.status();
  return e;
}

absl::StatusOr<ModuleEvent> DecodeModuleLoad(absl::string_view payload, uint32_t version) {
  PayloadReader r(payload, "ModuleLoad");
  ModuleEvent e;
  e.module_id = r.Get<uint64_t>();
  e.assembly_id = r.Get<uint64_t>();
  e.flags = r.Get<uint32_t>();
  r.Get<uint32_t>();  // Reserved1
  e.il_path = r.String();
  e.native_path = r.String();
  // V1 adds ClrInstanceID, V2 the PDB signatures: not needed.
  (void)version;
  if (!r.status().ok()) return r.status();
  return e;
}

}  // namespace profcpu::nettrace
