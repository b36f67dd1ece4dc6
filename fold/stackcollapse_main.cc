// profcpu-stackcollapse: a drop-in for stackcollapse-perf.pl (FlameGraph
// commit 41fee1f) for comparing against the script and for benchmarks.
//   profcpu-stackcollapse [--pid] [--tid] [--kernel] [--jit] [--all] [--addrs]
//                         [--event-filter=EVENT] [FILE...]   (stdin if none)
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "collector/base/unique_fd.h"
#include "fold/line_reader.h"
#include "fold/output_buffer.h"
#include "fold/stackcollapse.h"

namespace {

int Usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--pid] [--tid] [--kernel] [--jit] [--all] [--addrs]\n"
               "          [--event-filter=EVENT] [FILE...]\n",
               argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using profcpu::fold::LineReader;
  profcpu::fold::StackCollapseOptions options;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    // Getopt::Long accepts one or two dashes.
    if (absl::StartsWith(arg, "--")) {
      arg.remove_prefix(2);
    } else if (absl::StartsWith(arg, "-") && arg.size() > 1) {
      arg.remove_prefix(1);
    } else {
      files.emplace_back(arg);
      continue;
    }
    if (arg == "pid") {
      options.include_pid = true;
    } else if (arg == "tid") {
      options.include_tid = true;
    } else if (arg == "kernel") {
      options.annotate_kernel = true;
    } else if (arg == "jit") {
      options.annotate_jit = true;
    } else if (arg == "all") {
      options.annotate_kernel = options.annotate_jit = true;
    } else if (arg == "addrs") {
      options.include_addrs = true;
    } else if (absl::ConsumePrefix(&arg, "event-filter=")) {
      options.event_filter = std::string(arg);
    } else if (arg == "event-filter" && i + 1 < argc) {
      options.event_filter = argv[++i];
    } else {
      return Usage(argv[0]);
    }
  }

  profcpu::fold::StackCollapser collapser(options);
  auto consume = [&collapser](LineReader& reader, const std::string& name) {
    absl::string_view line;
    while (reader.Next(&line)) collapser.AddLine(line);
    collapser.mutable_stats().overlong_lines += reader.overlong_lines();
    if (!reader.status().ok()) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), reader.status().ToString().c_str());
      return false;
    }
    return true;
  };
  if (files.empty()) {
    LineReader reader = LineReader::FromFd(profcpu::base::UniqueFd(::dup(STDIN_FILENO)));
    if (!consume(reader, "stdin")) return 1;
  }
  for (const std::string& file : files) {
    auto reader = LineReader::Open(file);
    if (!reader.ok()) {
      std::fprintf(stderr, "%s\n", reader.status().ToString().c_str());
      return 1;
    }
    if (!consume(*reader, file)) return 1;
  }

  const profcpu::fold::StackCollapseStats& stats = collapser.stats();
  if (!stats.warned_event.empty()) {
    std::fprintf(stderr, "Filtering for events of type: %s\n", stats.warned_event.c_str());
  }
  if (stats.unrecognized_lines > 0) {
    std::fprintf(stderr, "%llu unrecognized lines\n",
                 static_cast<unsigned long long>(stats.unrecognized_lines));
  }
  if (stats.overlong_lines > 0) {
    std::fprintf(stderr, "%llu lines over %zu bytes skipped\n",
                 static_cast<unsigned long long>(stats.overlong_lines),
                 LineReader::kDefaultMaxLineBytes);
  }
  profcpu::fold::OutputBuffer out(stdout);
  collapser.Write(&out);
  absl::Status status = out.Finish();
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
