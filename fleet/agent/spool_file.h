// One window waiting in the agent's spool, as a file: a fixed header, then
// the payload (the window's rows as the agent will send them).
//
//   offset size  field
//        0    8  magic "PCFSPOOL"
//        8    4  format version (1)
//       12    4  header size (48)
//       16    8  window id
//       24    8  samples in the window (what is lost if the file is)
//       32    8  payload size
//       40    4  CRC-32 of the payload (zlib's crc32)
//       44    4  CRC-32 of bytes 0..43
//       48    .  payload
// All integers little-endian. The file is outside input when read back: a disk
// can hand back a torn or damaged file after a crash, so every field is
// checked and nothing is trusted before the checksums match.
#ifndef PROFCPU_FLEET_AGENT_SPOOL_FILE_H_
#define PROFCPU_FLEET_AGENT_SPOOL_FILE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace profcpu::fleet {

inline constexpr size_t kSpoolHeaderSize = 48;
inline constexpr uint32_t kSpoolFormatVersion = 1;

struct SpoolHeader {
  uint64_t window_id = 0;
  uint64_t samples = 0;
  uint64_t payload_size = 0;
  uint32_t payload_crc = 0;
};

// The header of a window's file (kSpoolHeaderSize bytes): written before the
// payload, so a large payload is never copied.
std::string EncodeSpoolHeader(uint64_t window_id, uint64_t samples, absl::string_view payload);

// The whole file's bytes for a window: header, then payload.
std::string EncodeSpoolFile(uint64_t window_id, uint64_t samples, absl::string_view payload);

// The header alone (the first kSpoolHeaderSize bytes, or fewer: an error):
// DataLoss naming what is wrong (magic, version, header checksum).
absl::StatusOr<SpoolHeader> ParseSpoolHeader(absl::string_view bytes);

struct SpoolFileContents {
  SpoolHeader header;
  absl::string_view payload;  // points into the bytes parsed
};

// A whole file: its header, then exactly payload_size bytes whose CRC
// matches. DataLoss otherwise ("truncated: 100 of 148 bytes", ...).
absl::StatusOr<SpoolFileContents> ParseSpoolFile(absl::string_view bytes);

}  // namespace profcpu::fleet

#endif  // PROFCPU_FLEET_AGENT_SPOOL_FILE_H_
