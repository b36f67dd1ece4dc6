// prof.tar.gz's order, and what postprocess leaves out when it unpacks one.
//
// The rule: the inputs first (recording.zst first of all, then the snapshot,
// unwound stacks, metadata, log, JIT copies, .NET streams, exports), then the
// outputs postprocess may rebuild, profile.html first (kept with -format
// no-html) and perf_script.out, the largest, last. Unpacking for postprocess
// can then stop at the first output it rebuilds (ExtractSkip) instead of
// inflating hundreds of MB it would overwrite. Archives written before this
// order (outputs first, recording.zst after them) are still read whole.
#ifndef PROFCPU_ARCHIVE_RUN_ARCHIVE_H_
#define PROFCPU_ARCHIVE_RUN_ARCHIVE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "archive/archive.h"

namespace profcpu::archive {

// `files` (a run folder's names) in the archive's order; the inputs keep
// their relative order.
std::vector<std::string> ArchiveOrder(std::vector<std::string> files);

// Where postprocess finds a run's inputs: a folder may hold only the
// prof.tar.gz copied from the machine it ran on. Unless the recording is
// there already, calls `on_unpack` (the archive's path: unpacking takes a
// while) and unpacks the archive's inputs (PostprocessSkip(html)), keeping
// files that exist. NotFound when the folder holds neither; InvalidArgument
// when the archive holds no recording.
struct RunInputs {
  bool had_archive = false;  // the folder held prof.tar.gz
};
absl::StatusOr<RunInputs> UnpackRunInputs(const std::string& dir, bool html,
                                          const std::function<void(const std::string&)>& on_unpack);

// What postprocess leaves out of prof.tar.gz: the outputs it always rebuilds,
// and profile.html unless `html` is off (-format no-html keeps the archived one).
ExtractSkip PostprocessSkip(bool html);

}  // namespace profcpu::archive

#endif  // PROFCPU_ARCHIVE_RUN_ARCHIVE_H_
