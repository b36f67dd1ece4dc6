// The .NET event profiles' files beside the CPU profile's: folded stacks
// (alloc_stacks.out, lock_wait_stacks.out, exception_stacks.out) and, with
// -format pprof, alloc.pb.gz, lock_wait.pb.gz and exceptions.pb.gz. Only
// kinds with at least one sample get files. profile.html's views of them
// are built by run_outputs.cc (run_page.h's PageView).
//
// Each sample's period is its weight (bytes, microseconds waited, one per
// throw), so the folded files sum periods; frames are named with the CPU
// folded file's options, so a JIT frame reads the same in both.
#ifndef PROFCPU_RENDER_DOTNET_EVENT_OUTPUTS_H_
#define PROFCPU_RENDER_DOTNET_EVENT_OUTPUTS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "fold/dotnet_event_profiles.h"
#include "fold/folded_writer.h"
#include "render/pprof_writer.h"

namespace profcpu::render {

// How each kind is presented; the names are the contract's (issue 28).
struct DotnetEventOutput {
  fold::DotnetEventKind kind;
  const char* key;          // "alloc", "lock_wait", "exception": profile.html's view
  const char* stacks_file;  // "alloc_stacks.out", ...
  const char* pprof_file;   // "alloc.pb.gz", ...
  const char* label;        // "Allocations", "Lock waits", "Exceptions"
  const char* count_name;   // what a weight counts: "bytes", "microseconds", "throws"
  const char* description;  // one line for the page's header and pprof's comments
};

const DotnetEventOutput& DotnetEventOutputOf(fold::DotnetEventKind kind);

// The profiles that have samples, in their order (allocations, lock waits,
// exceptions); none for a null `profiles`.
std::vector<const fold::DotnetEventProfile*> DotnetProfilesWithSamples(
    const fold::DotnetEventProfiles* profiles);

// The CPU folded file's options, counting periods (the weights) and
// keeping every sample (an event profile has no perf event to filter on).
fold::FoldOptions DotnetEventFoldOptions(const fold::FoldOptions& cpu);

// Writes each profile's folded stacks into `dir`; appends the names written.
absl::Status WriteDotnetEventStacks(const std::string& dir,
                                    const std::vector<const fold::DotnetEventProfile*>& profiles,
                                    const fold::FoldOptions& cpu, std::vector<std::string>* written);

// The run's pprof options (start, duration, comments) with the kind's
// sample types: alloc_objects/count + alloc_space/bytes (the default),
// contentions/count + delay/nanoseconds, exceptions/count.
PprofOptions DotnetEventPprofOptions(fold::DotnetEventKind kind, const PprofOptions& run);

// Writes each profile's pprof file into `dir`; appends the names written.
absl::Status WriteDotnetEventPprofs(const std::string& dir,
                                    const std::vector<const fold::DotnetEventProfile*>& profiles,
                                    const PprofOptions& run, std::vector<std::string>* written);

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_DOTNET_EVENT_OUTPUTS_H_
