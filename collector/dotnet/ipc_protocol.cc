#include "collector/dotnet/ipc_protocol.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/byte_io.h"
#include "base/utf16.h"

namespace profcpu::collector::dotnet {
namespace {

constexpr char kMagic[14] = {'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', '\0'};
// No reply profcpu asks for comes near this; a larger string is corrupt.
constexpr uint32_t kMaxStringUnits = 32 * 1024;

// u32 count of UTF-16 units (including the terminating NUL), then the units.
bool ReadString(base::ByteReader& r, std::string* out) {
  uint32_t units = r.U32();
  if (!r.ok() || units > kMaxStringUnits || units * 2ull > r.remaining()) return false;
  std::string raw;
  for (uint32_t i = 0; i < units; ++i) {
    uint16_t unit = r.U16();
    raw.push_back(static_cast<char>(unit & 0xFF));
    raw.push_back(static_cast<char>(unit >> 8));
  }
  *out = base::Utf16LeToUtf8(raw);
  while (!out->empty() && out->back() == '\0') out->pop_back();
  return r.ok();
}

}  // namespace

std::string EncodeRequest(uint8_t command_set, uint8_t command_id, absl::string_view payload) {
  std::string out(kMagic, sizeof(kMagic));
  base::ByteWriter w(&out);
  w.U16(static_cast<uint16_t>(kIpcHeaderSize + payload.size()));
  w.U8(command_set);
  w.U8(command_id);
  w.U16(0);
  out.append(payload.data(), payload.size());
  return out;
}

absl::StatusOr<ReplyHeader> DecodeReplyHeader(absl::string_view bytes) {
  if (bytes.size() < kIpcHeaderSize || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return absl::DataLossError("not a .NET diagnostics IPC reply (bad magic)");
  }
  base::ByteReader r(bytes.substr(sizeof(kMagic)));
  ReplyHeader h;
  h.size = r.U16();
  h.command_set = r.U8();
  h.command_id = r.U8();
  if (h.size < kIpcHeaderSize) {
    return absl::DataLossError(absl::StrCat("diagnostics reply claims ", h.size, " bytes"));
  }
  return h;
}

absl::StatusOr<ProcessInfo2> DecodeProcessInfo2(absl::string_view payload) {
  base::ByteReader r(payload);
  ProcessInfo2 info;
  info.pid = r.U64();
  for (int i = 0; i < 16; ++i) absl::StrAppendFormat(&info.runtime_cookie, "%02x", r.U8());
  if (!ReadString(r, &info.command_line) || !ReadString(r, &info.os) ||
      !ReadString(r, &info.architecture) || !ReadString(r, &info.entry_assembly) ||
      !ReadString(r, &info.runtime_version)) {
    return absl::DataLossError("malformed ProcessInfo2 reply");
  }
  return info;
}

absl::StatusOr<uint32_t> DecodeHresult(absl::string_view payload) {
  base::ByteReader r(payload);
  uint32_t hresult = r.U32();
  if (!r.ok()) return absl::DataLossError("diagnostics reply has no status code");
  return hresult;
}

}  // namespace profcpu::collector::dotnet
