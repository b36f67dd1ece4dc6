#include "recording/record_codec.h"

#include <type_traits>

#include "absl/strings/str_cat.h"
#include "base/byte_io.h"
#include "base/status_macros.h"

namespace profcpu::recording {
namespace {

using base::ByteReader;
using base::ByteWriter;

void EncodeIps(ByteWriter& w, const std::vector<uint64_t>& ips) {
  w.U32(static_cast<uint32_t>(ips.size()));
  for (uint64_t ip : ips) w.U64(ip);
}

bool DecodeIps(ByteReader& r, std::vector<uint64_t>* ips) {
  uint32_t n = r.U32();
  if (!r.ok() || n > kMaxCallchainDepth || n * sizeof(uint64_t) > r.remaining()) return false;
  ips->resize(n);
  for (uint32_t i = 0; i < n; ++i) (*ips)[i] = r.U64();
  return r.ok();
}

// StackTrace ids of the BPF records (kNoStack is -1, stored as u32).
void EncodeStackIds(ByteWriter& w, int32_t kernel_stack, int32_t user_stack) {
  w.U32(static_cast<uint32_t>(kernel_stack));
  w.U32(static_cast<uint32_t>(user_stack));
}

void DecodeStackIds(ByteReader& r, int32_t* kernel_stack, int32_t* user_stack) {
  *kernel_stack = static_cast<int32_t>(r.U32());
  *user_stack = static_cast<int32_t>(r.U32());
}

// The user registers and stack copy appended to a Sample (-callgraph dwarf,
// fp+cfi) or an OffCpuSample (fp+cfi); written only when there is one, so
// records without them keep their older size.
void EncodeUserTail(ByteWriter& w, uint32_t abi, const std::vector<uint64_t>& regs,
                    const std::string& stack) {
  if (abi == 0 && regs.empty() && stack.empty()) return;
  w.U32(abi);
  w.U32(static_cast<uint32_t>(regs.size()));
  for (uint64_t reg : regs) w.U64(reg);
  w.String(stack);
}

absl::Status DecodeUserTail(ByteReader& r, const char* what, uint32_t* abi,
                            std::vector<uint64_t>* regs, std::string* stack) {
  if (r.remaining() == 0) return absl::OkStatus();
  *abi = r.U32();
  uint32_t n = r.U32();
  if (!r.ok() || n > kMaxUserRegs || n * sizeof(uint64_t) > r.remaining()) {
    return absl::DataLossError(absl::StrCat(what, ": bad user register count"));
  }
  regs->resize(n);
  for (uint64_t& reg : *regs) reg = r.U64();
  const absl::string_view bytes = r.StringView();
  stack->assign(bytes.data(), bytes.size());
  if (stack->size() > kMaxUserStack) {
    return absl::DataLossError(absl::StrCat(what, ": user stack copy over 65528 bytes"));
  }
  return absl::OkStatus();
}

void EncodeTask(ByteWriter& w, const TaskEvent& t) {
  w.U64(t.time_ns);
  w.U32(t.pid);
  w.U32(t.ppid);
  w.U32(t.tid);
  w.U32(t.ptid);
}

void DecodeTask(ByteReader& r, TaskEvent* t) {
  t->time_ns = r.U64();
  t->pid = r.U32();
  t->ppid = r.U32();
  t->tid = r.U32();
  t->ptid = r.U32();
}

RecordType TypeOf(const Record& record) {
  return std::visit(
      [](const auto& r) -> RecordType {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, Header>) return RecordType::kHeader;
        if constexpr (std::is_same_v<T, Sample>) return RecordType::kSample;
        if constexpr (std::is_same_v<T, Mmap>) return RecordType::kMmap;
        if constexpr (std::is_same_v<T, Comm>) return RecordType::kComm;
        if constexpr (std::is_same_v<T, Fork>) return RecordType::kFork;
        if constexpr (std::is_same_v<T, Exit>) return RecordType::kExit;
        if constexpr (std::is_same_v<T, Lost>) return RecordType::kLost;
        if constexpr (std::is_same_v<T, ProcessInfo>) return RecordType::kProcessInfo;
        if constexpr (std::is_same_v<T, Finish>) return RecordType::kFinish;
        if constexpr (std::is_same_v<T, StackTrace>) return RecordType::kStackTrace;
        if constexpr (std::is_same_v<T, OffCpuSample>) return RecordType::kOffCpuSample;
        if constexpr (std::is_same_v<T, StackSample>) return RecordType::kStackSample;
        if constexpr (std::is_same_v<T, DotnetRuntime>) return RecordType::kDotnetRuntime;
      },
      record);
}

void EncodePayload(const Record& record, ByteWriter& w) {
  std::visit(
      [&w](const auto& r) {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, Header>) {
          w.U32(r.format_version);
          w.String(r.profcpu_version);
          w.String(r.event_name);
          w.U32(r.event_type);
          w.U64(r.event_config);
          w.U8(r.frequency_mode ? 1 : 0);
          w.U64(r.sample_rate);
          w.U32(static_cast<uint32_t>(r.clock_id));
          w.U64(r.start_time_ns);
          w.I64(r.start_realtime_ns);
          w.U32(r.cpu_count);
          w.String(r.callgraph);
          w.String(r.hostname);
          w.String(r.kernel_release);
          w.String(r.boot_id);
          w.String(r.target);
          w.String(r.command_line);
          w.String(r.mode);
          w.String(r.backend);
          w.U64(r.user_regs_mask);
          w.U32(r.user_stack_size);
          w.U64(r.counted_interval_ns);
        } else if constexpr (std::is_same_v<T, Sample>) {
          w.U64(r.time_ns);
          w.U32(r.pid);
          w.U32(r.tid);
          w.U32(r.cpu);
          w.U64(r.period);
          w.U8(r.truncated ? 1 : 0);
          EncodeIps(w, r.kernel_ips);
          EncodeIps(w, r.user_ips);
          // The DWARF tail, only on samples that have one (version 2).
          EncodeUserTail(w, r.user_regs_abi, r.user_regs, r.user_stack);
        } else if constexpr (std::is_same_v<T, Mmap>) {
          w.U64(r.time_ns);
          w.U32(r.pid);
          w.U32(r.tid);
          w.U64(r.start);
          w.U64(r.length);
          w.U64(r.file_offset);
          w.U32(r.dev_major);
          w.U32(r.dev_minor);
          w.U64(r.inode);
          w.U64(r.inode_generation);
          w.U32(r.prot);
          w.U32(r.flags);
          w.U8(r.synthesized ? 1 : 0);
          w.String(r.build_id);
          w.String(r.filename);
        } else if constexpr (std::is_same_v<T, Comm>) {
          w.U64(r.time_ns);
          w.U32(r.pid);
          w.U32(r.tid);
          w.U8(static_cast<uint8_t>((r.exec ? 1 : 0) | (r.synthesized ? 2 : 0)));
          w.String(r.comm);
        } else if constexpr (std::is_same_v<T, Fork> || std::is_same_v<T, Exit>) {
          EncodeTask(w, r);
        } else if constexpr (std::is_same_v<T, Lost>) {
          w.U64(r.time_ns);
          w.U32(r.cpu);
          w.U64(r.count);
          w.U32(static_cast<uint32_t>(r.reason));
        } else if constexpr (std::is_same_v<T, ProcessInfo>) {
          w.U64(r.time_ns);
          w.U32(r.pid);
          w.U32(static_cast<uint32_t>(r.namespace_pids.size()));
          for (uint32_t p : r.namespace_pids) w.U32(p);
          w.String(r.command_line);
          w.String(r.jit_directory);
        } else if constexpr (std::is_same_v<T, Finish>) {
          w.U64(r.end_time_ns);
          w.U64(r.samples);
          w.U64(r.lost);
          w.String(r.stop_reason);
        } else if constexpr (std::is_same_v<T, StackTrace>) {
          w.U64(r.time_ns);
          w.U32(r.id);
          w.U8(static_cast<uint8_t>((r.kernel ? 1 : 0) | (r.truncated ? 2 : 0)));
          EncodeIps(w, r.ips);
        } else if constexpr (std::is_same_v<T, OffCpuSample>) {
          w.U64(r.time_ns);
          w.U64(r.duration_ns);
          w.U32(r.pid);
          w.U32(r.tid);
          w.U32(r.cpu);
          w.U32(r.state);
          EncodeStackIds(w, r.kernel_stack, r.user_stack);
          EncodeUserTail(w, r.user_regs_abi, r.user_regs, r.user_stack_copy);
        } else if constexpr (std::is_same_v<T, StackSample>) {
          w.U64(r.time_ns);
          w.U32(r.pid);
          w.U32(r.tid);
          w.U32(r.cpu);
          w.U64(r.count);
          w.U64(r.period);
          EncodeStackIds(w, r.kernel_stack, r.user_stack);
        } else if constexpr (std::is_same_v<T, DotnetRuntime>) {
          w.U64(r.time_ns);
          w.U32(r.pid);
          w.String(r.runtime_version);
          w.String(r.perf_maps);
          w.String(r.perf_map_configured);
          w.U64(r.events_bytes);
          w.U32(static_cast<uint32_t>(r.events_dropped.size()));
          for (const DotnetRuntime::Dropped& d : r.events_dropped) {
            w.String(d.kind);
            w.U64(d.count);
            w.U64(d.bytes);
            w.U64(d.first_ns);
          }
        }
      },
      record);
}

// Maximum nesting of PID namespaces the kernel allows (MAX_PID_NS_LEVEL is 32).
constexpr uint32_t kMaxNamespaceDepth = 64;
// Kinds of dropped .NET events in one DotnetRuntime record (the budget
// tracks far fewer).
constexpr uint32_t kMaxDroppedKinds = 1024;

}  // namespace

void EncodeRecord(const Record& record, std::string* out) {
  size_t prefix_at = out->size();
  ByteWriter w(out);
  w.U32(static_cast<uint32_t>(TypeOf(record)));
  w.U32(0);  // payload size, patched below
  size_t payload_at = out->size();
  EncodePayload(record, w);
  uint32_t size = static_cast<uint32_t>(out->size() - payload_at);
  std::memcpy(out->data() + prefix_at + 4, &size, sizeof(size));
}

namespace {

// Every field of `s` is set (a reused Sample keeps only its capacity).
absl::Status DecodeSample(ByteReader& r, Sample* s) {
  s->time_ns = r.U64();
  s->pid = r.U32();
  s->tid = r.U32();
  s->cpu = r.U32();
  s->period = r.U64();
  s->truncated = r.U8() != 0;
  if (!DecodeIps(r, &s->kernel_ips) || !DecodeIps(r, &s->user_ips)) {
    return absl::DataLossError("sample record: bad call chain");
  }
  // -callgraph dwarf and fp+cfi: registers and stack (absent: none)
  s->user_regs_abi = 0;
  s->user_regs.clear();
  s->user_stack.clear();
  return DecodeUserTail(r, "sample", &s->user_regs_abi, &s->user_regs, &s->user_stack);
}

}  // namespace

absl::Status DecodeRecordInto(uint32_t type, absl::string_view payload, Record* record) {
  if (static_cast<RecordType>(type) == RecordType::kSample) {
    // Most records are samples: decoded into the one already there, its
    // vectors keep their memory (no allocation per sample).
    Sample* sample = std::get_if<Sample>(record);
    if (sample == nullptr) sample = &record->emplace<Sample>();
    ByteReader r(payload);
    PROFCPU_RETURN_IF_ERROR(DecodeSample(r, sample));
    if (!r.ok()) {
      return absl::DataLossError(absl::StrCat("record of type ", type, " is truncated"));
    }
    return absl::OkStatus();
  }
  PROFCPU_ASSIGN_OR_RETURN(*record, DecodeRecord(type, payload));
  return absl::OkStatus();
}

absl::StatusOr<Record> DecodeRecord(uint32_t type, absl::string_view payload) {
  ByteReader r(payload);
  Record record;
  switch (static_cast<RecordType>(type)) {
    case RecordType::kHeader: {
      Header h;
      h.format_version = r.U32();
      h.profcpu_version = r.String();
      h.event_name = r.String();
      h.event_type = r.U32();
      h.event_config = r.U64();
      h.frequency_mode = r.U8() != 0;
      h.sample_rate = r.U64();
      h.clock_id = static_cast<int32_t>(r.U32());
      h.start_time_ns = r.U64();
      h.start_realtime_ns = r.I64();
      h.cpu_count = r.U32();
      h.callgraph = r.String();
      h.hostname = r.String();
      h.kernel_release = r.String();
      h.boot_id = r.String();
      h.target = r.String();
      h.command_line = r.String();
      // Appended later: absent from older recordings.
      if (r.remaining() > 0) h.mode = r.String();
      if (r.remaining() > 0) h.backend = r.String();
      if (r.remaining() > 0) {
        h.user_regs_mask = r.U64();
        h.user_stack_size = r.U32();
      }
      if (r.remaining() > 0) h.counted_interval_ns = r.U64();
      record = std::move(h);
      break;
    }
    case RecordType::kSample: {
      Sample s;
      PROFCPU_RETURN_IF_ERROR(DecodeSample(r, &s));
      record = std::move(s);
      break;
    }
    case RecordType::kMmap: {
      Mmap m;
      m.time_ns = r.U64();
      m.pid = r.U32();
      m.tid = r.U32();
      m.start = r.U64();
      m.length = r.U64();
      m.file_offset = r.U64();
      m.dev_major = r.U32();
      m.dev_minor = r.U32();
      m.inode = r.U64();
      m.inode_generation = r.U64();
      m.prot = r.U32();
      m.flags = r.U32();
      m.synthesized = r.U8() != 0;
      m.build_id = r.String();
      m.filename = r.String();
      record = std::move(m);
      break;
    }
    case RecordType::kComm: {
      Comm c;
      c.time_ns = r.U64();
      c.pid = r.U32();
      c.tid = r.U32();
      uint8_t flags = r.U8();
      c.exec = (flags & 1) != 0;
      c.synthesized = (flags & 2) != 0;
      c.comm = r.String();
      record = std::move(c);
      break;
    }
    case RecordType::kFork: {
      Fork f;
      DecodeTask(r, &f);
      record = f;
      break;
    }
    case RecordType::kExit: {
      Exit e;
      DecodeTask(r, &e);
      record = e;
      break;
    }
    case RecordType::kLost: {
      Lost l;
      l.time_ns = r.U64();
      l.cpu = r.U32();
      l.count = r.U64();
      l.reason = static_cast<LossReason>(r.U32());
      record = l;
      break;
    }
    case RecordType::kProcessInfo: {
      ProcessInfo p;
      p.time_ns = r.U64();
      p.pid = r.U32();
      uint32_t n = r.U32();
      if (!r.ok() || n > kMaxNamespaceDepth) {
        return absl::DataLossError("process record: bad namespace depth");
      }
      for (uint32_t i = 0; i < n; ++i) p.namespace_pids.push_back(r.U32());
      p.command_line = r.String();
      // Added after version 1 was first written: absent in the oldest files.
      if (r.ok() && r.remaining() > 0) p.jit_directory = r.String();
      record = std::move(p);
      break;
    }
    case RecordType::kFinish: {
      Finish f;
      f.end_time_ns = r.U64();
      f.samples = r.U64();
      f.lost = r.U64();
      f.stop_reason = r.String();
      record = std::move(f);
      break;
    }
    case RecordType::kStackTrace: {
      StackTrace t;
      t.time_ns = r.U64();
      t.id = r.U32();
      uint8_t flags = r.U8();
      t.kernel = (flags & 1) != 0;
      t.truncated = (flags & 2) != 0;
      if (!DecodeIps(r, &t.ips)) return absl::DataLossError("stack record: bad call chain");
      record = std::move(t);
      break;
    }
    case RecordType::kOffCpuSample: {
      OffCpuSample o;
      o.time_ns = r.U64();
      o.duration_ns = r.U64();
      o.pid = r.U32();
      o.tid = r.U32();
      o.cpu = r.U32();
      o.state = r.U32();
      DecodeStackIds(r, &o.kernel_stack, &o.user_stack);
      // -callgraph fp+cfi (version 3): registers and stack at the switch-out
      if (absl::Status tail = DecodeUserTail(r, "off-CPU record", &o.user_regs_abi, &o.user_regs,
                                             &o.user_stack_copy);
          !tail.ok()) {
        return tail;
      }
      record = std::move(o);
      break;
    }
    case RecordType::kStackSample: {
      StackSample s;
      s.time_ns = r.U64();
      s.pid = r.U32();
      s.tid = r.U32();
      s.cpu = r.U32();
      s.count = r.U64();
      s.period = r.U64();
      DecodeStackIds(r, &s.kernel_stack, &s.user_stack);
      record = s;
      break;
    }
    case RecordType::kDotnetRuntime: {
      DotnetRuntime d;
      d.time_ns = r.U64();
      d.pid = r.U32();
      d.runtime_version = r.String();
      d.perf_maps = r.String();
      d.perf_map_configured = r.String();
      d.events_bytes = r.U64();
      uint32_t n = r.U32();
      if (!r.ok() || n > kMaxDroppedKinds) {
        return absl::DataLossError(".NET runtime record: bad count of dropped event kinds");
      }
      for (uint32_t i = 0; i < n && r.ok(); ++i) {
        DotnetRuntime::Dropped dropped;
        dropped.kind = r.String();
        dropped.count = r.U64();
        dropped.bytes = r.U64();
        dropped.first_ns = r.U64();
        d.events_dropped.push_back(std::move(dropped));
      }
      record = std::move(d);
      break;
    }
    default:
      return absl::NotFoundError(absl::StrCat("unknown record type ", type));
  }
  if (!r.ok()) {
    return absl::DataLossError(absl::StrCat("record of type ", type, " is truncated"));
  }
  return record;
}

uint64_t RecordTime(const Record& record) {
  return std::visit(
      [](const auto& r) -> uint64_t {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, Header>) return r.start_time_ns;
        else if constexpr (std::is_same_v<T, Finish>) return r.end_time_ns;
        else return r.time_ns;
      },
      record);
}

}  // namespace profcpu::recording
