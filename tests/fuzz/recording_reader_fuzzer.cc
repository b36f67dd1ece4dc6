// The recording (recording.zst) as postprocess reads it from an archive that
// may come from anywhere. The input is the decompressed record stream
// ("PCPUREC1" then records; docs/recording-format.md); the target compresses
// it, so the fuzzer explores records rather than zstd's own checks, and reads
// it four ways that must agree:
//   one frame; two frames split mid-stream (a flush boundary may fall inside a
//   record); the first frame alone (a file cut short by kill -9 or a full disk:
//   a prefix of the records, reported truncated); and the raw bytes as the file.
#include <zstd.h>

#include <string>
#include <vector>

#include "base/byte_io.h"
#include "recording/record_codec.h"
#include "recording/recording_reader.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using profcpu::fuzz::Check;
using profcpu::fuzz::MemFile;

constexpr size_t kMaxRecords = 100000;

std::string Compress(absl::string_view data) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  size_t n = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 1);
  Check(!ZSTD_isError(n), "ZSTD_compress failed");
  out.resize(n);
  return out;
}

struct ReadResult {
  bool ok = true;
  bool truncated = false;
  std::vector<std::string> records;  // each re-encoded
};

ReadResult ReadAll(absl::string_view file_bytes) {
  MemFile file(file_bytes);
  ReadResult result;
  auto reader = profcpu::recording::RecordingReader::Open(file.path());
  Check(reader.ok(), "opening a memfd recording failed");
  while (result.records.size() < kMaxRecords) {
    auto record = (*reader)->Next();
    if (!record.ok()) {
      result.ok = false;
      break;
    }
    if (!record->has_value()) break;
    result.records.emplace_back();
    profcpu::recording::EncodeRecord(**record, &result.records.back());
  }
  result.truncated = (*reader)->truncated();
  return result;
}

bool IsPrefix(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.size() > b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view stream = profcpu::fuzz::AsText(data, size);
  ReadResult whole = ReadAll(Compress(stream));
  // Records the reader returns re-encode to bytes that decode again.
  for (const std::string& bytes : whole.records) {
    profcpu::base::ByteReader prefix(bytes);
    uint32_t type = prefix.U32();
    auto again = profcpu::recording::DecodeRecord(
        type, absl::string_view(bytes).substr(profcpu::recording::kRecordPrefixSize));
    Check(again.ok(), "a record the reader returned does not decode after re-encoding");
  }

  size_t half = stream.size() / 2;
  std::string first = Compress(stream.substr(0, half));
  ReadResult split = ReadAll(first + Compress(stream.substr(half)));
  Check(split.ok == whole.ok && split.truncated == whole.truncated &&
            split.records == whole.records,
        "splitting the stream into two zstd frames changed what was read");

  if (whole.ok && half > 0) {
    ReadResult cut = ReadAll(first);
    if (cut.ok) {
      Check(IsPrefix(cut.records, whole.records),
            "a recording cut short did not read as a prefix of the whole");
    }
  }

  ReadAll(stream);  // the raw bytes as a (corrupt) compressed file
  return 0;
}
