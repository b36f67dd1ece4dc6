// The names of the files a run folder holds (docs/recording-format.md): the
// recording and what every stage writes or reads beside it. Shared by the
// collector's caller, the symbolizer (snapshot, JIT copies, unwound stacks)
// and the command that packs the archive.
#ifndef PROFCPU_RECORDING_RUN_FOLDER_H_
#define PROFCPU_RECORDING_RUN_FOLDER_H_

namespace profcpu::recording {

inline constexpr char kRecordingFile[] = "recording.zst";
inline constexpr char kSymbolsFile[] = "symbols.bin";
inline constexpr char kFoldedFile[] = "folded_stacks.out";
inline constexpr char kPerfScriptFile[] = "perf_script.out";
// The .NET runtimes' event profiles (fold/dotnet_event_profiles.h), folded.
inline constexpr char kAllocStacksFile[] = "alloc_stacks.out";
inline constexpr char kLockWaitStacksFile[] = "lock_wait_stacks.out";
inline constexpr char kExceptionStacksFile[] = "exception_stacks.out";
inline constexpr char kFlameGraphFile[] = "flamegraph.svg";
inline constexpr char kMetadataFile[] = "metadata.json";
inline constexpr char kLogFile[] = "profcpu.log";
inline constexpr char kArchiveFile[] = "prof.tar.gz";
// The interactive page (render/profile_page_writer.h).
inline constexpr char kProfilePageFile[] = "profile.html";
// Copies of the processes' perf maps and jitdumps (symbolize/archived_jit_files.h).
inline constexpr char kJitDir[] = "jit";
// The .NET processes' EventPipe streams, PID.nettrace (-dotnet-events on;
// collector/dotnet/dotnet_events_session.h).
inline constexpr char kDotnetEventsDir[] = "dotnet";
// -callgraph dwarf: the user stacks unwound after collection
// (symbolize/unwound_stacks.h), replayed by postprocess.
inline constexpr char kUnwoundStacksFile[] = "unwound_stacks.bin";

}  // namespace profcpu::recording

#endif  // PROFCPU_RECORDING_RUN_FOLDER_H_
