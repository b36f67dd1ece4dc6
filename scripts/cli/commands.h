// The profcpu subcommands. Each takes its arguments (after the subcommand
// name) and returns the process exit code: 0 success, 1 failure, 2 bad usage;
// record returns its command's status (126/127 when it cannot run, as shells do).
#ifndef PROFCPU_SCRIPTS_CLI_COMMANDS_H_
#define PROFCPU_SCRIPTS_CLI_COMMANDS_H_

#include <string>
#include <vector>

namespace profcpu::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitCommandNotExecutable = 126;
inline constexpr int kExitCommandNotFound = 127;

int RunCollect(const std::vector<std::string>& args);
int RunRecord(const std::vector<std::string>& args);
int RunPostprocess(const std::vector<std::string>& args);
int RunPs(const std::vector<std::string>& args);
int RunPerfmap(const std::vector<std::string>& args);
int RunFold(const std::vector<std::string>& args);
int RunFlamegraph(const std::vector<std::string>& args);
int RunDiff(const std::vector<std::string>& args);
int RunHtml(const std::vector<std::string>& args);
int RunSymbols(const std::vector<std::string>& args);
int RunAgent(const std::vector<std::string>& args);
int RunFleet(const std::vector<std::string>& args);
int RunQuery(const std::vector<std::string>& args);

}  // namespace profcpu::cli

#endif  // PROFCPU_SCRIPTS_CLI_COMMANDS_H_
