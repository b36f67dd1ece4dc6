// Tests only: binutils' reading of a file's GNU build-id (hex), independent
// of the code under test; "" when readelf shows none.
#ifndef PROFCPU_FLEET_AGENT_TESTING_READELF_H_
#define PROFCPU_FLEET_AGENT_TESTING_READELF_H_

#include <cstdio>
#include <string>

namespace profcpu::fleet {

inline std::string ReadelfBuildId(const std::string& path) {
  FILE* pipe = ::popen(("readelf -n " + path).c_str(), "r");
  std::string out;
  char buffer[4096];
  size_t n;
  while (pipe != nullptr && (n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  if (pipe != nullptr) ::pclose(pipe);
  const size_t at = out.find("Build ID: ");
  if (at == std::string::npos) return "";
  return out.substr(at + 10, out.find('\n', at) - at - 10);
}

}  // namespace profcpu::fleet

#endif  // PROFCPU_FLEET_AGENT_TESTING_READELF_H_
