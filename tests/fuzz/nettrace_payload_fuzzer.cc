// The runtime events' payload decoders (nettrace/runtime_events.h), fed a
// payload directly: the payload is the profiled process's, and the reader
// hands any bytes an event claims to any decoder its id names. Every decoder
// takes every payload at every version and pointer size, reads only inside
// it, fails only as DataLoss (or InvalidArgument for a version with no
// payload), and turns no string into more UTF-8 than its UTF-16 can hold.
//
// Input: one byte of header (bits 0-2 the version, bit 3 a 4-byte pointer
// size instead of 8), then the payload.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nettrace/runtime_events.h"
#include "tests/fuzz/fuzz_support.h"

using profcpu::fuzz::Check;
namespace nettrace = profcpu::nettrace;

namespace {

// UTF-16 holds at most 3 bytes of UTF-8 per 2-byte unit (a surrogate pair:
// 4 per 4; an unpaired one becomes U+FFFD, 3 bytes).
void CheckStringsFit(absl::string_view payload, size_t string_bytes) {
  Check(string_bytes <= payload.size() / 2 * 3, "decoded strings larger than their payload");
}

template <typename T>
bool Decoded(const absl::StatusOr<T>& result) {
  if (result.ok()) return true;
  const absl::StatusCode code = result.status().code();
  Check(code == absl::StatusCode::kDataLoss || code == absl::StatusCode::kInvalidArgument,
        "a payload decoder failed with an unexpected status");
  Check(!result.status().message().empty(), "a payload decoder failed without a message");
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint32_t v = data[0] & 7;
  const int32_t pointer_size = (data[0] & 8) ? 4 : 8;
  absl::string_view payload = profcpu::fuzz::AsText(data + 1, size - 1);

  Decoded(nettrace::DecodeGcStart(payload, v));
  Decoded(nettrace::DecodeGcEnd(payload, v));
  Decoded(nettrace::DecodeGcSuspendEeBegin(payload, v));
  Decoded(nettrace::DecodeGcHeapStats(payload, v));
  Decoded(nettrace::DecodeContentionStart(payload, v, pointer_size));
  Decoded(nettrace::DecodeContentionStop(payload, v));
  Decoded(nettrace::DecodeThreadPoolWorkerThread(payload, v));
  Decoded(nettrace::DecodeThreadPoolAdjustment(payload, v));
  if (auto tick = nettrace::DecodeGcAllocationTick(payload, v, pointer_size); Decoded(tick)) {
    CheckStringsFit(payload, tick->type_name.size());
  }
  if (auto thrown = nettrace::DecodeExceptionThrown(payload, v, pointer_size); Decoded(thrown)) {
    CheckStringsFit(payload, thrown->type.size() + thrown->message.size());
  }
  for (bool verbose : {true, false}) {
    auto method = verbose ? nettrace::DecodeMethodLoadVerbose(payload, v)
                          : nettrace::DecodeMethodJittingStarted(payload, v);
    if (Decoded(method)) {
      CheckStringsFit(payload, method->method_namespace.size() + method->name.size() +
                                   method->signature.size());
    }
  }
  if (auto module = nettrace::DecodeModuleLoad(payload, v); Decoded(module)) {
    CheckStringsFit(payload, module->il_path.size() + module->native_path.size());
  }
  return 0;
}
