// The code a .NET runtime compiled, as its saved EventPipe stream tells it
// (dotnet/PID.nettrace): each method's code range and name, and when it was
// there. What names managed frames when the target wrote no perf map
// (-perfmap off, a read-only /tmp): nothing is written in its filesystem.
//
//   runtime provider  MethodLoadVerbose (143)    code loaded, at its time
//                     MethodUnloadVerbose (144)  code freed, at its time
//                     ModuleLoad (152)           module id -> file
//   rundown provider  MethodDCEndVerbose (144)   code still loaded at the
//                     ModuleDCEnd (154)          session's end: everything
//                                                compiled before it began
//
// Code the rundown lists but no load event announced was compiled before the
// session: live from time 0. Names are written as the runtime writes them
// into its perf map ("int64 [PrimeApp] PrimeWorker::FindPrimeNumber(int32)
// [OptimizedTier1]", perfmap.cpp), so a flame graph reads the same with
// either source.
//
// The stream comes from the target: the reader is bounded (nettrace/reader.h)
// and so is what is kept here (ManagedCodeLimits).
#ifndef PROFCPU_SYMBOLIZE_MANAGED_CODE_EVENTS_H_
#define PROFCPU_SYMBOLIZE_MANAGED_CODE_EVENTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nettrace/runtime_events.h"
#include "nettrace/source.h"

namespace profcpu::symbolize {

struct ManagedCodeLimits {
  size_t max_methods = 4'000'000;
  size_t max_modules = 1'000'000;
  size_t max_name_bytes = size_t{512} << 20;
};

struct ManagedMethodCode {
  uint64_t start = 0;
  uint64_t size = 0;
  uint64_t load_ns = 0;              // CLOCK_MONOTONIC; 0: before the session
  uint64_t unload_ns = UINT64_MAX;   // freed at this time
  std::string name;
};

struct ManagedCodeHistory {
  std::vector<ManagedMethodCode> methods;
  uint64_t loads = 0;     // MethodLoadVerbose events
  uint64_t unloads = 0;   // MethodUnloadVerbose events matched to a load
  uint64_t rundown = 0;   // methods only the rundown listed
  bool rundown_seen = false;  // the stream holds a rundown at all
  bool capped = false;        // a ManagedCodeLimits cap was reached
  // Where reading stopped early (a damaged or cut stream); what came before
  // is kept.
  absl::Status read_error;
};

// Reads the whole stream. Fails only when it is not a NetTrace stream at all.
absl::StatusOr<ManagedCodeHistory> ReadManagedCode(nettrace::NettraceSource* source,
                                                   const ManagedCodeLimits& limits = {});

// A method's name as the runtime's perf map writes it, from its event's
// fields and its module's file path (the module's simple name is the file's
// name without .dll/.exe).
std::string PerfMapStyleName(const nettrace::MethodEvent& method, absl::string_view module_path);

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_MANAGED_CODE_EVENTS_H_
