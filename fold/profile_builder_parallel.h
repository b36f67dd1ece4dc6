// The replay split across threads (BuildOptions::threads > 1), with the same
// BuiltProfile as the one-thread replay, id for id, so every output is the
// same byte for byte.
//
// Split by time slice, not by process: a machine-wide run's samples are
// mostly in a few busy processes (16 threads of one service are one
// process), so processes would not spread the work over 16 cores, while
// slices of consecutive samples always do. Each slice starts from the
// mapping state at its start, which its worker rebuilds from the mapping
// records before it (Mmap, Comm, Fork: few next to the samples), so no
// worker waits for another's. One thread, the tracker, reads every record in
// order and does what depends on order and is cheap: thread names (the
// profile's strings, interned in the one-thread order), the summary's
// counts. The merge interns each slice's locations and stacks into the
// profile slice by slice: a slice's first-seen order is the one-thread
// order restricted to it, so the ids come out the same.
//
// What the JIT history answers depends on which jitdump mappings it has
// been told of (symbolize/jit_sources.h): at a jitdump's Mmap every earlier
// slice finishes before the history hears of it.
//
// The user-stack unwinder (-callgraph dwarf, and fp+cfi's leaf repair)
// keeps per-process state. Right after collection it reads the target's
// files: each worker thread gets one of its own (NewWorker), whose sessions
// the worker's mappings rebuild, and its answers go back to the run's
// unwinder in recording order as slices merge (it saves them in
// unwound_stacks.bin). postprocess replays that file, whose answers come in
// recording order: the tracker reads them (cheap next to the rest) and hands
// each slice its own. BPF recordings (stacks by id, sorted off-CPU stays)
// replay on one thread.
#ifndef PROFCPU_FOLD_PROFILE_BUILDER_PARALLEL_H_
#define PROFCPU_FOLD_PROFILE_BUILDER_PARALLEL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fold/profile_builder.h"
#include "recording/record_prefetcher.h"
#include "recording/recording_reader.h"
#include "recording/records.h"

namespace profcpu::fold {

// Why a recording with this header replays on one thread, "" if it splits.
std::string WhyReplayOnOneThread(const recording::Header& header);

// BuildProfile on options.threads threads. `first`: the first batch of
// `records` (it starts with the header).
absl::StatusOr<BuiltProfile> BuildProfileInParallel(recording::RecordingReader& reader,
                                                    recording::RecordPrefetcher& records,
                                                    std::vector<recording::Record> first,
                                                    const BuildOptions& options);

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_PROFILE_BUILDER_PARALLEL_H_
