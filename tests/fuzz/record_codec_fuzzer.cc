// One recording record: the first 4 bytes are its type, the rest its payload
// (docs/recording-format.md). Decoding is total (a record or an error); a
// decoded record re-encodes to a canonical form that decodes to itself.
#include <string>

#include "base/byte_io.h"
#include "recording/record_codec.h"
#include "tests/fuzz/fuzz_support.h"

using profcpu::fuzz::Check;
namespace recording = profcpu::recording;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view input = profcpu::fuzz::AsText(data, size);
  profcpu::base::ByteReader reader(input);
  uint32_t type = reader.U32();
  if (!reader.ok()) return 0;
  // Types 1..9 exist today; fold the rest onto them and one unknown type so
  // the fuzzer does not spend its time on NotFound.
  type = type % 11;
  auto record = recording::DecodeRecord(type, input.substr(4));
  if (!record.ok()) return 0;

  std::string encoded;
  recording::EncodeRecord(*record, &encoded);
  Check(encoded.size() >= recording::kRecordPrefixSize, "encoded record lacks its prefix");
  profcpu::base::ByteReader prefix(encoded);
  uint32_t encoded_type = prefix.U32();
  uint32_t payload_size = prefix.U32();
  Check(encoded_type == type, "re-encoded record changed type");
  Check(payload_size == encoded.size() - recording::kRecordPrefixSize,
        "re-encoded payload size is wrong");
  auto again = recording::DecodeRecord(encoded_type,
                                       absl::string_view(encoded).substr(recording::kRecordPrefixSize));
  Check(again.ok(), "a re-encoded record does not decode");
  std::string encoded_again;
  recording::EncodeRecord(*again, &encoded_again);
  Check(encoded_again == encoded, "decode(encode(record)) is not the same record");
  return 0;
}
