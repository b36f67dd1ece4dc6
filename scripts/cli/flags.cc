#include "scripts/cli/flags.h"

#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace profcpu::cli {

void FlagSet::Add(std::string name, std::string value_name, std::string default_value,
                  std::string help) {
  index_[name] = flags_.size();
  flags_.push_back({std::move(name), std::move(value_name), default_value, std::move(help),
                    default_value, {}, false});
}

const FlagSet::Flag* FlagSet::Find(absl::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &flags_[it->second];
}

absl::Status FlagSet::Parse(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    if (saw_double_dash_ || arg.size() < 2 || arg[0] != '-') {
      positionals_.emplace_back(arg);
      if (stop_at_positional_) saw_double_dash_ = true;
      continue;
    }
    if (arg == "--") {
      saw_double_dash_ = true;
      continue;
    }
    absl::string_view name = arg.substr(absl::StartsWith(arg, "--") ? 2 : 1);
    if (name == "help" || name == "h") {
      help_ = true;
      continue;
    }
    absl::string_view inline_value;
    bool has_inline = false;
    if (size_t eq = name.find('='); eq != absl::string_view::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_inline = true;
    }
    auto it = index_.find(name);
    if (it == index_.end()) {
      // The caller names the command and points to --help (UsageError).
      return absl::InvalidArgumentError(absl::StrCat("unknown flag '", arg, "'"));
    }
    Flag& flag = flags_[it->second];
    flag.set = true;
    if (flag.value_name.empty()) {
      if (has_inline && inline_value != "true" && inline_value != "false") {
        return absl::InvalidArgumentError(absl::StrCat("flag -", name, " takes no value"));
      }
      flag.value = has_inline ? std::string(inline_value) : "true";
      continue;
    }
    if (has_inline) {
      flag.value = std::string(inline_value);
    } else if (i + 1 < args.size()) {
      flag.value = args[++i];
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("flag -", name, " needs a value (", flag.value_name, ")"));
    }
    flag.values.push_back(flag.value);
  }
  return absl::OkStatus();
}

bool FlagSet::IsSet(absl::string_view name) const {
  const Flag* flag = Find(name);
  return flag != nullptr && flag->set;
}

bool FlagSet::Bool(absl::string_view name) const {
  const Flag* flag = Find(name);
  return flag != nullptr && flag->value == "true";
}

std::string FlagSet::String(absl::string_view name) const {
  const Flag* flag = Find(name);
  return flag == nullptr ? "" : flag->value;
}

std::vector<std::string> FlagSet::Strings(absl::string_view name) const {
  const Flag* flag = Find(name);
  return flag == nullptr ? std::vector<std::string>() : flag->values;
}

absl::Status FlagSet::Int(absl::string_view name, int64_t min, int64_t max, int64_t* out) const {
  std::string value = String(name);
  if (!absl::SimpleAtoi(value, out) || *out < min || *out > max) {
    return absl::InvalidArgumentError(absl::StrCat("-", name, " must be an integer from ", min,
                                                   " to ", max, ", got '", value, "'"));
  }
  return absl::OkStatus();
}

absl::Status FlagSet::Seconds(absl::string_view name, double* out) const {
  std::string value = String(name);
  if (!absl::SimpleAtod(value, out) || !std::isfinite(*out) || *out < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("-", name, " must be a number of seconds, got '", value, "'"));
  }
  return absl::OkStatus();
}

std::string FlagSet::Usage() const {
  std::string out = absl::StrCat("Usage: ", synopsis_, "\n\n", description_, "\n");
  if (!flags_.empty()) absl::StrAppend(&out, "\nFlags (-flag or --flag; values as -flag V or -flag=V):\n");
  for (const Flag& flag : flags_) {
    std::string left = absl::StrCat("  -", flag.name);
    if (!flag.value_name.empty()) absl::StrAppend(&left, " ", flag.value_name);
    std::string help = flag.help;
    if (!flag.default_value.empty() && !flag.value_name.empty()) {
      absl::StrAppend(&help, " (default ", flag.default_value, ")");
    }
    if (left.size() < 24) {
      absl::StrAppend(&out, absl::StrFormat("%-24s%s\n", left, help));
    } else {
      absl::StrAppend(&out, left, "\n", std::string(24, ' '), help, "\n");
    }
  }
  absl::StrAppend(&out, "  -help                 show this help\n");
  return out;
}

}  // namespace profcpu::cli
