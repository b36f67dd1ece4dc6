// Replies from a .NET runtime's diagnostics socket (collector/dotnet/ipc_protocol.h).
// The socket is in the target's /tmp: whatever answers may be hostile. Decoding
// is total, and every string decoded from UTF-16 is valid UTF-8 (it ends up in
// metadata.json and the log).
#include "base/utf16.h"
#include "collector/dotnet/ipc_protocol.h"
#include "tests/fuzz/fuzz_support.h"

using profcpu::fuzz::Check;
namespace dotnet = profcpu::collector::dotnet;

namespace {

bool IsValidUtf8(absl::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    uint32_t cp = n == 1 ? c : c & (0x7f >> n);
    for (size_t k = 1; k < n; ++k) {
      unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      cp = cp << 6 | (cc & 0x3f);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += n;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view bytes = profcpu::fuzz::AsText(data, size);
  if (auto header = dotnet::DecodeReplyHeader(bytes); header.ok()) {
    Check(header->size >= dotnet::kIpcHeaderSize, "a reply header smaller than itself");
  }
  absl::string_view payload =
      bytes.size() > dotnet::kIpcHeaderSize ? bytes.substr(dotnet::kIpcHeaderSize) : bytes;
  (void)dotnet::DecodeHresult(payload);
  if (auto info = dotnet::DecodeProcessInfo2(payload); info.ok()) {
    for (const std::string* s : {&info->runtime_cookie, &info->command_line, &info->os,
                                 &info->architecture, &info->entry_assembly,
                                 &info->runtime_version}) {
      Check(IsValidUtf8(*s), "a decoded ProcessInfo2 string is not valid UTF-8");
    }
  }
  Check(IsValidUtf8(profcpu::base::Utf16LeToUtf8(bytes)), "Utf16LeToUtf8 produced invalid UTF-8");
  return 0;
}
