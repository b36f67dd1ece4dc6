#include "render/dotnet_event_outputs.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace profcpu::render {
namespace {

using fold::DotnetEventKind;

constexpr DotnetEventOutput kOutputs[] = {
    {DotnetEventKind::kAlloc, fold::DotnetEventKindName(DotnetEventKind::kAlloc),
     fold::DotnetEventStacksFile(DotnetEventKind::kAlloc), "alloc.pb.gz", "Allocations",
     fold::DotnetEventUnit(DotnetEventKind::kAlloc),
     "bytes allocated, by the allocating stack (GCAllocationTick: one event per ~100 KB "
     "allocated, weighted by the bytes since the previous one; the leaf is the type)"},
    {DotnetEventKind::kLockWait, fold::DotnetEventKindName(DotnetEventKind::kLockWait),
     fold::DotnetEventStacksFile(DotnetEventKind::kLockWait), "lock_wait.pb.gz", "Lock waits",
     fold::DotnetEventUnit(DotnetEventKind::kLockWait),
     "time threads waited on contended locks, by the waiting stack (ContentionStart to Stop)"},
    {DotnetEventKind::kException, fold::DotnetEventKindName(DotnetEventKind::kException),
     fold::DotnetEventStacksFile(DotnetEventKind::kException), "exceptions.pb.gz", "Exceptions",
     fold::DotnetEventUnit(DotnetEventKind::kException),
     "exceptions thrown, by the throwing stack (ExceptionThrown; the leaf is the type)"},
};

}  // namespace

const DotnetEventOutput& DotnetEventOutputOf(DotnetEventKind kind) {
  for (const DotnetEventOutput& output : kOutputs) {
    if (output.kind == kind) return output;
  }
  return kOutputs[0];  // unreachable: every kind is listed
}

std::vector<const fold::DotnetEventProfile*> DotnetProfilesWithSamples(
    const fold::DotnetEventProfiles* profiles) {
  std::vector<const fold::DotnetEventProfile*> kept;
  if (profiles == nullptr) return kept;
  for (const fold::DotnetEventProfile& profile : profiles->profiles) {
    if (!profile.profile.samples().empty()) kept.push_back(&profile);
  }
  return kept;
}

fold::FoldOptions DotnetEventFoldOptions(const fold::FoldOptions& cpu) {
  fold::FoldOptions options = cpu;
  options.weight_by_period = true;
  // Empty keeps the first sample's event; every sample of an event profile
  // has the same (or none), so all are kept.
  options.event_filter.clear();
  return options;
}

absl::Status WriteDotnetEventStacks(const std::string& dir,
                                    const std::vector<const fold::DotnetEventProfile*>& profiles,
                                    const fold::FoldOptions& cpu, std::vector<std::string>* written) {
  const fold::FoldOptions options = DotnetEventFoldOptions(cpu);
  for (const fold::DotnetEventProfile* profile : profiles) {
    const char* name = DotnetEventOutputOf(profile->kind).stacks_file;
    PROFCPU_RETURN_IF_ERROR(fold::WriteFoldedFile(fold::FoldProfile(profile->profile, options),
                                                  absl::StrCat(dir, "/", name)));
    written->push_back(name);
  }
  return absl::OkStatus();
}

PprofOptions DotnetEventPprofOptions(DotnetEventKind kind, const PprofOptions& run) {
  PprofOptions options;
  options.start_unix_ns = run.start_unix_ns;
  options.duration_ns = run.duration_ns;
  // The run's comments but the CPU sampling's, which these samples are not.
  for (const std::string& comment : run.comments) {
    if (!absl::StartsWith(comment, "sampling: ")) options.comments.push_back(comment);
  }
  const DotnetEventOutput& output = DotnetEventOutputOf(kind);
  options.event_name = output.key;
  options.frequency_mode = false;
  options.sample_rate = 0;
  switch (kind) {
    case DotnetEventKind::kAlloc:
      options.count_type = "alloc_objects";
      options.period_type = "alloc_space";
      options.period_unit = "bytes";
      options.comments.push_back(
          "alloc_objects counts GCAllocationTick events (one per ~100 KB allocated), "
          "not objects; alloc_space is the bytes they stand for");
      break;
    case DotnetEventKind::kLockWait:
      options.count_type = "contentions";
      options.period_type = "delay";
      options.period_unit = "nanoseconds";
      options.period_scale = 1000;  // the profile's periods are microseconds
      break;
    case DotnetEventKind::kException:
      options.count_type = "exceptions";
      options.periods_are_samples = true;  // one per throw
      break;
  }
  options.comments.push_back(absl::StrCat(output.label, ": ", output.description));
  return options;
}

absl::Status WriteDotnetEventPprofs(const std::string& dir,
                                    const std::vector<const fold::DotnetEventProfile*>& profiles,
                                    const PprofOptions& run, std::vector<std::string>* written) {
  for (const fold::DotnetEventProfile* profile : profiles) {
    const char* name = DotnetEventOutputOf(profile->kind).pprof_file;
    PROFCPU_RETURN_IF_ERROR(WritePprofFile(profile->profile,
                                           DotnetEventPprofOptions(profile->kind, run),
                                           absl::StrCat(dir, "/", name)));
    written->push_back(name);
  }
  return absl::OkStatus();
}

}  // namespace profcpu::render
