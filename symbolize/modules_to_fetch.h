// The native modules a run left with unknown frames, with their build-ids:
// what FetchDebugFiles asks symbol servers for. Found from the unknown
// frames after a run, written into metadata.json
// ("symbols.unknown_native_modules") and read back from it by `profcpu
// symbols`, so both directions of that entry live here.
#ifndef PROFCPU_SYMBOLIZE_MODULES_TO_FETCH_H_
#define PROFCPU_SYMBOLIZE_MODULES_TO_FETCH_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "symbolize/code_location.h"
#include "symbolize/symbol_fetcher.h"

namespace profcpu::symbolize {

// The native modules among `unknown_by_module` (module path -> its frames
// left unknown, in that order), with their build-ids. Paths no module has
// (JIT code, anonymous memory) are left out.
std::vector<ModuleToFetch> NativeModulesToFetch(
    const std::vector<std::pair<std::string, uint64_t>>& unknown_by_module,
    const std::vector<Module>& modules);

// metadata.json's "unknown_native_modules": [{module, build_id (hex),
// unknown_frames}], in order.
nlohmann::ordered_json ModulesToFetchJson(const std::vector<ModuleToFetch>& modules);

// Reads them back from the run folder's metadata.json, which a copied folder
// may have replaced with anything: bounded, every field checked, entries
// that are not well formed skipped. NotFound without metadata.json;
// InvalidArgument for what is not JSON or lists no modules (an older
// profcpu's), saying to run postprocess first.
absl::StatusOr<std::vector<ModuleToFetch>> ReadModulesToFetch(const std::string& dir);

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_MODULES_TO_FETCH_H_
