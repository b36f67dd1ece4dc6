#include "scripts/cli/symbol_flags.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace profcpu::cli {

absl::StatusOr<uint32_t> ParseCallgraph(absl::string_view value) {
  if (value == "fp") return 0u;
  if (value == "dwarf") return kDefaultDwarfStackSize;
  absl::string_view size = value;
  uint32_t bytes = 0;
  if (absl::ConsumePrefix(&size, "dwarf,") && absl::SimpleAtoi(size, &bytes) && bytes >= 8 &&
      bytes <= 65528 && bytes % 8 == 0) {
    return bytes;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "-callgraph must be fp, dwarf or dwarf,BYTES (a multiple of 8 up to 65528), got '", value,
      "'"));
}

void AddCallgraphFlag(FlagSet* flags) {
  flags->Add("callgraph", "MODE", "fp",
             "how user stacks are walked: fp (frame pointers) or dwarf[,BYTES], which copies "
             "each sample's user registers and BYTES (default 8192, a multiple of 8 up to 65528) "
             "of its user stack and unwinds them from the target's .eh_frame/.debug_frame right "
             "after collection, for code built without frame pointers; -backend perf and -mode "
             "cpu only; stacks cut short are counted in metadata.json (dwarf_unwinding)");
}

absl::Status ReadCallgraphFlag(const FlagSet& flags, collector::SamplerOptions* sampler) {
  absl::StatusOr<uint32_t> size = ParseCallgraph(flags.String("callgraph"));
  if (!size.ok()) return size.status();
  sampler->dwarf_stack_size = *size;
  return absl::OkStatus();
}

void AddSymbolFlags(FlagSet* flags) {
  flags->Add("symbols", "DIR", "",
             "a directory of debug files, searched after the target's root and profcpu's own "
             "(their /usr/lib/debug): a .build-id/ tree, /usr/lib/debug-style paths, or files by "
             "debuglink or file name (as dotnet-symbol -o leaves them), matched by build-id or "
             "debuglink CRC; repeatable. postprocess looks native frames still unknown up again "
             "by the build-id the archive kept");
  flags->Add("strip-tiers", "", "",
             "drop the .NET tier annotation ([OptimizedTier1], [QuickJitted], [PreJIT]...) from "
             "JIT frame names in every output, so one method's tiers fold into one frame (the "
             "archive keeps them: postprocess without it brings them back)");
}

void ReadSymbolFlags(const FlagSet& flags, PipelineOptions* pipeline) {
  pipeline->symbol_dirs = flags.Strings("symbols");
  pipeline->strip_tiers = flags.Bool("strip-tiers");
}

}  // namespace profcpu::cli
