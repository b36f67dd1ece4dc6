// The records of a profcpu recording: what the collector saw, with raw
// addresses only. The on-disk encoding is documented in docs/recording-format.md
// and implemented in record_codec.cc; these structs are the in-memory form.
#ifndef PROFCPU_RECORDING_RECORDS_H_
#define PROFCPU_RECORDING_RECORDS_H_

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace profcpu::recording {

// Version 2 added the user registers and stack of -callgraph dwarf samples:
// a version-1 reader would show those samples with kernel frames only.
// Version 3 added -callgraph fp+cfi: samples carry both a frame-pointer user
// chain and registers + a small stack copy (a version-2 reader would take
// them for DWARF samples and drop the chain), and off-CPU stays the same.
inline constexpr uint32_t kFormatVersion = 3;

// First record of every recording: how it was taken.
struct Header {
  uint32_t format_version = kFormatVersion;
  std::string profcpu_version;
  std::string event_name;   // "cpu-clock", "cycles"
  uint32_t event_type = 0;  // perf_event_attr.type
  uint64_t event_config = 0;
  bool frequency_mode = true;       // sample_rate is Hz if true, else a period
  uint64_t sample_rate = 0;
  int32_t clock_id = 1;             // CLOCK_MONOTONIC: jitdump uses the same clock
  uint64_t start_time_ns = 0;       // clock_id time when collection began
  int64_t start_realtime_ns = 0;    // wall clock at the same moment
  uint32_t cpu_count = 0;
  std::string callgraph;            // "fp", "fp+cfi", "dwarf"
  std::string hostname;
  std::string kernel_release;
  // /proc/sys/kernel/random/boot_id: kernel addresses (KASLR) are only valid
  // for the boot they were taken in, so local kallsyms apply only if it matches.
  std::string boot_id;
  std::string target;               // "pid 1234", "command: ./app", ...
  std::string command_line;         // profcpu's own argv, for the log
  // Appended fields (absent in older recordings, read as the defaults).
  // What was measured: "cpu" (on-CPU samples), "offcpu" (time blocked),
  // "wall" (both). Empty reads as "cpu".
  std::string mode;
  // Who sampled on-CPU stacks: "perf" (samples through perf ring buffers)
  // or "bpf" (stacks counted in the kernel, collector/bpf/). Empty: "perf".
  std::string backend;
  // -callgraph dwarf and fp+cfi: which user registers each sample (and, for
  // fp+cfi, each off-CPU stay) carries (perf_event_attr.sample_regs_user: bits
  // of enum perf_event_x86_regs, asm/perf_regs.h) and how many bytes of user
  // stack it asked for.
  uint64_t user_regs_mask = 0;
  uint32_t user_stack_size = 0;
  // -backend bpf without -timestamps: on-CPU samples are counted in the
  // kernel and stamped at the end of intervals this long, so they carry no
  // time of their own (postprocess -from/-to cannot slice them). 0: every
  // sample has its time.
  uint64_t counted_interval_ns = 0;
};

// One stack sample. Call chains are leaf first, as perf delivers them, with
// the context markers removed: kernel frames, then user frames.
struct Sample {
  uint64_t time_ns = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint32_t cpu = 0;
  uint64_t period = 0;
  std::vector<uint64_t> kernel_ips;
  std::vector<uint64_t> user_ips;
  // The kernel stopped walking at the frame limit (perf_event_max_stack).
  bool truncated = false;
  // -callgraph dwarf (then user_ips is empty: the user stack is unwound
  // after collection, symbolize/dwarf_unwinder.h) and fp+cfi (user_ips is the
  // frame-pointer chain; these repair its leaf, symbolize/leaf_repair.h).
  // PERF_SAMPLE_REGS_USER: the ABI (PERF_SAMPLE_REGS_ABI_64 = 2; 0 for a
  // kernel thread, which has no user registers) and the registers of the
  // header's user_regs_mask, lowest bit first; PERF_SAMPLE_STACK_USER: the
  // bytes from the user stack pointer up (fp+cfi: possibly fewer than asked,
  // the collector keeps only what a repair can read).
  uint32_t user_regs_abi = 0;
  std::vector<uint64_t> user_regs;
  std::string user_stack;
};

// Bounds a recording's DWARF fields must respect (perf allows at most 65528
// stack bytes per sample, and a sample record is at most 64 KiB).
inline constexpr size_t kMaxUserRegs = 64;
inline constexpr size_t kMaxUserStack = 65528;

// A file or anonymous mapping appeared (PERF_RECORD_MMAP2, or synthesized from
// /proc/PID/maps for mappings that existed before collection began).
struct Mmap {
  uint64_t time_ns = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t start = 0;
  uint64_t length = 0;
  uint64_t file_offset = 0;
  uint32_t dev_major = 0;
  uint32_t dev_minor = 0;
  uint64_t inode = 0;
  uint64_t inode_generation = 0;
  uint32_t prot = 0;   // PROT_* bits
  uint32_t flags = 0;  // MAP_* bits
  std::string build_id;  // raw bytes when known, else empty
  std::string filename;  // as the target sees it ("/usr/lib/x.so", "//anon", "[vdso]")
  bool synthesized = false;
};

// A thread's name was set or it exec'd (PERF_RECORD_COMM).
struct Comm {
  uint64_t time_ns = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  std::string comm;
  bool exec = false;
  bool synthesized = false;
};

// PERF_RECORD_FORK and PERF_RECORD_EXIT share a layout.
struct TaskEvent {
  uint64_t time_ns = 0;
  uint32_t pid = 0;
  uint32_t ppid = 0;
  uint32_t tid = 0;
  uint32_t ptid = 0;
};
struct Fork : TaskEvent {};
struct Exit : TaskEvent {};

enum class LossReason : uint32_t {
  kRingBufferFull = 1,  // PERF_RECORD_LOST: the reader did not keep up
  kSamplesDropped = 2,  // PERF_RECORD_LOST_SAMPLES: the kernel dropped samples
  kThrottled = 3,       // PERF_RECORD_THROTTLE: the kernel lowered the rate
  kCorrupt = 4,         // a record in the ring buffer could not be decoded
  // The BPF collector (collector/bpf/):
  kBpfRingBufferFull = 5,  // an off-CPU/sample event found the BPF ring buffer full
  kStackLost = 6,          // a stack could not be stored (stack map full or hash collision)
  kBpfMapFull = 7,         // a count, blocked thread or process did not fit its BPF map
  kOffCpuUnended = 8,      // a stay off the CPU whose end the kernel never reported
};

struct Lost {
  uint64_t time_ns = 0;
  uint32_t cpu = 0;
  uint64_t count = 0;
  LossReason reason = LossReason::kRingBufferFull;
};

// What profcpu learned about a process it profiled: how it sees itself
// (pids in nested PID namespaces, innermost last) so its JIT files can be named.
struct ProcessInfo {
  uint64_t time_ns = 0;
  uint32_t pid = 0;
  std::vector<uint32_t> namespace_pids;  // NStgid from /proc/PID/status
  std::string command_line;
  // Where the process writes JIT symbol files (perf-PID.map, jit-PID.dump), as
  // it sees the path: DOTNET_PerfMapJitDumpPath from its environment, else /tmp.
  std::string jit_directory = "/tmp";
};

// Last record, written when collection ends normally. Absent after a crash.
struct Finish {
  uint64_t end_time_ns = 0;
  uint64_t samples = 0;
  uint64_t lost = 0;
  std::string stop_reason;  // "duration", "signal", "target exited"
};

// A call chain the BPF collector saw (a BPF stack map entry), written once,
// before the first record that names it by `id`. Leaf first, raw addresses.
struct StackTrace {
  uint64_t time_ns = 0;
  uint32_t id = 0;
  bool kernel = false;    // kernel frames (else user frames)
  bool truncated = false; // as deep as the stack map holds: may be cut
  std::vector<uint64_t> ips;
};

// A stack id in an OffCpuSample or StackSample: none (not captured, e.g. a
// kernel thread has no user stack, or the stack was lost).
inline constexpr int32_t kNoStack = -1;

// One stay off the CPU of a profiled thread (BPF on sched_switch): it
// switched out at `time_ns - duration_ns` with these stacks and ran again at
// `time_ns` (records are ordered by the time they became known).
struct OffCpuSample {
  uint64_t time_ns = 0;
  uint64_t duration_ns = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint32_t cpu = 0;    // the CPU it left
  uint32_t state = 0;  // task state when it left (0 running = preempted, 1 S, 2 D, ...)
  int32_t kernel_stack = kNoStack;
  int32_t user_stack = kNoStack;
  // -callgraph fp+cfi: the user registers of the header's user_regs_mask and
  // the bytes from the user stack pointer up when it switched out (as in
  // Sample; empty when not captured). Appended in version 3.
  uint32_t user_regs_abi = 0;
  std::vector<uint64_t> user_regs;
  std::string user_stack_copy;
};

// On-CPU samples taken by the BPF backend: `count` samples of one thread
// with these stacks, counted in the kernel over the interval ending at
// `time_ns`; or a single sample taken at `time_ns` (count 1) when per-sample
// timestamps were asked for. `period` is the sum of the samples' periods
// (nanoseconds for cpu-clock and task-clock).
struct StackSample {
  uint64_t time_ns = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint32_t cpu = 0;
  uint64_t count = 0;
  uint64_t period = 0;
  int32_t kernel_stack = kNoStack;
  int32_t user_stack = kNoStack;
};

// What profcpu learned from a .NET process's runtime over its diagnostics
// socket (collector/dotnet/), one per process, written when collection
// stops: the facts metadata.json reports, kept here so postprocess of the
// archive reports them too.
struct DotnetRuntime {
  uint64_t time_ns = 0;
  uint32_t pid = 0;
  // ProcessInfo2's runtime version ("10.0.12"); empty when it did not answer.
  std::string runtime_version;
  // How its perf map and jitdump came to be written: "enabled_by_profcpu"
  // (turned on over IPC for the run), "environment" (already on at start),
  // "environment_jitdump_restarted" (on at start, its dropped jitdump started
  // again by profcpu), "perfmap_only" (DOTNET_PerfMapEnabled=3: no jitdump),
  // "failed" (the runtime refused: too old, ...), "not_managed" (-perfmap
  // off: profcpu did not look), "" (unknown).
  std::string perf_maps;
  std::string perf_map_configured;  // DOTNET_PerfMapEnabled at start, if set
  // The EventPipe session's stream (-dotnet-events): bytes saved, and the
  // events the volume budget dropped, by kind (collector/dotnet/event_budget.h).
  uint64_t events_bytes = 0;
  struct Dropped {
    std::string kind;         // "GCAllocationTick", or "all" past the hard cap
    uint64_t count = 0;
    uint64_t bytes = 0;
    uint64_t first_ns = 0;    // CLOCK_MONOTONIC time of the first dropped
  };
  std::vector<Dropped> events_dropped;
};

using Record = std::variant<Header, Sample, Mmap, Comm, Fork, Exit, Lost, ProcessInfo, Finish,
                            StackTrace, OffCpuSample, StackSample, DotnetRuntime>;

// Time of any record (Header: start time; ProcessInfo: when it was read).
uint64_t RecordTime(const Record& record);

}  // namespace profcpu::recording

#endif  // PROFCPU_RECORDING_RECORDS_H_
