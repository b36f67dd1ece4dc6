// Command-line flags for the profcpu subcommands. Accepts the styles users of
// the original bash profcpu and of GNU tools type: `-pid 1`, `--pid 1`,
// `-pid=1`, `--pid=1`; boolean flags take no value (`-a`, `--no-idle`);
// `--` ends the flags (record's command follows it).
#ifndef PROFCPU_SCRIPTS_CLI_FLAGS_H_
#define PROFCPU_SCRIPTS_CLI_FLAGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace profcpu::cli {

class FlagSet {
 public:
  FlagSet(std::string command, std::string synopsis, std::string description)
      : command_(std::move(command)), synopsis_(std::move(synopsis)),
        description_(std::move(description)) {}

  // Registers a flag. `value_name` empty means a boolean flag.
  void Add(std::string name, std::string value_name, std::string default_value, std::string help);

  // Parses `args` (without the program and subcommand names). Arguments that
  // are not flags are collected as positionals; everything after `--` too.
  absl::Status Parse(const std::vector<std::string>& args);

  // Everything from the first positional on is positional (record's command
  // may carry its own flags without a `--`).
  void StopAtFirstPositional() { stop_at_positional_ = true; }

  bool help_requested() const { return help_; }
  bool IsSet(absl::string_view name) const;  // given on the command line
  bool Bool(absl::string_view name) const;
  std::string String(absl::string_view name) const;
  // Every value a repeatable flag was given, in order (`-symbols A -symbols B`);
  // String() gives the last one.
  std::vector<std::string> Strings(absl::string_view name) const;
  // InvalidArgument naming the flag if the value is not an integer in [min, max].
  absl::Status Int(absl::string_view name, int64_t min, int64_t max, int64_t* out) const;
  // Seconds, possibly fractional ("30", "0.5").
  absl::Status Seconds(absl::string_view name, double* out) const;

  const std::vector<std::string>& positionals() const { return positionals_; }
  bool saw_double_dash() const { return saw_double_dash_; }

  std::string Usage() const;
  const std::string& command() const { return command_; }

 private:
  struct Flag {
    std::string name;
    std::string value_name;
    std::string default_value;
    std::string help;
    std::string value;
    std::vector<std::string> values;  // every value given, in order
    bool set = false;
  };
  const Flag* Find(absl::string_view name) const;

  std::string command_;
  std::string synopsis_;
  std::string description_;
  std::vector<Flag> flags_;
  absl::flat_hash_map<std::string, size_t> index_;
  std::vector<std::string> positionals_;
  bool help_ = false;
  bool saw_double_dash_ = false;
  bool stop_at_positional_ = false;
};

}  // namespace profcpu::cli

#endif  // PROFCPU_SCRIPTS_CLI_FLAGS_H_
