#include "scripts/cli/command_flags.h"

#include <cstdio>

#include "fold/line_reader.h"
#include "scripts/cli/commands.h"

namespace profcpu::cli {

std::optional<int> ParseCommandFlags(const std::vector<std::string>& args, FlagSet* flags) {
  absl::Status parsed = flags->Parse(args);
  if (!parsed.ok()) return UsageError(*flags, parsed.message());
  if (flags->help_requested()) {
    std::printf("%s", flags->Usage().c_str());
    return kExitOk;
  }
  return std::nullopt;
}

int UsageError(const FlagSet& flags, absl::string_view message) {
  const char* command = flags.command().c_str();
  std::fprintf(stderr, "profcpu %s: %.*s\n(profcpu %s --help lists its flags)\n", command,
               static_cast<int>(message.size()), message.data(), command);
  return kExitUsage;
}

int Fail(absl::string_view message) {
  std::fprintf(stderr, "profcpu: %.*s\n", static_cast<int>(message.size()), message.data());
  return kExitFailure;
}

int CommandFailure(absl::string_view command, absl::string_view message) {
  std::fprintf(stderr, "profcpu %.*s: %.*s\n", static_cast<int>(command.size()), command.data(),
               static_cast<int>(message.size()), message.data());
  return kExitFailure;
}

void WarnOverlongLines(absl::string_view command, uint64_t overlong_lines) {
  if (overlong_lines == 0) return;
  std::fprintf(stderr, "profcpu %.*s: %llu lines over %zu bytes skipped\n",
               static_cast<int>(command.size()), command.data(),
               static_cast<unsigned long long>(overlong_lines),
               fold::LineReader::kDefaultMaxLineBytes);
}

}  // namespace profcpu::cli
