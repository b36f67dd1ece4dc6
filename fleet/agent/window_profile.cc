#include "fleet/agent/window_profile.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "fleet/agent/agent_defaults.h"
#include "fold/profile_builder.h"
#include "fold/profile_shaping.h"
#include "recording/recording_reader.h"
#include "recording/run_folder.h"
#include "symbolize/dotnet_code_names.h"
#include "symbolize/run_symbols.h"

namespace profcpu::fleet {

absl::StatusOr<NamedWindow> NameWindow(const std::string& dir,
                                       const symbolize::ProcessFiles* files,
                                       symbolize::LoadedSymbolCache* cache, base::RunLog* log) {
  PROFCPU_ASSIGN_OR_RETURN(auto reader, recording::RecordingReader::Open(
                                            absl::StrCat(dir, "/", recording::kRecordingFile)));
  symbolize::DotnetCodeNames dotnet_code(dir, log);
  symbolize::RunSymbolsOptions options{dir, files, {}, /*strip_tiers=*/false, &dotnet_code};
  options.cache = cache;
  options.keep_jit_copies = false;
  options.max_dwarf_bytes = kAgentMaxDwarfBytes;
  symbolize::RunSymbols symbols(options, log);
  PROFCPU_ASSIGN_OR_RETURN(fold::BuiltProfile built,
                           fold::BuildProfile(*reader, {symbols.jit_history(), symbols.unwinder()}));
  NamedWindow window;
  window.summary = built.summary;
  PROFCPU_ASSIGN_OR_RETURN(
      symbolize::ResolvedSymbols resolved,
      symbols.ResolveProfile({&built.requests, &built.modules, std::move(built.known_names),
                              window.summary.header.boot_id,
                              {window.summary.dwarf_stacks, window.summary.dwarf_truncated,
                               window.summary.dwarf_not_unwound}}));
  window.profile = std::move(built.profile);
  window.profile.SetSymbols(std::move(resolved.table));
  PROFCPU_RETURN_IF_ERROR(
      fold::ShapeProfile(&window.summary, fold::ProfileFilter{}, &window.profile, log).status());
  window.profile.SetModules(std::move(built.modules));
  return window;
}

}  // namespace profcpu::fleet
