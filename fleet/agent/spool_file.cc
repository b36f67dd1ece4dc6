#include "fleet/agent/spool_file.h"

#include <zlib.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/byte_io.h"

namespace profcpu::fleet {
namespace {

constexpr absl::string_view kMagic = "PCFSPOOL";
constexpr size_t kHeaderCrcOffset = 44;

uint32_t Crc32(absl::string_view bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths: feed large payloads in pieces.
  while (!bytes.empty()) {
    const size_t piece = std::min<size_t>(bytes.size(), 1u << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(piece));
    bytes.remove_prefix(piece);
  }
  return static_cast<uint32_t>(crc);
}

}  // namespace

std::string EncodeSpoolHeader(uint64_t window_id, uint64_t samples, absl::string_view payload) {
  std::string out;
  out.reserve(kSpoolHeaderSize);
  out.append(kMagic.data(), kMagic.size());
  base::ByteWriter writer(&out);
  writer.U32(kSpoolFormatVersion);
  writer.U32(kSpoolHeaderSize);
  writer.U64(window_id);
  writer.U64(samples);
  writer.U64(payload.size());
  writer.U32(Crc32(payload));
  writer.U32(Crc32(absl::string_view(out).substr(0, kHeaderCrcOffset)));
  return out;
}

std::string EncodeSpoolFile(uint64_t window_id, uint64_t samples, absl::string_view payload) {
  std::string out = EncodeSpoolHeader(window_id, samples, payload);
  out.append(payload.data(), payload.size());
  return out;
}

absl::StatusOr<SpoolHeader> ParseSpoolHeader(absl::string_view bytes) {
  if (bytes.size() < kSpoolHeaderSize) {
    return absl::DataLossError(absl::StrCat("truncated header: ", bytes.size(), " of ",
                                            kSpoolHeaderSize, " bytes"));
  }
  if (bytes.substr(0, kMagic.size()) != kMagic) {
    return absl::DataLossError("not a spool file (bad magic)");
  }
  base::ByteReader reader(bytes.substr(kMagic.size(), kSpoolHeaderSize - kMagic.size()));
  const uint32_t version = reader.U32();
  const uint32_t header_size = reader.U32();
  SpoolHeader header;
  header.window_id = reader.U64();
  header.samples = reader.U64();
  header.payload_size = reader.U64();
  header.payload_crc = reader.U32();
  const uint32_t header_crc = reader.U32();
  if (!reader.ok()) return absl::DataLossError("truncated header");
  if (header_crc != Crc32(bytes.substr(0, kHeaderCrcOffset))) {
    return absl::DataLossError("header checksum mismatch");
  }
  // Checked after the checksum: a matching checksum with another version is
  // a file of a later agent, not damage.
  if (version != kSpoolFormatVersion || header_size != kSpoolHeaderSize) {
    return absl::DataLossError(absl::StrCat("unknown spool format version ", version,
                                            " (header of ", header_size, " bytes)"));
  }
  return header;
}

absl::StatusOr<SpoolFileContents> ParseSpoolFile(absl::string_view bytes) {
  absl::StatusOr<SpoolHeader> header = ParseSpoolHeader(bytes);
  if (!header.ok()) return header.status();
  const uint64_t body = bytes.size() - kSpoolHeaderSize;
  if (body < header->payload_size) {
    return absl::DataLossError(absl::StrCat("truncated: ", bytes.size(), " of ",
                                            kSpoolHeaderSize + header->payload_size, " bytes"));
  }
  if (body > header->payload_size) {
    return absl::DataLossError(absl::StrCat(body - header->payload_size,
                                            " bytes after the payload"));
  }
  absl::string_view payload = bytes.substr(kSpoolHeaderSize);
  if (Crc32(payload) != header->payload_crc) {
    return absl::DataLossError("payload checksum mismatch");
  }
  return SpoolFileContents{*header, payload};
}

}  // namespace profcpu::fleet
