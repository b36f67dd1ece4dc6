#include "fold/profile_builder_parallel.h"

#include <time.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "base/stage_times.h"
#include "base/status_macros.h"
#include "fold/profile_builder_replay.h"
#include "symbolize/address_space.h"
#include "symbolize/code_location.h"
#include "symbolize/jit_history.h"
#include "symbolize/stack_unwinder.h"

namespace profcpu::fold {
namespace {

using recording::Record;
using Batch = std::vector<Record>;
using Requested = absl::flat_hash_map<symbolize::CodeLocation, std::string>;

// The JIT history, asked by the workers and told by the tracker one call at
// a time (the symbolizer's JitSources is not thread-safe).
class SerializedJitHistory : public symbolize::JitCodeHistory {
 public:
  explicit SerializedJitHistory(symbolize::JitCodeHistory* history) : history_(history) {}
  void OnMmap(const recording::Mmap& mmap) override {
    std::lock_guard<std::mutex> lock(mutex_);
    history_->OnMmap(mmap);
  }
  uint32_t Generation(uint32_t pid, uint64_t address, uint64_t time_ns) override {
    std::lock_guard<std::mutex> lock(mutex_);
    return history_->Generation(pid, address, time_ns);
  }
  bool NamesAnyCode(uint32_t pid, absl::string_view part) override {
    std::lock_guard<std::mutex> lock(mutex_);
    return history_->NamesAnyCode(pid, part);
  }
  std::string CodeName(uint32_t pid, uint64_t address, uint32_t generation) override {
    std::lock_guard<std::mutex> lock(mutex_);
    return history_->CodeName(pid, address, generation);
  }

 private:
  std::mutex mutex_;
  symbolize::JitCodeHistory* history_;
};

// One answer of the run's unwinder, for the sample (time, thread) it was for.
struct Unwound {
  uint64_t time_ns = 0;
  uint32_t tid = 0;
  symbolize::UnwoundStack stack;
  // When a worker's unwinder answered: what the run's is handed back.
  bool leaf_repair = false;
  std::vector<uint64_t> chain;  // a leaf repair's chain as recorded
};

// The tracker's unwinder: asks the run's, in recording order, and keeps its
// answers for the slice the samples are in (`log`, moved on by the tracker
// as slices start).
class LoggingUnwinder : public symbolize::UserStackUnwinder {
 public:
  explicit LoggingUnwinder(symbolize::UserStackUnwinder* inner) : inner_(inner) {}
  void LogTo(std::vector<Unwound>* log) { log_ = log; }
  symbolize::UnwoundStack Unwind(const recording::Sample& sample, uint64_t regs_mask,
                                 const symbolize::AddressSpaceTracker& spaces) override {
    log_->push_back(
        {sample.time_ns, sample.tid, inner_->Unwind(sample, regs_mask, spaces), false, {}});
    return {};
  }
  symbolize::UnwoundStack RepairLeaf(const symbolize::UserStackCopy& copy,
                                     const std::vector<uint64_t>& chain,
                                     const symbolize::AddressSpaceTracker& spaces) override {
    log_->push_back(
        {copy.time_ns, copy.tid, inner_->RepairLeaf(copy, chain, spaces), false, {}});
    return {};
  }

 private:
  symbolize::UserStackUnwinder* inner_;
  std::vector<Unwound>* log_ = nullptr;
};

// A worker's unwinder: the tracker's answers for its slice, in order. A
// record the tracker did not ask about (only a hostile recording has one: an
// off-CPU stay in a perf recording) gets what the replay gets without an
// unwinder, and leaves the next answer to its own sample.
class LoggedUnwinder : public symbolize::UserStackUnwinder {
 public:
  explicit LoggedUnwinder(std::vector<Unwound>* log) : log_(log) {}
  symbolize::UnwoundStack Unwind(const recording::Sample& sample, uint64_t,
                                 const symbolize::AddressSpaceTracker&) override {
    if (!NextIsFor(sample.time_ns, sample.tid)) return {{}, true};
    return std::move((*log_)[next_++].stack);
  }
  symbolize::UnwoundStack RepairLeaf(const symbolize::UserStackCopy& copy,
                                     const std::vector<uint64_t>& chain,
                                     const symbolize::AddressSpaceTracker&) override {
    if (!NextIsFor(copy.time_ns, copy.tid)) return {chain, false};
    return std::move((*log_)[next_++].stack);
  }

 private:
  bool NextIsFor(uint64_t time_ns, uint32_t tid) const {
    return next_ < log_->size() && (*log_)[next_].time_ns == time_ns && (*log_)[next_].tid == tid;
  }
  std::vector<Unwound>* log_;
  size_t next_ = 0;
};

// A worker thread's unwinder (the run's NewWorker), keeping each answer
// for the run's, which gets them back in recording order (MergeSlice).
class AnsweringUnwinder : public symbolize::UserStackUnwinder {
 public:
  AnsweringUnwinder(symbolize::UserStackUnwinder* inner, std::vector<Unwound>* log)
      : inner_(inner), log_(log) {}
  symbolize::UnwoundStack Unwind(const recording::Sample& sample, uint64_t regs_mask,
                                 const symbolize::AddressSpaceTracker& spaces) override {
    symbolize::UnwoundStack stack = inner_->Unwind(sample, regs_mask, spaces);
    log_->push_back({sample.time_ns, sample.tid, stack, false, {}});
    return stack;
  }
  symbolize::UnwoundStack RepairLeaf(const symbolize::UserStackCopy& copy,
                                     const std::vector<uint64_t>& chain,
                                     const symbolize::AddressSpaceTracker& spaces) override {
    symbolize::UnwoundStack stack = inner_->RepairLeaf(copy, chain, spaces);
    log_->push_back({copy.time_ns, copy.tid, stack, true, chain});
    return stack;
  }

 private:
  symbolize::UserStackUnwinder* inner_;
  std::vector<Unwound>* log_;
};

// A runtime's jitdump ("jit-PID.dump"), which changes the JIT history's
// answers from its record on. (Wider than the history's own test: a
// needless barrier only costs time.)
bool MapsJitdump(const Record& record) {
  const auto* mmap = std::get_if<recording::Mmap>(&record);
  if (mmap == nullptr) return false;
  absl::string_view name = mmap->filename;
  if (size_t slash = name.rfind('/'); slash != absl::string_view::npos) name.remove_prefix(slash + 1);
  return absl::StartsWith(name, "jit-") && absl::StrContains(name, ".dump");
}

bool ChangesMappings(const Record& record) {
  return std::holds_alternative<recording::Mmap>(record) ||
         std::holds_alternative<recording::Comm>(record) ||
         std::holds_alternative<recording::Fork>(record);
}

bool IsSample(const Record& record) {
  return std::holds_alternative<recording::Sample>(record) ||
         std::holds_alternative<recording::OffCpuSample>(record) ||
         std::holds_alternative<recording::StackSample>(record);
}

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// Consecutive records of one batch.
struct Part {
  std::shared_ptr<const Batch> batch;
  size_t begin = 0;
  size_t end = 0;
};

// One time slice: its records, what its worker needs, what it made.
struct Slice {
  // The mapping records before the slice, in order (shared, sealed chunks).
  std::vector<std::shared_ptr<const Batch>> mappings_before;
  std::vector<Part> parts;
  std::vector<uint32_t> comms;  // the tracker's thread name of each sample
  // The unwinder's answers, in order: the tracker's for the worker, or
  // the worker's for the run's unwinder.
  std::vector<Unwound> unwound;
  // The worker's:
  BuiltProfile out;
  Requested requested;
  bool unsorted = false;
  double cpu_seconds = 0;
  bool done = false;  // guarded by SlicePool's mutex
};

// Replays slices on `threads` threads.
class SlicePool {
 public:
  // `work` gets the slice and the index of the thread it runs on.
  SlicePool(int threads, std::function<void(Slice&, size_t)> work) : work_(std::move(work)) {
    for (int i = 0; i < threads; ++i) {
      threads_.emplace_back([this, i] { Loop(static_cast<size_t>(i)); });
    }
  }
  ~SlicePool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    queued_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  void Submit(Slice* slice) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(slice);
    }
    queued_.notify_one();
  }
  bool Done(const Slice* slice) {
    std::lock_guard<std::mutex> lock(mutex_);
    return slice->done;
  }
  void Wait(const Slice* slice) {
    std::unique_lock<std::mutex> lock(mutex_);
    finished_.wait(lock, [slice] { return slice->done; });
  }

 private:
  void Loop(size_t thread) {
    for (;;) {
      Slice* slice = nullptr;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        queued_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (stopping_) return;  // an error ended the replay: no one waits
        slice = queue_.front();
        queue_.pop_front();
      }
      work_(*slice, thread);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        slice->done = true;
      }
      finished_.notify_all();
    }
  }

  std::function<void(Slice&, size_t)> work_;
  std::mutex mutex_;
  std::condition_variable queued_;
  std::condition_variable finished_;
  std::deque<Slice*> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

// A worker: the slice's stacks in a profile of its own. `unwinder`: the
// worker thread's own (null: the tracker's answers are in the slice).
void ReplaySlice(const recording::Header& header, uint32_t event, const BuildOptions& options,
                 symbolize::UserStackUnwinder* unwinder, Slice& slice) {
  const double start = ThreadCpuSeconds();
  {
    LoggedUnwinder logged(&slice.unwound);
    AnsweringUnwinder answering(unwinder, &slice.unwound);
    BuildOptions slice_options = options;
    if (options.unwinder != nullptr && unwinder != nullptr) {
      slice_options.unwinder = &answering;
    } else if (options.unwinder != nullptr) {
      slice_options.unwinder = &logged;
    }
    replay::ReplayBuilder builder(&slice.out, slice_options, replay::ReplayRole::kWorker);
    builder.On(header);
    builder.UseTrackerIds(event, &slice.comms);
    auto on = [&builder](const auto& r) { builder.On(r); };
    for (const auto& chunk : slice.mappings_before) {
      for (const Record& record : *chunk) std::visit(on, record);
    }
    for (const Part& part : slice.parts) {
      for (size_t i = part.begin; i < part.end; ++i) std::visit(on, (*part.batch)[i]);
    }
    slice.requested = std::move(builder.requested());
    slice.unsorted = builder.unsorted();
  }
  // The records go back to the reader's thread to be decoded into.
  slice.parts.clear();
  slice.mappings_before.clear();
  if (unwinder == nullptr) slice.unwound = {};
  slice.cpu_seconds = ThreadCpuSeconds() - start;
}

// What only workers count (the tracker counts the rest).
void AddWorkerCounts(const RecordingSummary& from, RecordingSummary* to) {
  to->depth_limit_stacks += from.depth_limit_stacks;
  to->missing_stacks += from.missing_stacks;
  to->dwarf_stacks += from.dwarf_stacks;
  to->dwarf_truncated += from.dwarf_truncated;
  to->dwarf_not_unwound += from.dwarf_not_unwound;
  to->leaf_repair_stacks += from.leaf_repair_stacks;
  to->leaf_repaired += from.leaf_repaired;
  to->leaf_frames_added += from.leaf_frames_added;
  to->stacks_repaired += from.stacks_repaired;
  for (const auto& [pid, counts] : from.dotnet_osr.by_pid) {
    symbolize::OsrRepairCounts& sum = to->dotnet_osr.by_pid[pid];
    sum.samples_in_osr += counts.samples_in_osr;
    for (size_t i = 0; i < sum.by_outcome.size(); ++i) sum.by_outcome[i] += counts.by_outcome[i];
  }
  to->dotnet_osr.max_copy_bytes_used =
      std::max(to->dotnet_osr.max_copy_bytes_used, from.dotnet_osr.max_copy_bytes_used);
}

// A finished slice into the profile, in slice order; its workers'
// unwinder answers to `took` (the run's unwinder), if they made any.
void MergeSlice(Slice& slice, symbolize::UserStackUnwinder* took, BuiltProfile* out,
                Requested* requested, bool* unsorted) {
  if (took != nullptr) {
    for (const Unwound& u : slice.unwound) {
      if (u.leaf_repair) {
        took->TookRepair(u.time_ns, u.tid, u.chain, u.stack);
      } else {
        took->TookUnwind(u.time_ns, u.tid, u.stack);
      }
    }
    slice.unwound = {};
  }
  Profile& local = slice.out.profile;
  Profile& profile = out->profile;
  std::vector<uint32_t> locations(local.location_count());
  for (uint32_t id = 0; id < locations.size(); ++id) {
    locations[id] = profile.InternLocation(local.location(id));
  }
  // Renumbered in place and moved over: a new stack costs no copy.
  std::vector<std::vector<uint32_t>> local_stacks = local.TakeStacks();
  std::vector<uint32_t> stacks(local_stacks.size());
  for (uint32_t id = 0; id < stacks.size(); ++id) {
    for (uint32_t& location : local_stacks[id]) location = locations[location];
    stacks[id] = profile.InternStack(std::move(local_stacks[id]));
  }
  for (Sample sample : local.samples()) {
    sample.stack = stacks[sample.stack];
    profile.AddSample(sample);
  }
  for (auto& [location, mapping] : slice.requested) {
    requested->try_emplace(location, std::move(mapping));
  }
  AddWorkerCounts(slice.out.summary, &out->summary);
  *unsorted = *unsorted || slice.unsorted;
}

}  // namespace

std::string WhyReplayOnOneThread(const recording::Header& header) {
  if (header.backend == "bpf") return "a BPF recording (stacks by id)";
  if (header.mode == "wall" || header.mode == "offcpu") return header.mode + " mode";
  return "";
}

absl::StatusOr<BuiltProfile> BuildProfileInParallel(recording::RecordingReader& reader,
                                                    recording::RecordPrefetcher& records,
                                                    std::vector<recording::Record> first,
                                                    const BuildOptions& options) {
  const double start = base::MonotonicSeconds();
  const double start_cpu = ThreadCpuSeconds();
  std::optional<SerializedJitHistory> jit;
  if (options.jit != nullptr) jit.emplace(options.jit);
  BuildOptions tracker_options = options;
  tracker_options.jit = jit.has_value() ? &*jit : nullptr;
  // The unwinder keeps per-process state. One that reads the target's
  // files gives each worker thread one of its own (NewWorker), whose
  // answers go back to it in recording order (to be saved); else (a saved
  // file's answers, in recording order) the tracker asks it and each worker
  // replays its slice's answers (ReplaySlice).
  std::vector<std::unique_ptr<symbolize::UserStackUnwinder>> worker_unwinders;
  if (options.unwinder != nullptr) {
    for (int i = 0; i < options.threads; ++i) {
      std::unique_ptr<symbolize::UserStackUnwinder> worker =
          options.unwinder->NewWorker(static_cast<size_t>(options.threads));
      if (worker == nullptr) {
        worker_unwinders.clear();
        break;
      }
      worker_unwinders.push_back(std::move(worker));
    }
  }
  symbolize::UserStackUnwinder* took = worker_unwinders.empty() ? nullptr : options.unwinder;
  std::optional<LoggingUnwinder> unwinder;
  if (options.unwinder != nullptr) {
    if (took != nullptr) {
      tracker_options.unwinder = nullptr;
    } else {
      unwinder.emplace(options.unwinder);
      tracker_options.unwinder = &*unwinder;
    }
  }
  BuildOptions worker_options = tracker_options;
  worker_options.unwinder = options.unwinder;  // (not asked: which one is ReplaySlice's)
  const recording::Header header = std::get<recording::Header>(first.front());

  BuiltProfile out;
  replay::ReplayBuilder tracker(&out, tracker_options, replay::ReplayRole::kTracker);
  Requested requested;
  bool unsorted = false;
  uint32_t event = 0;  // set by the header, before any slice runs
  std::deque<std::unique_ptr<Slice>> pending;  // submitted, not merged yet
  int tasks = 0;
  double longest = 0;
  double task_cpu = 0;
  // Batches go back to the reader's thread when no slice holds them.
  auto share = [&records](Batch batch) {
    return std::shared_ptr<const Batch>(new Batch(std::move(batch)), [&records](const Batch* b) {
      records.Recycle(std::move(*const_cast<Batch*>(b)));
      delete b;
    });
  };
  // Declared last: its threads stop before anything they use goes.
  SlicePool pool(options.threads, [&header, &event, &worker_options, &worker_unwinders](
                                      Slice& slice, size_t thread) {
    ReplaySlice(header, event, worker_options,
                worker_unwinders.empty() ? nullptr : worker_unwinders[thread].get(), slice);
  });

  // Merges the finished slices in order; waits while more than `at_most`
  // are in the works (bounded memory: records and a profile per slice).
  auto merge = [&](size_t at_most) {
    while (!pending.empty()) {
      Slice* slice = pending.front().get();
      if (!pool.Done(slice)) {
        if (pending.size() <= at_most) return;
        pool.Wait(slice);
      }
      MergeSlice(*slice, took, &out, &requested, &unsorted);
      longest = std::max(longest, slice->cpu_seconds);
      task_cpu += slice->cpu_seconds;
      pending.pop_front();
    }
  };
  std::vector<std::shared_ptr<const Batch>> mappings;  // sealed chunks
  Batch open_mappings;                                 // since the last seal
  std::unique_ptr<Slice> current;
  size_t slice_samples = 0;
  auto start_slice = [&] {
    if (!open_mappings.empty()) {
      mappings.push_back(std::make_shared<const Batch>(std::move(open_mappings)));
      open_mappings.clear();
    }
    current = std::make_unique<Slice>();
    current->mappings_before = mappings;
    tracker.LogCommsTo(&current->comms);
    if (unwinder.has_value()) unwinder->LogTo(&current->unwound);
    slice_samples = 0;
  };
  const size_t max_in_flight = static_cast<size_t>(options.threads) + 2;
  auto submit = [&] {
    if (current->parts.empty()) return;
    pool.Submit(current.get());
    pending.push_back(std::move(current));
    ++tasks;
    start_slice();
    merge(max_in_flight);
  };
  start_slice();

  bool saw_header = false;
  const size_t slice_size = std::max<size_t>(options.slice_samples, 1);
  for (Batch batch = std::move(first); !batch.empty(); batch = records.NextBatch()) {
    const std::shared_ptr<const Batch> shared = share(std::move(batch));
    size_t begin = 0;
    for (size_t i = 0; i < shared->size(); ++i) {
      const Record& record = (*shared)[i];
      PROFCPU_RETURN_IF_ERROR(replay::CheckRecord(record, &saw_header));
      if (MapsJitdump(record)) {
        // Every sample before it asks the JIT history before it hears of it.
        if (i > begin) current->parts.push_back({shared, begin, i});
        begin = i;
        submit();
        merge(0);
      }
      std::visit([&tracker](const auto& r) { tracker.On(r); }, record);
      if (std::holds_alternative<recording::Header>(record)) event = tracker.event();
      if (ChangesMappings(record)) open_mappings.push_back(record);
      if (IsSample(record) && ++slice_samples >= slice_size) {
        current->parts.push_back({shared, begin, i + 1});
        begin = i + 1;
        submit();
      }
    }
    if (begin < shared->size()) current->parts.push_back({shared, begin, shared->size()});
  }
  PROFCPU_RETURN_IF_ERROR(records.status());
  if (!saw_header) return absl::DataLossError("recording holds no records");
  submit();
  merge(0);
  // (Every slice is merged: no worker uses its unwinder any more.)
  for (auto& worker : worker_unwinders) options.unwinder->AddWorker(*worker);

  if (unsorted) {
    std::stable_sort(out.profile.mutable_samples().begin(), out.profile.mutable_samples().end(),
                     [](const Sample& a, const Sample& b) { return a.time_ns < b.time_ns; });
  }
  out.modules = tracker.spaces().modules();
  out.requests.reserve(requested.size());
  for (auto& [location, mapping] : requested) out.requests.push_back({location, std::move(mapping)});
  out.summary.file_truncated = reader.truncated();
  base::ParallelStage stage;
  stage.wall = base::MonotonicSeconds() - start;
  // What does not split: this thread's reading and merging, beside the
  // reader's decoding (each on a core of its own), whichever is longer. CPU
  // time, not wall: on a machine with fewer cores than threads, a thread
  // waiting for a core is not work.
  stage.serial = std::max(ThreadCpuSeconds() - start_cpu, records.decode_cpu_seconds());
  stage.tasks = tasks;
  stage.threads = options.threads;
  stage.longest_task = longest;
  stage.task_cpu = task_cpu;
  out.parallel = stage;
  return out;
}

}  // namespace profcpu::fold
