#include "collector/dotnet/ipc_protocol.h"

#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/byte_io.h"
#include "base/file_io.h"
#include "collector/dotnet/diagnostics_client.h"
#include "gtest/gtest.h"

namespace profcpu::collector::dotnet {
namespace {

void AppendString(base::ByteWriter& w, const std::u16string& s) {
  w.U32(static_cast<uint32_t>(s.size() + 1));
  for (char16_t c : s) w.U16(static_cast<uint16_t>(c));
  w.U16(0);
}

TEST(IpcProtocolTest, RequestHeaderLayout) {
  std::string request = EncodeRequest(0x04, 0x05, std::string("\x01\0\0\0", 4));
  ASSERT_EQ(request.size(), 24u);
  EXPECT_EQ(request.substr(0, 14), std::string("DOTNET_IPC_V1\0", 14));
  EXPECT_EQ(static_cast<uint8_t>(request[14]), 24);  // size, little-endian
  EXPECT_EQ(request[15], 0);
  EXPECT_EQ(request[16], 0x04);
  EXPECT_EQ(request[17], 0x05);
  EXPECT_EQ(request[18], 0);
  EXPECT_EQ(request[19], 0);
}

TEST(IpcProtocolTest, DecodesProcessInfo2) {
  std::string payload;
  base::ByteWriter w(&payload);
  w.U64(1);
  for (int i = 0; i < 16; ++i) w.U8(static_cast<uint8_t>(i));
  AppendString(w, u"/usr/bin/dotnet app.dll");
  AppendString(w, u"Linux");
  AppendString(w, u"x64");
  AppendString(w, u"PrimeApp\u00e9");
  AppendString(w, u"10.0.12");
  auto info = DecodeProcessInfo2(payload);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->pid, 1u);
  EXPECT_EQ(info->runtime_cookie, "000102030405060708090a0b0c0d0e0f");
  EXPECT_EQ(info->command_line, "/usr/bin/dotnet app.dll");
  EXPECT_EQ(info->entry_assembly, "PrimeApp\xc3\xa9");
  EXPECT_EQ(info->runtime_version, "10.0.12");
}

TEST(IpcProtocolTest, HostileRepliesAreErrors) {
  EXPECT_FALSE(DecodeReplyHeader("short").ok());
  EXPECT_FALSE(DecodeReplyHeader(std::string(20, 'x')).ok());
  std::string payload;
  base::ByteWriter w(&payload);
  w.U64(1);
  for (int i = 0; i < 16; ++i) w.U8(0);
  w.U32(0x7fffffff);  // a string longer than the reply
  EXPECT_FALSE(DecodeProcessInfo2(payload).ok());
  for (size_t cut = 0; cut < payload.size(); ++cut) {
    EXPECT_FALSE(DecodeProcessInfo2(payload.substr(0, cut)).ok());
  }
  EXPECT_FALSE(DecodeHresult("ab").ok());
}

TEST(DiagnosticsClientTest, ADeadOrZombiePidIsSaidByName) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  // Unreaped: a zombie until waitpid.
  std::string state;
  for (int i = 0; i < 1000 && state != "Z"; ++i) {
    ::usleep(1000);
    auto stat = base::ReadFileBounded(absl::StrCat("/proc/", child, "/stat"), 4096);
    if (stat.ok()) state = stat->substr(stat->rfind(')') + 2, 1);
  }
  ASSERT_EQ(state, "Z");
  absl::Status zombie = FindDiagnosticsTarget(child).status();
  EXPECT_TRUE(absl::IsNotFound(zombie));
  EXPECT_EQ(zombie.message(),
            absl::StrCat("process ", child, " has exited: it is a zombie its parent (pid ",
                         ::getpid(), ") has not reaped yet, with no .NET runtime left to ask"));
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  absl::Status gone = FindDiagnosticsTarget(child).status();
  EXPECT_TRUE(absl::IsNotFound(gone));
  EXPECT_EQ(gone.message(), absl::StrCat("no process with pid ", child));
}

TEST(DiagnosticsClientTest, ChoosesTheSocketOfThisStartOrTheNewest) {
  std::vector<std::string> names = {"dotnet-diagnostic-1-100-socket",
                                    "dotnet-diagnostic-1-300-socket",
                                    "dotnet-diagnostic-12-999-socket", "perf-1.map",
                                    "dotnet-diagnostic-1-abc-socket"};
  EXPECT_EQ(ChooseSocketName(names, 1, "100"), "dotnet-diagnostic-1-100-socket");
  EXPECT_EQ(ChooseSocketName(names, 1, "200"), "dotnet-diagnostic-1-300-socket");
  // Sockets older than the process are leftovers of a dead one with its pid.
  EXPECT_EQ(ChooseSocketName(names, 1, "555"), "");
  EXPECT_EQ(ChooseSocketName(names, 12, ""), "dotnet-diagnostic-12-999-socket");
  EXPECT_EQ(ChooseSocketName(names, 2, ""), "");
}

}  // namespace
}  // namespace profcpu::collector::dotnet
