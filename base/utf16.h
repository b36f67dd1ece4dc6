// UTF-16LE text as the .NET runtime writes it (its diagnostics IPC replies,
// NetTrace's metadata and payload strings) turned into the UTF-8 profcpu
// writes everywhere. Shared by the IPC client and the NetTrace reader, which
// depend on nothing else in common.
#ifndef PROFCPU_BASE_UTF16_H_
#define PROFCPU_BASE_UTF16_H_

#include <string>

#include "absl/strings/string_view.h"

namespace profcpu::base {

// UTF-16LE to UTF-8; unpaired surrogates become U+FFFD, so the result is
// valid UTF-8 whatever the bytes. A trailing odd byte is ignored.
std::string Utf16LeToUtf8(absl::string_view utf16);

}  // namespace profcpu::base

#endif  // PROFCPU_BASE_UTF16_H_
