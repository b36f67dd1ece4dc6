#include "collector/collection.h"

#include <signal.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "collector/bpf_collection.h"
#include "collector/collection_header.h"
#include "collector/collection_target.h"
#include "collector/process_roots.h"
#include "collector/process_tracking.h"
#include "collector/record_orderer.h"
#include "collector/runtime_watch.h"
#include "recording/recording_writer.h"

namespace profcpu::collector {
namespace {

constexpr int kPollIntervalMs = 100;
constexpr uint64_t kFlushIntervalNs = 1'000'000'000;
constexpr uint64_t kProgressIntervalNs = 250'000'000;
// How long a started command may take to exit after profcpu forwards a signal.
constexpr uint64_t kCommandGraceNs = 2'000'000'000;

// One collection, from its BPF programs loaded to its recording closed. The
// steps are Collect's, in its order; each step only uses what the earlier
// ones set up. The sampler calls back into it, so it never moves. Members
// are destroyed in reverse order: the sampler before the process state it
// feeds, the target (a started command) after the sessions watching it.
class Collection {
 public:
  explicit Collection(const CollectionOptions& options)
      : options_(options), sampler_options_(options.sampler), watch_(options) {}
  Collection(const Collection&) = delete;
  Collection& operator=(const Collection&) = delete;

  absl::Status LoadBpf();
  absl::Status OpenTarget();
  // Before sampling, so JIT code compiled from the first sample on is named.
  void StartDotnetSessions() { watch_.StartDotnetSessions(target_->ExistingProcesses()); }
  absl::Status CreateRecording();
  void StartPerfMapCopies() { watch_.StartPerfMapCopies(); }
  absl::Status CreateSampler();
  absl::Status WriteHeader();
  void OpenTargetRoot();
  absl::Status AttachSampler() { return target_->Attach(sampler_.get()); }
  bool starts_command() const { return target_->starts_command(); }
  absl::Status StartCommand();
  absl::Status FollowRunningProcesses();
  absl::Status SampleUntilStopped();
  absl::Status StopSampling();
  void FinishPerfMapCopies() {
    watch_.FinishPerfMapCopies(&result_.perf_maps, &result_.warnings, &result_.notes);
  }
  void TallyCounts();
  absl::Status CloseRecording();
  void ReportFinalProgress() { ReportProgress(result_.end_time_ns); }
  CollectionResult TakeResult() { return std::move(result_); }

 private:
  void OnRecord(recording::Record&& record);
  absl::Status DrainRound();
  absl::Status DoPeriodicWork(uint64_t now_ns);
  std::optional<std::string> StopReason(uint64_t now_ns);
  void ReportProgress(uint64_t now_ns);
  uint64_t samples() const { return sampler_->counters().samples + (bpf_ ? bpf_->samples() : 0); }
  uint64_t lost() const { return sampler_->counters().lost + (bpf_ ? bpf_->lost() : 0); }

  const CollectionOptions& options_;
  CollectionResult result_;
  SamplerOptions sampler_options_;
  std::unique_ptr<BpfCollection> bpf_;
  std::unique_ptr<CollectionTarget> target_;
  RuntimeWatch watch_;
  std::unique_ptr<recording::RecordingWriter> writer_;
  std::optional<RecordOrderer> orderer_;
  ProcessRoots roots_;
  std::unique_ptr<Sampler> sampler_;
  // When the sampling loop last flushed the recording and reported progress.
  uint64_t last_flush_ns_ = 0;
  uint64_t last_progress_ns_ = 0;
  uint64_t forwarded_signal_at_ns_ = 0;
};

// -backend bpf: perf events only trigger the BPF program, which counts
// stacks in the kernel and copies no user stack for on-CPU samples.
absl::Status Collection::LoadBpf() {
  sampler_options_.enable_on_exec = !options_.command.empty();
  if (options_.profile.backend == SamplingBackend::kBpf) sampler_options_.leaf_stack_size = 0;
  PROFCPU_ASSIGN_OR_RETURN(
      bpf_, BpfCollection::Create(options_.profile,
                                  OffCpuScope{options_.cgroup_dir, options_.all_processes},
                                  &sampler_options_));
  return absl::OkStatus();
}

absl::Status Collection::OpenTarget() {
  TargetSpec spec;
  spec.pid = options_.pid;
  spec.command = options_.command;
  spec.cgroup_dir = options_.cgroup_dir;
  spec.container_id = options_.container_id;
  spec.all_processes = options_.all_processes;
  PROFCPU_ASSIGN_OR_RETURN(target_, CollectionTarget::Create(spec));
  result_.target_pid = target_->main_pid();
  if (target_->given_thread() > 0) {
    result_.notes.push_back(absl::StrCat(
        "pid ", target_->given_thread(), " is a thread of process ", result_.target_pid,
        ": profiling the whole process, every thread (postprocess -tid ",
        target_->given_thread(), " keeps that thread's samples only)"));
  }
  return absl::OkStatus();
}

absl::Status Collection::CreateRecording() {
  PROFCPU_ASSIGN_OR_RETURN(writer_, recording::RecordingWriter::Create(options_.recording_path));
  orderer_.emplace([this](const recording::Record& record) { return writer_->Write(record); });
  return absl::OkStatus();
}

absl::Status Collection::CreateSampler() {
  PROFCPU_ASSIGN_OR_RETURN(
      sampler_, Sampler::Create(sampler_options_,
                                [this](recording::Record&& record) { OnRecord(std::move(record)); }));
  return absl::OkStatus();
}

// Every record the sampler reads, as it reads it.
void Collection::OnRecord(recording::Record&& record) {
  if (auto* mmap = std::get_if<recording::Mmap>(&record)) {
    KeepMappedFile(*mmap, &roots_);
    TailPerfMapOf(*mmap, result_.processes, MonotonicNowNs(), &roots_, watch_.tailer());
  }
  if (auto* fork = std::get_if<recording::Fork>(&record); fork && fork->pid != fork->ppid) {
    // A new process: remember how to reach its files while it lives.
    if (!roots_.Contains(static_cast<pid_t>(fork->pid))) {
      roots_.Add(static_cast<pid_t>(fork->pid));
      result_.processes.push_back(DescribeProcess(static_cast<pid_t>(fork->pid), fork->time_ns));
      orderer_->Add(result_.processes.back());
      watch_.NoteNewProcess(static_cast<pid_t>(fork->pid));
    }
  }
  orderer_->Add(std::move(record));
}

absl::Status Collection::WriteHeader() {
  result_.start_time_ns = MonotonicNowNs();
  return writer_->Write(MakeCollectionHeader(options_, sampler_options_, target_->Description(),
                                             result_.start_time_ns));
}

// The target process's files are read through its root after collection; a
// root that cannot be opened leaves its frames unnamed, which the user hears
// of now.
void Collection::OpenTargetRoot() {
  const pid_t pid = result_.target_pid;
  if (pid <= 0 || roots_.Add(pid) != nullptr) return;
  const absl::Status& why = roots_.last_error();
  // ptrace access mode (kernel/ptrace.c): another uid, or a process holding
  // capabilities profcpu lacks, as every app container does.
  result_.warnings.push_back(absl::StrCat(
      "cannot open the root of process ", pid, " (", why.message(),
      "); its files cannot be read and its native and JIT frames stay unnamed",
      absl::IsPermissionDenied(why)
          ? ": reading a process that runs as another user or holds capabilities profcpu "
            "lacks needs CAP_SYS_PTRACE"
          : ""));
}

absl::Status Collection::StartCommand() {
  const pid_t pid = result_.target_pid;
  result_.processes.push_back(DescribeProcess(pid, result_.start_time_ns));
  // Not exec'd yet: /proc still shows profcpu's own command line.
  result_.processes.back().command_line = absl::StrJoin(options_.command, " ");
  orderer_->Add(result_.processes.back());
  if (bpf_) PROFCPU_RETURN_IF_ERROR(bpf_->TrackProcess(pid, MonotonicNowNs()));
  PROFCPU_RETURN_IF_ERROR(target_->Start());
  watch_.WatchStartedCommand(pid);
  return absl::OkStatus();
}

absl::Status Collection::FollowRunningProcesses() {
  if (bpf_) {
    PROFCPU_RETURN_IF_ERROR(bpf_->TrackProcess(result_.target_pid, result_.start_time_ns));
    // Without it the run is still good, only blind to stays begun earlier.
    absl::StatusOr<uint64_t> blocked = bpf_->SnapshotBlockedThreads(&*orderer_);
    if (!blocked.ok()) {
      result_.warnings.push_back(absl::StrCat(
          "threads blocked already when collection began count only from their next block: ",
          blocked.status().message()));
    } else if (*blocked > 0) {
      result_.notes.push_back(absl::StrCat(*blocked, " threads were already blocked when "
                                           "collection began: their time counts from then"));
    }
  }
  // Stamped with the start time, before any sample, so replay sees them first.
  for (pid_t existing : target_->ExistingProcesses()) {
    roots_.Add(existing);
    SynthesizeExistingProcess(existing, result_.start_time_ns, &*orderer_, &result_.processes,
                              &result_.warnings, &roots_, watch_.tailer());
  }
  return absl::OkStatus();
}

absl::Status Collection::SampleUntilStopped() {
  last_flush_ns_ = result_.start_time_ns;
  while (true) {
    PROFCPU_RETURN_IF_ERROR(DrainRound());
    const uint64_t now = MonotonicNowNs();
    PROFCPU_RETURN_IF_ERROR(DoPeriodicWork(now));
    if (std::optional<std::string> reason = StopReason(now)) {
      result_.stop_reason = *std::move(reason);
      return absl::OkStatus();
    }
  }
}

// Waits for samples, then moves what both halves read into time order.
absl::Status Collection::DrainRound() {
  sampler_->Wait(kPollIntervalMs);
  sampler_->Drain();
  if (bpf_) PROFCPU_RETURN_IF_ERROR(bpf_->Poll(MonotonicNowNs(), /*final=*/false, &*orderer_));
  return orderer_->EndRound();
}

absl::Status Collection::DoPeriodicWork(uint64_t now_ns) {
  if (Due(now_ns, kFlushIntervalNs, &last_flush_ns_)) PROFCPU_RETURN_IF_ERROR(writer_->Flush());
  if (options_.on_progress && Due(now_ns, kProgressIntervalNs, &last_progress_ns_)) {
    ReportProgress(now_ns);
  }
  watch_.Tick(now_ns);
  return absl::OkStatus();
}

// "target exited", "duration" or "signal" once sampling should stop. A stop
// signal is first passed on to a started command, to let it end on its own
// terms as it would without profcpu; sampling goes on while it shuts down,
// for kCommandGraceNs at most.
std::optional<std::string> Collection::StopReason(uint64_t now_ns) {
  if (std::optional<std::string> ended = target_->Ended(&result_.command_exit_code)) return ended;
  const uint64_t duration_ns = static_cast<uint64_t>(absl::ToInt64Nanoseconds(options_.duration));
  if (duration_ns > 0 && now_ns - result_.start_time_ns >= duration_ns) return "duration";
  if (options_.stop_requested == nullptr || !options_.stop_requested->load()) return std::nullopt;
  if (target_->starts_command()) {
    if (forwarded_signal_at_ns_ == 0) {
      target_->ForwardSignal(options_.stop_signal ? options_.stop_signal->load() : SIGTERM);
      forwarded_signal_at_ns_ = now_ns;
    }
    if (now_ns - forwarded_signal_at_ns_ < kCommandGraceNs) return std::nullopt;
  }
  return "signal";
}

// Stops the events, then reads what they left: nothing is lost between.
absl::Status Collection::StopSampling() {
  sampler_->DisableAll();
  std::vector<recording::DotnetRuntime> runtimes = watch_.StopSessions(MonotonicNowNs());
  sampler_->Drain();
  if (bpf_) PROFCPU_RETURN_IF_ERROR(bpf_->Poll(MonotonicNowNs(), /*final=*/true, &*orderer_));
  PROFCPU_RETURN_IF_ERROR(orderer_->Flush());
  // After every sample, so their time (the sessions' end) keeps the order.
  for (recording::DotnetRuntime& runtime : runtimes) {
    PROFCPU_RETURN_IF_ERROR(writer_->Write(runtime));
  }
  return absl::OkStatus();
}

void Collection::TallyCounts() {
  result_.end_time_ns = MonotonicNowNs();
  result_.roots = roots_.by_pid();
  result_.counters = sampler_->counters();
  if (bpf_) {
    result_.counters.samples += bpf_->samples();
    result_.counters.lost += bpf_->lost();
    for (std::string& w : bpf_->warnings()) result_.warnings.push_back(std::move(w));
  }
  result_.kernel_stacks = sampler_->kernel_stacks();
  for (const std::string& w : sampler_->warnings()) result_.warnings.push_back(w);
}

absl::Status Collection::CloseRecording() {
  recording::Finish finish;
  finish.end_time_ns = result_.end_time_ns;
  finish.samples = result_.counters.samples;
  finish.lost = result_.counters.lost;
  finish.stop_reason = result_.stop_reason;
  PROFCPU_RETURN_IF_ERROR(writer_->Write(finish));
  return writer_->Close();
}

void Collection::ReportProgress(uint64_t now_ns) {
  if (!options_.on_progress) return;
  options_.on_progress({absl::Nanoseconds(static_cast<int64_t>(now_ns - result_.start_time_ns)),
                        options_.duration, samples(), lost(), result_.target_pid});
}

}  // namespace

absl::StatusOr<CollectionResult> Collect(const CollectionOptions& options) {
  Collection collection(options);
  // BPF first: when it cannot run here, fail before starting anything.
  PROFCPU_RETURN_IF_ERROR(collection.LoadBpf());
  PROFCPU_RETURN_IF_ERROR(collection.OpenTarget());
  collection.StartDotnetSessions();
  PROFCPU_RETURN_IF_ERROR(collection.CreateRecording());
  collection.StartPerfMapCopies();
  PROFCPU_RETURN_IF_ERROR(collection.CreateSampler());
  PROFCPU_RETURN_IF_ERROR(collection.WriteHeader());
  collection.OpenTargetRoot();
  PROFCPU_RETURN_IF_ERROR(collection.AttachSampler());
  PROFCPU_RETURN_IF_ERROR(collection.starts_command() ? collection.StartCommand()
                                                      : collection.FollowRunningProcesses());
  PROFCPU_RETURN_IF_ERROR(collection.SampleUntilStopped());
  PROFCPU_RETURN_IF_ERROR(collection.StopSampling());
  collection.FinishPerfMapCopies();
  collection.TallyCounts();
  PROFCPU_RETURN_IF_ERROR(collection.CloseRecording());
  collection.ReportFinalProgress();
  return collection.TakeResult();
}

bool IsStartupError(const absl::Status& error) {
  return absl::IsNotFound(error) || absl::IsPermissionDenied(error) ||
         absl::IsUnimplemented(error) || absl::IsInvalidArgument(error);
}

}  // namespace profcpu::collector
