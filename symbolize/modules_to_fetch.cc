#include "symbolize/modules_to_fetch.h"

#include <fstream>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "recording/run_folder.h"

namespace profcpu::symbolize {
namespace {

// metadata.json is the run's own output, but a copied folder may hold
// anything: bounded, and every field checked.
constexpr std::streamsize kMaxMetadataBytes = 64 << 20;

}  // namespace

std::vector<ModuleToFetch> NativeModulesToFetch(
    const std::vector<std::pair<std::string, uint64_t>>& unknown_by_module,
    const std::vector<Module>& modules) {
  absl::flat_hash_map<absl::string_view, const Module*> by_path;
  for (const Module& module : modules) by_path.try_emplace(module.path, &module);
  std::vector<ModuleToFetch> out;
  for (const auto& [path, frames] : unknown_by_module) {
    auto it = by_path.find(path);
    if (it == by_path.end()) continue;  // JIT code, anonymous memory, no mapping
    out.push_back({path, it->second->build_id, frames});
  }
  return out;
}

nlohmann::ordered_json ModulesToFetchJson(const std::vector<ModuleToFetch>& modules) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const ModuleToFetch& m : modules) {
    out.push_back({{"module", m.module},
                   {"build_id", absl::BytesToHexString(m.build_id)},
                   {"unknown_frames", m.unknown_frames}});
  }
  return out;
}

absl::StatusOr<std::vector<ModuleToFetch>> ReadModulesToFetch(const std::string& dir) {
  const std::string path = absl::StrCat(dir, "/", recording::kMetadataFile);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(
        "no ", path, ": run profcpu postprocess -dir ", dir, " first (it unpacks prof.tar.gz)"));
  }
  std::string text(static_cast<size_t>(kMaxMetadataBytes), '\0');
  in.read(text.data(), kMaxMetadataBytes);
  text.resize(static_cast<size_t>(in.gcount()));
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is not JSON"));
  }
  auto symbols = j.find("symbols");
  if (symbols == j.end() || !symbols->is_object() || !symbols->contains("unknown_native_modules")) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, " lists no modules' build-ids (written by an older profcpu): run profcpu "
              "postprocess -dir ", dir, " first"));
  }
  std::vector<ModuleToFetch> modules;
  for (const nlohmann::json& m : (*symbols)["unknown_native_modules"]) {
    if (!m.is_object() || !m.contains("module") || !m["module"].is_string() ||
        !m.contains("build_id") || !m["build_id"].is_string()) {
      continue;
    }
    ModuleToFetch module;
    module.module = m["module"].get<std::string>();
    const std::string hex = m["build_id"].get<std::string>();
    if (hex.size() % 2 != 0 || hex.find_first_not_of("0123456789abcdef") != std::string::npos) {
      continue;
    }
    module.build_id = absl::HexStringToBytes(hex);
    if (m.contains("unknown_frames") && m["unknown_frames"].is_number_unsigned()) {
      module.unknown_frames = m["unknown_frames"].get<uint64_t>();
    }
    modules.push_back(std::move(module));
  }
  return modules;
}

}  // namespace profcpu::symbolize
