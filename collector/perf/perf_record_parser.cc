#include "collector/perf/perf_record_parser.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <cstring>

#include "base/byte_io.h"
#include "recording/record_codec.h"

namespace profcpu::collector {
namespace {

// With sample_id_all, every non-sample record ends with the sample_type
// fields TID (pid, tid), TIME and CPU (cpu, reserved): 24 bytes for kSampleType.
constexpr size_t kSampleIdSize = 8 + 8 + 8;

// Call chain entries at or above this value are context markers
// (PERF_CONTEXT_KERNEL, PERF_CONTEXT_USER, ...), not addresses.
constexpr uint64_t kContextMarkerMin = static_cast<uint64_t>(PERF_CONTEXT_MAX);

// x86-64 splits canonical addresses: the kernel owns the upper half.
bool IsKernelAddress(uint64_t ip) { return ip >= 0xffff800000000000ull; }

// -callgraph fp+cfi: how many of a sample's `copied` stack bytes (`stack`)
// the repairs after collection can read. The leaf repair unwinds from SP
// until it meets the kernel's frame-pointer chain, whose first record is at
// the sampled BP: it reads nothing at or above BP + 16. The .NET OSR repair
// (symbolize/dotnet_osr_repair.h) looks for a record that lies below the OSR
// frame's caller's frame record: below [BP] when the OSR method is the leaf,
// below [[BP]] when it called the leaf. So the copy is kept up to the end of
// the record two links above BP ([[BP]] + 16), or all of it when a link
// rises beyond it; a link that does not rise (the chain's end, or BP was no
// frame pointer) ends it at the record before. Each link costs a frame's
// bytes, for every process (docs/recording-format.md). When BP is not
// inside the copy (0, or not a frame pointer), or its record does not link
// upwards (BP held a pointer to a local), keep all of it: the leaf repair
// may then use every byte, unwinding by CFI as far as the copy goes. Registers are kLeafRegsMask's: BP, SP, IP.
constexpr int kFrameRecordsKept = 3;  // BP's and its two callers'
// A saved frame pointer this far above SP is not believed (a thread's stack
// is 8 MiB by default; frames of a MiB are rare): the chain ends there.
constexpr uint64_t kMaxFrameSpan = 1 << 20;

size_t FrameRecordEnd(const recording::Sample& s, absl::string_view stack, size_t copied) {
  if (s.user_regs.size() < 2) return copied;
  const uint64_t bp = s.user_regs[0];
  const uint64_t sp = s.user_regs[1];
  if (bp < sp || bp - sp >= copied) return copied;
  uint64_t record = bp - sp;  // offsets from SP
  for (int link = 1; link < kFrameRecordsKept && record + 8 <= copied; ++link) {
    uint64_t saved = 0;
    std::memcpy(&saved, stack.data() + record, 8);
    if (saved <= sp + record || saved - sp > kMaxFrameSpan) {
      // BP's own record does not link upwards: BP held data, not a frame
      // pointer (frameless code keeps pointers to its callers' locals
      // there), and CFI will need the stack above it. (The rare sample in a
      // thread's outermost frame keeps its short stack whole too.)
      if (link == 1) return copied;
      break;  // the chain ends here
    }
    if (saved - sp >= copied) return copied;    // the next record is beyond the copy
    record = saved - sp;
  }
  return static_cast<size_t>(std::min<uint64_t>(copied, record + 16));
}

struct SampleId {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t time = 0;
  uint32_t cpu = 0;
};

bool ReadSampleId(absl::string_view bytes, SampleId* id) {
  if (bytes.size() < sizeof(perf_event_header) + kSampleIdSize) return false;
  base::ByteReader r(bytes.substr(bytes.size() - kSampleIdSize));
  id->pid = r.U32();
  id->tid = r.U32();
  id->time = r.U64();
  id->cpu = r.U32();
  return r.ok();
}

// A NUL-terminated string within a fixed area (the area ends before the sample id).
std::string BoundedCString(absl::string_view area) {
  size_t end = area.find('\0');
  return std::string(area.substr(0, end));
}

}  // namespace

std::optional<recording::Record> PerfRecordParser::Parse(absl::string_view bytes) {
  perf_event_header header;
  if (bytes.size() < sizeof(header)) {
    ++malformed_;
    return std::nullopt;
  }
  std::memcpy(&header, bytes.data(), sizeof(header));
  absl::string_view body = bytes.substr(sizeof(header));
  SampleId id;
  switch (header.type) {
    case PERF_RECORD_SAMPLE:
      return ParseSample(body, header.misc);
    case PERF_RECORD_MMAP2: {
      if (!ReadSampleId(bytes, &id) || body.size() < 64 + kSampleIdSize) break;
      base::ByteReader r(body);
      recording::Mmap m;
      m.time_ns = id.time;
      m.pid = r.U32();
      m.tid = r.U32();
      m.start = r.U64();
      m.length = r.U64();
      m.file_offset = r.U64();
      if (header.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
        uint8_t size = r.U8();
        r.U8();
        r.U16();
        char build_id[20];
        for (char& c : build_id) c = static_cast<char>(r.U8());
        m.build_id.assign(build_id, size <= 20 ? size : 20);
      } else {
        m.dev_major = r.U32();
        m.dev_minor = r.U32();
        m.inode = r.U64();
        m.inode_generation = r.U64();
      }
      m.prot = r.U32();
      m.flags = r.U32();
      if (!r.ok()) break;
      m.filename = BoundedCString(body.substr(64, body.size() - 64 - kSampleIdSize));
      return m;
    }
    case PERF_RECORD_COMM: {
      if (!ReadSampleId(bytes, &id) || body.size() < 8 + kSampleIdSize) break;
      base::ByteReader r(body);
      recording::Comm c;
      c.time_ns = id.time;
      c.pid = r.U32();
      c.tid = r.U32();
      c.exec = (header.misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
      c.comm = BoundedCString(body.substr(8, body.size() - 8 - kSampleIdSize));
      return c;
    }
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT: {
      if (body.size() < 24) break;
      base::ByteReader r(body);
      recording::TaskEvent t;
      t.pid = r.U32();
      t.ppid = r.U32();
      t.tid = r.U32();
      t.ptid = r.U32();
      t.time_ns = r.U64();
      if (header.type == PERF_RECORD_FORK) return recording::Fork{t};
      return recording::Exit{t};
    }
    case PERF_RECORD_LOST: {
      if (!ReadSampleId(bytes, &id) || body.size() < 16) break;
      base::ByteReader r(body);
      r.U64();  // event id
      return recording::Lost{id.time, id.cpu, r.U64(), recording::LossReason::kRingBufferFull};
    }
    case PERF_RECORD_LOST_SAMPLES: {
      if (!ReadSampleId(bytes, &id) || body.size() < 8) break;
      base::ByteReader r(body);
      return recording::Lost{id.time, id.cpu, r.U64(), recording::LossReason::kSamplesDropped};
    }
    case PERF_RECORD_THROTTLE: {
      if (!ReadSampleId(bytes, &id)) break;
      return recording::Lost{id.time, id.cpu, 1, recording::LossReason::kThrottled};
    }
    default:
      return std::nullopt;  // UNTHROTTLE, MMAP (we ask for MMAP2), ... not needed
  }
  ++malformed_;
  return std::nullopt;
}

std::optional<recording::Record> PerfRecordParser::ParseSample(absl::string_view body,
                                                              uint16_t misc) {
  base::ByteReader r(body);
  recording::Sample s;
  uint64_t ip = r.U64();
  s.pid = r.U32();
  s.tid = r.U32();
  s.time_ns = r.U64();
  s.cpu = r.U32();
  r.U32();
  s.period = r.U64();
  uint64_t nr = r.U64();
  if (!r.ok() || nr > r.remaining() / sizeof(uint64_t)) {
    ++malformed_;
    return std::nullopt;
  }
  std::vector<uint64_t>* chain = nullptr;
  size_t addresses = 0;
  for (uint64_t i = 0; i < nr; ++i) {
    uint64_t entry = r.U64();
    if (entry >= kContextMarkerMin) {
      if (entry == static_cast<uint64_t>(PERF_CONTEXT_KERNEL)) {
        chain = &s.kernel_ips;
      } else if (entry == static_cast<uint64_t>(PERF_CONTEXT_USER)) {
        chain = &s.user_ips;
      } else {
        chain = nullptr;  // hypervisor / guest contexts: not profiled
      }
      continue;
    }
    ++addresses;
    if (chain == nullptr) continue;
    // The recording holds at most kMaxCallchainDepth frames per context (a
    // deeper chain would make the whole file unreadable); perf_event_max_stack
    // can be raised far above that, so keep the leaf-most frames and say so.
    if (chain->size() < recording::kMaxCallchainDepth) {
      chain->push_back(entry);
    } else {
      s.truncated = true;
    }
  }
  const bool regs = layout_.regs_user_mask != 0;
  if (nr == 0) {
    // No call chain (rare: the kernel could not walk; or, with DWARF
    // sampling, a sample in user mode): keep the sampled IP. In user mode
    // with DWARF the registers below hold it.
    uint16_t mode = misc & PERF_RECORD_MISC_CPUMODE_MASK;
    bool kernel = mode == PERF_RECORD_MISC_KERNEL || (mode == 0 && IsKernelAddress(ip));
    if (kernel) {
      s.kernel_ips.push_back(ip);
    } else if (layout_.user_chain) {
      s.user_ips.push_back(ip);
    }
  }
  s.truncated = s.truncated || (max_stack_ > 0 && addresses >= static_cast<size_t>(max_stack_));
  // PERF_SAMPLE_REGS_USER: u64 abi, then one u64 per mask bit unless the
  // ABI is NONE (a kernel thread). PERF_SAMPLE_STACK_USER: u64 size, the
  // bytes, then u64 dyn_size (how many of them were really copied) when size
  // is not 0 (linux/perf_event.h, enum perf_event_type, PERF_RECORD_SAMPLE).
  if (regs) {
    uint64_t abi = r.U64();
    if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
      const int count = __builtin_popcountll(layout_.regs_user_mask);
      if (static_cast<size_t>(count) > recording::kMaxUserRegs ||
          static_cast<size_t>(count) > r.remaining() / sizeof(uint64_t)) {
        ++malformed_;
        return std::nullopt;
      }
      s.user_regs_abi = static_cast<uint32_t>(abi);
      s.user_regs.resize(static_cast<size_t>(count));
      for (uint64_t& reg : s.user_regs) reg = r.U64();
    }
  }
  if (layout_.stack_user) {
    uint64_t size = r.U64();
    if (!r.ok() || size > r.remaining() || size > recording::kMaxUserStack) {
      ++malformed_;
      return std::nullopt;
    }
    if (size > 0) {
      // The bytes sit at the reader's position; dyn_size follows them.
      const size_t at = body.size() - r.remaining();
      absl::string_view data = body.substr(at, static_cast<size_t>(size));
      base::ByteReader after(body.substr(at + static_cast<size_t>(size)));
      uint64_t dyn_size = after.U64();
      if (!after.ok()) {
        ++malformed_;
        return std::nullopt;
      }
      if (s.user_regs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
        size_t kept = static_cast<size_t>(std::min(dyn_size, size));
        if (layout_.trim_to_frame_record) kept = FrameRecordEnd(s, data, kept);
        s.user_stack = std::string(data.substr(0, kept));
      }
      return s;
    }
  }
  if (!r.ok()) {
    ++malformed_;
    return std::nullopt;
  }
  return s;
}

}  // namespace profcpu::collector
