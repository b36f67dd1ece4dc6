// The replay's work per record (profile_builder.h's BuildProfile), shared by
// the one-thread replay and the parallel one (profile_builder_parallel.h),
// which gives it one of two roles: the tracker, over every record in order
// (thread names, the summary's counts, each sample's thread name, the
// unwinder's calls) and the
// workers, each over one time slice (the stacks: normalizing addresses,
// unwinding, interning locations and stacks in a profile of its own).
#ifndef PROFCPU_FOLD_PROFILE_BUILDER_REPLAY_H_
#define PROFCPU_FOLD_PROFILE_BUILDER_REPLAY_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "fold/dotnet_osr_replay.h"
#include "fold/profile_builder.h"
#include "recording/records.h"
#include "symbolize/address_space.h"
#include "symbolize/stack_unwinder.h"

namespace profcpu::fold::replay {

// kWhole: everything, in order (the one-thread replay). kTracker: every
// record in order, but no stacks. kWorker: one slice's stacks, after the
// mapping records before the slice (no summary counts the tracker keeps).
enum class ReplayRole { kWhole, kTracker, kWorker };

// PERF_REG_X86_IP (asm/perf_regs.h): where a sample's user IP is.
constexpr int kPerfRegIp = 8;

class ReplayBuilder {
 public:
  ReplayBuilder(BuiltProfile* out, const BuildOptions& options,
                ReplayRole role = ReplayRole::kWhole)
      : out_(out), options_(options), role_(role), osr_(options.jit) {}

  // kTracker: where each sample's thread name (string id) goes, in order.
  void LogCommsTo(std::vector<uint32_t>* comms) { comm_log_ = comms; }
  // kWorker: the tracker's ids of the event name and of each sample's
  // thread name (the strings are the tracker's profile's, in the serial
  // order: a worker interns no string that a sample keeps).
  void UseTrackerIds(uint32_t event, const std::vector<uint32_t>* comms) {
    event_ = event;
    tracker_comms_ = comms;
  }
  // kWorker: the locations to name, each with the first mapping name seen.
  absl::flat_hash_map<symbolize::CodeLocation, std::string>& requested() { return requested_; }
  bool unsorted() const { return unsorted_; }
  uint32_t event() const { return event_; }
  const symbolize::AddressSpaceTracker& spaces() const { return spaces_; }

  void On(const recording::Header& header) {
    RecordingSummary& summary = out_->summary;
    summary.header = header;
    summary.mode = header.mode.empty() ? "cpu" : header.mode;
    wall_ = summary.mode == "wall";
    summary.microseconds = summary.mode != "cpu";
    summary.weighted = summary.microseconds || header.backend == "bpf";
    leaf_repair_ = header.callgraph == "fp+cfi";
    // One event name per profile so the folded stacks keep every sample
    // (stackcollapse keeps one event) and perf_script.out folds alike.
    event_ = out_->profile.InternString(wall_                     ? "wall-time"
                                        : summary.mode == "offcpu" ? "offcpu-time"
                                                                   : header.event_name);
  }
  void On(const recording::Mmap& mmap) {
    frame_ids_.clear();
    spaces_.OnMmap(mmap);
    if (role_ != ReplayRole::kWorker && options_.jit != nullptr) options_.jit->OnMmap(mmap);
    if (role_ != ReplayRole::kTracker) osr_.OnMmap(mmap);
  }
  void On(const recording::Comm& comm) {
    frame_ids_.clear();  // an exec starts a new address space
    spaces_.OnComm(comm);
    if (role_ == ReplayRole::kWorker) return;
    comms_[comm.tid] = out_->profile.InternString(comm.comm);
  }
  void On(const recording::Fork& fork) {
    frame_ids_.clear();
    spaces_.OnFork(fork);
    if (role_ == ReplayRole::kWorker) return;
    // A new thread or process starts with its parent thread's name.
    auto parent = comms_.find(fork.ptid);
    if (parent != comms_.end()) {
      uint32_t name = parent->second;  // copied: inserting may rehash the map
      comms_.try_emplace(fork.tid, name);
    }
  }
  void On(const recording::Exit&) {}
  void On(const recording::Lost& lost) {
    if (role_ == ReplayRole::kWorker) return;
    switch (lost.reason) {
      case recording::LossReason::kRingBufferFull:
      case recording::LossReason::kCorrupt:
        out_->summary.lost_ring_buffer += lost.count;
        break;
      case recording::LossReason::kSamplesDropped:
        out_->summary.lost_dropped += lost.count;
        break;
      case recording::LossReason::kThrottled:
        out_->summary.throttle_events += lost.count;
        break;
      case recording::LossReason::kBpfRingBufferFull:
        out_->summary.lost_bpf_ring_buffer += lost.count;
        break;
      case recording::LossReason::kStackLost:
        out_->summary.lost_stacks += lost.count;
        break;
      case recording::LossReason::kBpfMapFull:
        out_->summary.lost_bpf_map_full += lost.count;
        break;
      case recording::LossReason::kOffCpuUnended:
        out_->summary.lost_offcpu_unended += lost.count;
        break;
    }
  }
  void On(const recording::ProcessInfo& info) {
    if (role_ != ReplayRole::kWorker) out_->summary.processes.push_back(info);
  }
  void On(const recording::Finish& finish) {
    if (role_ != ReplayRole::kWorker) out_->summary.finish = finish;
  }
  void On(const recording::DotnetRuntime& runtime) {
    if (role_ != ReplayRole::kWorker) out_->summary.dotnet_runtimes.push_back(runtime);
  }
  void On(const recording::Sample& sample) {
    RecordingSummary& summary = out_->summary;
    if (role_ != ReplayRole::kWorker) {
      if (summary.samples == 0) summary.first_sample_ns = sample.time_ns;
      summary.last_sample_ns = sample.time_ns;
      ++summary.samples;
      if (sample.truncated) ++summary.depth_limit_stacks;
    }
    if (role_ == ReplayRole::kTracker) {
      comm_log_->push_back(CommOf(sample.tid));
      UnwindAhead(sample);
      return;
    }

    stack_.clear();
    AddChain(sample.pid, sample.time_ns, sample.kernel_ips, /*kernel=*/true);
    if (leaf_repair_) {
      AddChain(sample.pid, sample.time_ns,
               RepairChain(symbolize::StackCopyOf(sample, summary.header.user_regs_mask),
                           sample.user_ips, sample.time_ns),
               /*kernel=*/false);
    } else if (!sample.user_regs.empty()) {
      AddChain(sample.pid, sample.time_ns, UnwindUser(sample), /*kernel=*/false);
    } else {
      osr_.Count(sample.pid, sample.time_ns, sample.user_ips, spaces_, &summary.dotnet_osr);
      AddChain(sample.pid, sample.time_ns, sample.user_ips, /*kernel=*/false);
    }
    // Wall mode weighs by time: a cpu-clock period is nanoseconds on the CPU.
    AddSample(sample.time_ns, sample.pid, sample.tid, sample.cpu,
              wall_ ? Microseconds(sample.period) : sample.period, kOnCpuRoot);
  }

  // kTracker: the unwinder's calls for this sample, made in recording order
  // as the one-thread replay makes them (the unwinder keeps per-process
  // state, and a saved file's entries come in that order). The tracker's
  // unwinder keeps each answer for the worker that replays the sample
  // (profile_builder_parallel.cc), which asks it in the same places.
  void UnwindAhead(const recording::Sample& sample) {
    if (options_.unwinder == nullptr) return;
    const uint64_t mask = out_->summary.header.user_regs_mask;
    if (leaf_repair_) {
      const symbolize::UserStackCopy copy = symbolize::StackCopyOf(sample, mask);
      if (AsksLeafRepair(copy, sample.user_ips)) {
        options_.unwinder->RepairLeaf(copy, sample.user_ips, spaces_);
      }
    } else if (!sample.user_regs.empty()) {
      options_.unwinder->Unwind(sample, mask, spaces_);
    }
  }

  // Whether RepairLeaf asks the unwinder about this chain.
  bool AsksLeafRepair(const symbolize::UserStackCopy& copy,
                      const std::vector<uint64_t>& chain) const {
    return copy.regs_abi != 0 && !chain.empty() && options_.unwinder != nullptr;
  }

  // A -callgraph dwarf sample's user chain: unwound from its registers and
  // stack copy, or just its IP when nothing can unwind it here.
  std::vector<uint64_t> UnwindUser(const recording::Sample& sample) {
    RecordingSummary& summary = out_->summary;
    ++summary.dwarf_stacks;
    const uint64_t mask = summary.header.user_regs_mask;
    if (options_.unwinder != nullptr) {
      symbolize::UnwoundStack unwound = options_.unwinder->Unwind(sample, mask, spaces_);
      if (unwound.truncated) ++summary.dwarf_truncated;
      return std::move(unwound.ips);
    }
    ++summary.dwarf_not_unwound;
    std::optional<uint64_t> ip = symbolize::UserRegister(sample, mask, kPerfRegIp);
    return ip.has_value() ? std::vector<uint64_t>{*ip} : std::vector<uint64_t>{};
  }

  // A -callgraph fp+cfi chain repaired from the record's stack copy: the
  // leaf's hidden callers, then the callers of .NET OSR frames.
  // `time_ns`: when the stack was taken (an off-CPU stay's start).
  const std::vector<uint64_t>& RepairChain(const symbolize::UserStackCopy& copy,
                                           const std::vector<uint64_t>& chain, uint64_t time_ns) {
    const std::vector<uint64_t>& leaf_repaired = RepairLeaf(copy, chain);
    const std::vector<uint64_t>& repaired =
        osr_.Repair(copy, leaf_repaired, time_ns, spaces_, &out_->summary.dotnet_osr);
    // The leaf repair only adds frames; the OSR repair may only replace one
    // (it returns its input when it did nothing).
    if (leaf_repaired.size() > chain.size() || &repaired != &leaf_repaired) {
      ++out_->summary.stacks_repaired;
    }
    return repaired;
  }

  // A -callgraph fp+cfi chain with the callers its leaf's frame hid put
  // back (symbolize::UserStackUnwinder::RepairLeaf); as it was when the
  // record has no stack copy or nothing here can read one.
  const std::vector<uint64_t>& RepairLeaf(const symbolize::UserStackCopy& copy,
                                          const std::vector<uint64_t>& chain) {
    if (!AsksLeafRepair(copy, chain)) return chain;
    RecordingSummary& summary = out_->summary;
    ++summary.leaf_repair_stacks;
    symbolize::UnwoundStack repaired = options_.unwinder->RepairLeaf(copy, chain, spaces_);
    if (repaired.ips.size() > chain.size()) {
      ++summary.leaf_repaired;
      summary.leaf_frames_added += repaired.ips.size() - chain.size();
    }
    repaired_ = std::move(repaired.ips);
    return repaired_;
  }

  // BPF records (collector/bpf/): stacks by id, then samples naming them.
  void On(const recording::StackTrace& trace) {
    if (role_ == ReplayRole::kTracker) return;
    if (stack_traces_.size() >= kMaxStackTraces && !stack_traces_.contains(trace.id)) return;
    stack_traces_.insert_or_assign(trace.id, trace.ips);
    if (trace.truncated) ++out_->summary.depth_limit_stacks;
  }
  void On(const recording::OffCpuSample& off) {
    RecordingSummary& summary = out_->summary;
    // Stamped when it blocked (the stacks are from then); replay order is
    // when it ran again. Finish() restores time order.
    uint64_t start = off.time_ns >= off.duration_ns ? off.time_ns - off.duration_ns : 0;
    if (role_ != ReplayRole::kWorker) {
      ++summary.offcpu_samples;
      summary.offcpu_ns += off.duration_ns;
      CountSampleTime(start);
    }
    if (role_ == ReplayRole::kTracker) {
      comm_log_->push_back(CommOf(off.tid));
      return;
    }
    unsorted_ = true;
    AddStacks(off.pid, start, off.kernel_stack, off.user_stack,
              leaf_repair_ ? &off : nullptr);
    AddSample(start, off.pid, off.tid, off.cpu, Microseconds(off.duration_ns), kOffCpuRoot);
  }
  void On(const recording::StackSample& sample) {
    if (role_ != ReplayRole::kWorker) {
      out_->summary.samples += sample.count > 0 ? sample.count - 1 : 0;
      CountSampleTime(sample.time_ns);
    }
    if (role_ == ReplayRole::kTracker) {
      comm_log_->push_back(CommOf(sample.tid));
      return;
    }
    AddStacks(sample.pid, sample.time_ns, sample.kernel_stack, sample.user_stack);
    // Counted samples weigh their count; in wall mode, their time on the CPU.
    AddSample(sample.time_ns, sample.pid, sample.tid, sample.cpu,
              wall_ ? Microseconds(sample.period) : sample.count, kOnCpuRoot);
  }

  void Finish() {
    if (unsorted_) {
      std::stable_sort(out_->profile.mutable_samples().begin(),
                       out_->profile.mutable_samples().end(),
                       [](const Sample& a, const Sample& b) { return a.time_ns < b.time_ns; });
    }
    out_->modules = spaces_.modules();
    out_->requests.reserve(requested_.size());
    for (auto& [location, mapping] : requested_) {
      out_->requests.push_back({location, std::move(mapping)});
    }
  }

 private:
  // Synthetic outermost frames of wall mode: [on-cpu] and [off-cpu].
  static constexpr uint64_t kOnCpuRoot = 0;
  static constexpr uint64_t kOffCpuRoot = 1;
  // Space of their kImported locations: no text table uses it.
  static constexpr uint32_t kSyntheticSpace = 0xFFFFFFFF;
  // Far more distinct stacks than a run holds; bounds hostile recordings.
  static constexpr size_t kMaxStackTraces = 1 << 20;

  static uint64_t Microseconds(uint64_t ns) { return (ns + 500) / 1000; }

  void CountSampleTime(uint64_t time_ns) {
    RecordingSummary& summary = out_->summary;
    if (summary.samples == 0 || time_ns < summary.first_sample_ns) {
      summary.first_sample_ns = time_ns;
    }
    summary.last_sample_ns = std::max(summary.last_sample_ns, time_ns);
    ++summary.samples;
  }

  // Appends the chains of two StackTrace ids to stack_ (cleared first); the
  // user chain's leaf repaired from `stay`'s stack copy when given.
  void AddStacks(uint32_t pid, uint64_t time_ns, int32_t kernel_stack, int32_t user_stack,
                 const recording::OffCpuSample* stay = nullptr) {
    stack_.clear();
    for (auto [id, kernel] : {std::pair{kernel_stack, true}, std::pair{user_stack, false}}) {
      if (id == recording::kNoStack) continue;
      auto it = stack_traces_.find(static_cast<uint32_t>(id));
      if (it == stack_traces_.end()) {
        ++out_->summary.missing_stacks;
        continue;
      }
      if (!kernel && stay != nullptr) {
        AddChain(pid, time_ns,
                 RepairChain(symbolize::StackCopyOf(*stay, out_->summary.header.user_regs_mask),
                             it->second, time_ns),
                 kernel);
        continue;
      }
      AddChain(pid, time_ns, it->second, kernel);
    }
  }

  // Adds a sample whose frames are in stack_; in wall mode, under `root`.
  void AddSample(uint64_t time_ns, uint32_t pid, uint32_t tid, uint32_t cpu, uint64_t period,
                 uint64_t root) {
    if (wall_) stack_.push_back(RootLocation(root));
    Sample s;
    s.time_ns = time_ns;
    s.pid = pid;
    s.tid = tid;
    s.cpu = cpu;
    s.period = period;
    s.event = event_;
    s.comm = CommOf(tid);
    s.stack = out_->profile.InternStack(stack_);
    out_->profile.AddSample(s);
  }

  // A location named "[on-cpu]" or "[off-cpu]" in the symbol table itself
  // (no symbolizer request: it stands for no code).
  uint32_t RootLocation(uint64_t root) {
    if (root_ids_[root] != 0) return root_ids_[root] - 1;
    Location location;
    location.code = {symbolize::CodeKind::kImported, kSyntheticSpace, root};
    symbolize::Symbolization name;
    name.module = "[profcpu]";
    name.frames.emplace_back().function = root == kOnCpuRoot ? kOnCpuFrame : kOffCpuFrame;
    out_->known_names.Insert(location.code, std::move(name));
    root_ids_[root] = out_->profile.InternLocation(location) + 1;
    return root_ids_[root] - 1;
  }

  void AddChain(uint32_t pid, uint64_t time_ns, const std::vector<uint64_t>& ips, bool kernel) {
    for (size_t i = 0; i < ips.size(); ++i) {
      // Every entry but the first of each context is a return address: it
      // points after the call, which may already be the next function. Look
      // up the byte before it (perf does the same when resolving callers).
      uint8_t adjust = (i > 0 && ips[i] > 0) ? 1 : 0;
      const FrameKey key{ips[i], pid, adjust, kernel};
      if (auto cached = frame_ids_.find(key); cached != frame_ids_.end()) {
        stack_.push_back(cached->second);
        continue;
      }
      symbolize::NormalizedAddress normalized =
          spaces_.Normalize(pid, ips[i] - adjust, kernel);
      if (normalized.location.kind == symbolize::CodeKind::kProcess && options_.jit != nullptr) {
        // The same JIT address names different code at different times.
        normalized.location.epoch =
            options_.jit->Generation(pid, normalized.location.value, time_ns);
      }
      Location location;
      location.address = ips[i];
      location.code = normalized.location;
      location.offset_adjust = adjust;
      location.kernel = kernel;
      location.mapping_start = normalized.mapping_start;
      location.mapping_end = normalized.mapping_end;
      const uint32_t id = out_->profile.InternLocation(location);
      stack_.push_back(id);
      // (The mapping's name is copied only for a new location.)
      requested_.try_emplace(normalized.location, normalized.mapping_name);
      // JIT code is named by when it ran: not a fixed location.
      if (normalized.location.kind != symbolize::CodeKind::kProcess || options_.jit == nullptr) {
        frame_ids_.try_emplace(key, id);
      }
    }
  }

  uint32_t CommOf(uint32_t tid) {
    if (role_ == ReplayRole::kWorker) {
      // Told by the tracker, one per sample in order (0, the event name,
      // only if a hostile input outran it: never for a recording).
      return next_comm_ < tracker_comms_->size() ? (*tracker_comms_)[next_comm_++] : 0;
    }
    auto it = comms_.find(tid);
    if (it != comms_.end()) return it->second;
    // As perf names them: the idle tasks (pid 0, one per CPU, never in a
    // COMM record) "swapper", any other thread without a COMM ":TID".
    uint32_t id = out_->profile.InternString(tid == 0 ? std::string("swapper")
                                                      : absl::StrCat(":", tid));
    comms_.emplace(tid, id);
    return id;
  }

  // A raw frame as sampled (ip, pid, adjust, kernel): the same one names the
  // same location until an address space changes (a Mmap, Fork or Comm
  // record clears the cache).
  using FrameKey = std::tuple<uint64_t, uint32_t, uint8_t, bool>;

  BuiltProfile* out_;
  const BuildOptions& options_;
  const ReplayRole role_;
  std::vector<uint32_t>* comm_log_ = nullptr;             // kTracker
  const std::vector<uint32_t>* tracker_comms_ = nullptr;  // kWorker
  size_t next_comm_ = 0;                                  // kWorker
  absl::flat_hash_map<FrameKey, uint32_t> frame_ids_;  // -> location id
  symbolize::AddressSpaceTracker spaces_;
  absl::flat_hash_map<uint32_t, uint32_t> comms_;  // tid -> string id
  absl::flat_hash_map<symbolize::CodeLocation, std::string> requested_;
  std::vector<uint32_t> stack_;
  uint32_t event_ = 0;
  bool wall_ = false;
  bool unsorted_ = false;
  bool leaf_repair_ = false;  // -callgraph fp+cfi
  std::vector<uint64_t> repaired_;  // RepairLeaf's last result
  DotnetOsrReplay osr_;
  uint32_t root_ids_[2] = {0, 0};  // location id + 1 of [on-cpu], [off-cpu]
  absl::flat_hash_map<uint32_t, std::vector<uint64_t>> stack_traces_;
};


// A recording must start with a header this reader understands.
inline absl::Status CheckRecord(const recording::Record& record, bool* saw_header) {
  if (!*saw_header && !std::holds_alternative<recording::Header>(record)) {
    return absl::DataLossError("recording does not start with a header record");
  }
  if (const auto* header = std::get_if<recording::Header>(&record);
      header != nullptr && header->format_version > recording::kFormatVersion) {
    // A newer format may hold what this reader would silently misread.
    return absl::UnimplementedError(absl::StrCat(
        "the recording is format version ", header->format_version,
        "; this profcpu reads up to ", recording::kFormatVersion, ": use a newer profcpu"));
  }
  *saw_header = true;
  return absl::OkStatus();
}


}  // namespace profcpu::fold::replay

#endif  // PROFCPU_FOLD_PROFILE_BUILDER_REPLAY_H_
