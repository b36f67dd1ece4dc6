// One kernel perf record as the ring buffer hands it over (struct
// perf_event_header then the body; linux/perf_event.h). Records come from our
// own events, but a kernel bug or a future layout must not crash the
// collector: Parse returns a record, nullopt, or counts the record malformed.
#include "base/byte_io.h"
#include "collector/perf/perf_record_parser.h"
#include "recording/record_codec.h"
#include "tests/fuzz/fuzz_support.h"

using profcpu::fuzz::Check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view bytes = profcpu::fuzz::AsText(data, size);
  for (int max_stack : {127, 1}) {
    profcpu::collector::PerfRecordParser parser(max_stack);
    auto record = parser.Parse(bytes);
    if (!record.has_value()) continue;
    // Whatever it yields must be writable to the recording and read back.
    std::string encoded;
    profcpu::recording::EncodeRecord(*record, &encoded);
    profcpu::base::ByteReader prefix(encoded);
    uint32_t type = prefix.U32();
    auto decoded = profcpu::recording::DecodeRecord(
        type, absl::string_view(encoded).substr(profcpu::recording::kRecordPrefixSize));
    Check(decoded.ok(), "a parsed perf record does not survive the recording format");
  }
  return 0;
}
