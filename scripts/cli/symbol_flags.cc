#include "scripts/cli/symbol_flags.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace profcpu::cli {

absl::StatusOr<CallgraphChoice> ParseCallgraph(absl::string_view value) {
  CallgraphChoice choice;
  if (value == "fp") return choice;
  absl::string_view size = value;
  uint32_t* bytes = nullptr;
  uint32_t default_bytes = 0;
  if (absl::ConsumePrefix(&size, "dwarf")) {
    bytes = &choice.dwarf_stack_size;
    default_bytes = kDefaultDwarfStackSize;
  } else if (absl::ConsumePrefix(&size, "fp+cfi")) {
    bytes = &choice.leaf_stack_size;
    default_bytes = kDefaultLeafStackSize;
  }
  if (bytes != nullptr && size.empty()) {
    *bytes = default_bytes;
    return choice;
  }
  if (bytes != nullptr && absl::ConsumePrefix(&size, ",") && absl::SimpleAtoi(size, bytes) &&
      *bytes >= 8 && *bytes <= 65528 && *bytes % 8 == 0) {
    return choice;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "-callgraph must be fp, fp+cfi[,BYTES] or dwarf[,BYTES] (BYTES a multiple of 8 up to "
      "65528), got '",
      value, "'"));
}

void AddCallgraphFlag(FlagSet* flags) {
  flags->Add("callgraph", "MODE", "fp+cfi",
             "how user stacks are walked: fp+cfi[,BYTES], frame pointers plus each sample's "
             "(and each off-CPU switch-out's) IP, SP, BP and up to BYTES (default 512) of its "
             "user stack, from which the callers frame pointers miss below a frameless leaf "
             "(libc's write, poll, nanosleep and futex wrappers; prologues and epilogues) are "
             "put back by the leaf's .eh_frame after collection (not for -backend bpf's on-CPU "
             "samples, counted in the kernel); fp, frame pointers alone (no stack bytes in the "
             "recording); or dwarf[,BYTES], which copies each sample's user registers and "
             "BYTES (default 8192) of its user stack and unwinds them all from the target's "
             ".eh_frame/.debug_frame, for code built without frame pointers (-backend perf and "
             "-mode cpu only; stacks cut short are counted in metadata.json, dwarf_unwinding). "
             "BYTES is a multiple of 8 up to 65528");
}

absl::Status ReadCallgraphFlag(const FlagSet& flags, collector::SamplerOptions* sampler) {
  absl::StatusOr<CallgraphChoice> choice = ParseCallgraph(flags.String("callgraph"));
  if (!choice.ok()) return choice.status();
  sampler->dwarf_stack_size = choice->dwarf_stack_size;
  sampler->leaf_stack_size = choice->leaf_stack_size;
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
