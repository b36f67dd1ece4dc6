#include "symbolize/dotnet_code_names.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/file_io.h"
#include "nettrace/source.h"
#include "recording/run_folder.h"
#include "symbolize/managed_code_events.h"

namespace profcpu::symbolize {

std::unique_ptr<Jitdump> DotnetCodeNames::CodeOf(uint32_t pid, std::string* described) {
  const std::string relative = absl::StrCat(recording::kDotnetEventsDir, "/", pid, ".nettrace");
  absl::StatusOr<base::UniqueFd> fd = base::OpenReadOnly(absl::StrCat(run_dir_, "/", relative));
  if (!fd.ok()) return nullptr;  // not a .NET process, or -dotnet-events off
  nettrace::NettraceFdSource source(fd->get());
  absl::StatusOr<ManagedCodeHistory> history = ReadManagedCode(&source);
  if (!history.ok()) {
    log_->Warn(absl::StrCat("cannot name pid ", pid, "'s JIT code from ", relative, ": ",
                            history.status().message()));
    return nullptr;
  }
  if (!history->read_error.ok()) {
    log_->Warn(absl::StrCat(relative, " is damaged or cut short: JIT code it names after that "
                            "point stays unnamed (", history->read_error.message(), ")"));
  }
  if (history->capped) {
    log_->Warn(absl::StrCat(relative, " lists more methods than profcpu keeps; the rest stay "
                            "unnamed"));
  }
  if (!history->rundown_seen) {
    // The process exited before the session ended (record), or the session
    // was cut: code compiled before the session has no name.
    log_->Info(absl::StrCat(relative, " has no rundown: only code compiled during the session "
                            "is named from it"));
  }
  std::vector<TimedJitCode> code;
  code.reserve(history->methods.size());
  for (ManagedMethodCode& m : history->methods) {
    code.push_back({m.start, m.size, m.load_ns, m.unload_ns, std::move(m.name)});
  }
  *described = absl::StrCat(relative, " (", history->loads, " methods loaded during the session, ",
                            history->rundown, " before it)");
  return std::make_unique<Jitdump>(Jitdump::FromCode(std::move(code)));
}

}  // namespace profcpu::symbolize
