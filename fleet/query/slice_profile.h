// A merged slice as a Profile, the record render draws (as
// fold/perf_script_import.h builds one from text, with no recording): each
// stored frame one location of kind kImported named by the store's name and
// module; one sample per (bucket, stack) at the bucket's start (unix time)
// with the bucket's count as its period (fold with weight_by_period). The
// stack's root is the program (the comm label; "[several]" when stacks of
// several programs share the id); the "other" stack is a lone "[other]" root
// frame.
#ifndef PROFCPU_FLEET_QUERY_SLICE_PROFILE_H_
#define PROFCPU_FLEET_QUERY_SLICE_PROFILE_H_

#include <cstdint>
#include <vector>

#include "fleet/query/slice_merge.h"
#include "fold/profile.h"

namespace profcpu::fleet {

inline constexpr char kOtherFrame[] = "[other]";
inline constexpr char kSeveralComms[] = "[several]";
inline constexpr char kMissingStack[] = "[stack not in store]";

struct SliceProfileStats {
  uint64_t stacks_without_names = 0;  // no shard had the stacks_local row
  uint64_t frames_without_names = 0;  // no shard had the frames_local row
};

// `slices`: one, or a differential view's baseline and slice (the page
// shows both on one time axis).
fold::Profile BuildSliceProfile(const std::vector<const MergedSlice*>& slices,
                                const StackNames& names, SliceProfileStats* stats);

}  // namespace profcpu::fleet

#endif  // PROFCPU_FLEET_QUERY_SLICE_PROFILE_H_
