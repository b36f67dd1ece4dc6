// profcpu: sample on-CPU stacks and turn them into flame graphs.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "scripts/cli/commands.h"
#include "scripts/cli/version.h"

namespace {

constexpr char kUsage[] =
    "Usage: profcpu COMMAND [FLAGS]\n"
    "\n"
    "A CPU profiler for Linux processes and containers: samples on-CPU stacks (kernel,\n"
    "native and JIT frames) with perf events and writes flame graphs, folded stacks,\n"
    "perf script text for FlameScope and the FlameGraph tools, and (-format perfview)\n"
    "a trace for PerfView.\n"
    "\n"
    "Commands:\n"
    "  collect      profile a running process: profcpu collect -pid PID [-duration SEC]\n"
    "  record       run a command and profile it: profcpu record -- CMD [ARGS...]\n"
    "  postprocess  rebuild a run folder's outputs: profcpu postprocess -dir DIR\n"
    "  ps           list .NET processes: pids, container, runtime, perf maps on or off\n"
    "  perfmap      turn a .NET 8+ process's perf map on or off: profcpu perfmap enable -pid N\n"
    "  html         perf script text (perf's or profcpu's) -> profile.html: heatmap, flame\n"
    "               graph and function table in one file that opens offline in a browser\n"
    "  symbols      a run's modules with unknown frames, their build-ids, and their debug\n"
    "               files fetched from debuginfod or symbol servers: profcpu symbols -dir DIR\n"
    "\n"
    "The fleet: an agent on every node, ClickHouse as the store (docs/fleet.md):\n"
    "  fleet        the store's tables on every ClickHouse shard, and their retention:\n"
    "               profcpu fleet init -store URL[,URL...]; profcpu fleet retention -keep 7d\n"
    "  agent        profile this node until stopped, window after window, into the store:\n"
    "               profcpu agent -store URL[,URL...]\n"
    "  query        draw a slice of the fleet's store (ClickHouse): profcpu query -store URL\n"
    "               -from -1h -where 'namespace=shop' -o profile.html\n"
    "\n"
    "The FlameGraph tools, built in (same flags, same output, much faster):\n"
    "  fold         perf script text -> folded stacks (stackcollapse-perf.pl)\n"
    "  flamegraph   folded stacks -> interactive SVG (flamegraph.pl)\n"
    "  diff         two folded files -> differential input (difffolded.pl)\n"
    "\n"
    "  version      print the version\n"
    "\n"
    "Run 'profcpu COMMAND --help' for a command's flags. Flags take one or two dashes\n"
    "(-pid 1, --pid=1).\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace profcpu::cli;
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return kExitUsage;
  }
  std::string command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "collect") return RunCollect(args);
  if (command == "record") return RunRecord(args);
  if (command == "postprocess") return RunPostprocess(args);
  if (command == "ps") return RunPs(args);
  if (command == "perfmap") return RunPerfmap(args);
  if (command == "fold") return RunFold(args);
  if (command == "html") return RunHtml(args);
  if (command == "symbols") return RunSymbols(args);
  if (command == "agent") return RunAgent(args);
  if (command == "fleet") return RunFleet(args);
  if (command == "flamegraph") return RunFlamegraph(args);
  if (command == "diff") return RunDiff(args);
  if (command == "query") return RunQuery(args);
  if (command == "version" || command == "--version" || command == "-version") {
    std::printf("profcpu %s\n", kProfcpuVersion);
    return kExitOk;
  }
  if (command == "help" || command == "--help" || command == "-help" || command == "-h") {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  std::fprintf(stderr, "profcpu: unknown command '%s' (profcpu --help lists the commands)\n",
               command.c_str());
  return kExitUsage;
}
