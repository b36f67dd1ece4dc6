// What every FlameGraph-style command (fold, flamegraph, diff) does with its
// flags before its own work: parse, and answer --help or a usage error.
#ifndef PROFCPU_SCRIPTS_CLI_COMMAND_FLAGS_H_
#define PROFCPU_SCRIPTS_CLI_COMMAND_FLAGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "scripts/cli/flags.h"

namespace profcpu::cli {

// Parses `args` into `flags`. Returns the exit code when the command is done
// already (kExitOk after printing --help, kExitUsage after a bad flag, said
// as UsageError says it); nullopt to go on.
std::optional<int> ParseCommandFlags(const std::vector<std::string>& args, FlagSet* flags);

// Prints "profcpu COMMAND: MESSAGE" and one line pointing to --help (the
// whole usage would scroll the error away); returns kExitUsage.
int UsageError(const FlagSet& flags, absl::string_view message);

// Prints "profcpu: MESSAGE" to stderr; returns kExitFailure.
int Fail(absl::string_view message);

// Prints "profcpu COMMAND: MESSAGE" to stderr; returns kExitFailure.
int CommandFailure(absl::string_view command, absl::string_view message);

// "profcpu COMMAND: N lines over M bytes skipped", when N > 0.
void WarnOverlongLines(absl::string_view command, uint64_t overlong_lines);

}  // namespace profcpu::cli

#endif  // PROFCPU_SCRIPTS_CLI_COMMAND_FLAGS_H_
