#include "collector/dotnet/runtime_commands.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/byte_io.h"

namespace profcpu::collector::dotnet {
namespace {

// An OK reply carries HRESULT 0 (or nothing); an error reply an HRESULT.
absl::Status CheckReply(const DiagnosticsTarget& target, const Reply& reply,
                        absl::string_view command) {
  if (reply.header.command_set != kServerCommandSet) {
    return absl::DataLossError(absl::StrCat("unexpected reply to ", command, " from process ",
                                            target.pid));
  }
  if (reply.header.command_id == kServerOk) return absl::OkStatus();
  auto hresult = DecodeHresult(reply.payload);
  if (hresult.ok() && *hresult == kHresultUnknownCommand) {
    return absl::UnimplementedError(absl::StrCat(
        "process ", target.pid, " runs a .NET runtime older than 8, which cannot ", command,
        " at run time: restart it with DOTNET_PerfMapEnabled=1 in its environment"));
  }
  return absl::InternalError(absl::StrFormat("process %d refused %s (HRESULT 0x%08x)", target.pid,
                                             command, hresult.ok() ? *hresult : 0));
}

}  // namespace

absl::StatusOr<ProcessInfo2> QueryProcessInfo(const DiagnosticsTarget& target) {
  auto reply = SendCommand(target, kProcessCommandSet,
                           static_cast<uint8_t>(ProcessCommand::kProcessInfo2), "");
  if (!reply.ok()) return reply.status();
  if (reply->header.command_id != kServerOk) {
    if (absl::Status s = CheckReply(target, *reply, "describe itself"); !s.ok()) return s;
  }
  return DecodeProcessInfo2(reply->payload);
}

absl::Status EnablePerfMap(const DiagnosticsTarget& target, PerfMapType type) {
  std::string payload;
  base::ByteWriter(&payload).U32(static_cast<uint32_t>(type));
  auto reply = SendCommand(target, kProcessCommandSet,
                           static_cast<uint8_t>(ProcessCommand::kEnablePerfMap), payload);
  if (!reply.ok()) return reply.status();
  return CheckReply(target, *reply, "turn perf maps on");
}

absl::Status DisablePerfMap(const DiagnosticsTarget& target) {
  auto reply = SendCommand(target, kProcessCommandSet,
                           static_cast<uint8_t>(ProcessCommand::kDisablePerfMap), "");
  if (!reply.ok()) return reply.status();
  return CheckReply(target, *reply, "turn perf maps off");
}

absl::StatusOr<PerfMapType> ParsePerfMapType(absl::string_view name) {
  if (name == "all") return PerfMapType::kAll;
  if (name == "jitdump") return PerfMapType::kJitDump;
  if (name == "perfmap") return PerfMapType::kPerfMap;
  return absl::InvalidArgumentError(
      absl::StrCat("perf map type must be all, jitdump or perfmap, got '", name, "'"));
}

}  // namespace profcpu::collector::dotnet
