#include "fleet/agent/window_payload.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/byte_io.h"
#include "fleet/store/row_binary.h"

namespace profcpu::fleet {
namespace {

constexpr uint32_t kMagic = 0x57464350;  // "PCFW"
constexpr uint32_t kVersion = 1;
// A window of a busy node holds tens of thousands of ids at most.
constexpr uint64_t kMaxIds = uint64_t{1} << 24;

void AppendSampleRow(const SampleRow& row, const ProcessLabels& labels, uint64_t window_id,
                     std::string* out) {
  AppendUInt32(out, row.time);
  for (absl::string_view label : labels.Values()) {
    AppendString(out, std::string_view(label.data(), label.size()));
  }
  AppendUInt64(out, row.stack_id);
  AppendUInt64(out, row.count);
  AppendUInt64(out, window_id);
}

}  // namespace

WindowPayload BuildWindowPayload(const WindowRows& rows, uint64_t window_id,
                                 const absl::flat_hash_set<uint64_t>& delivered) {
  WindowPayload payload;
  payload.window_id = window_id;
  payload.samples = rows.total;
  payload.sample_rows = rows.samples.size();
  if (!rows.labels.empty()) payload.node = rows.labels.front().node;
  for (const FrameRow& frame : rows.frames) {
    if (delivered.contains(frame.id)) continue;
    payload.frame_ids.push_back(frame.id);
    AppendUInt64(&payload.frames_body, frame.id);
    AppendString(&payload.frames_body, frame.name);
    AppendString(&payload.frames_body, frame.module);
    AppendString(&payload.frames_body, frame.build_id);
  }
  for (const StackRow& stack : rows.stacks) {
    if (delivered.contains(stack.id)) continue;
    payload.stack_ids.push_back(stack.id);
    AppendUInt64(&payload.stacks_body, stack.id);
    AppendUInt64Array(&payload.stacks_body, stack.frame_ids);
  }
  for (const SampleRow& row : rows.samples) {
    if (payload.first_second == 0 || row.time < payload.first_second) {
      payload.first_second = row.time;
    }
    payload.last_second = std::max(payload.last_second, row.time);
    AppendSampleRow(row, rows.labels[row.labels], window_id, &payload.samples_body);
  }
  return payload;
}

std::string EncodeWindowPayload(const WindowPayload& p) {
  std::string out;
  base::ByteWriter w(&out);
  w.U32(kMagic);
  w.U32(kVersion);
  w.U64(p.window_id);
  w.U32(p.first_second);
  w.U32(p.last_second);
  w.U64(p.samples);
  w.U64(p.sample_rows);
  w.String(p.node);
  for (const std::vector<uint64_t>* ids : {&p.stack_ids, &p.frame_ids}) {
    w.U64(ids->size());
    for (uint64_t id : *ids) w.U64(id);
  }
  for (const std::string* body : {&p.frames_body, &p.stacks_body, &p.samples_body}) w.String(*body);
  return out;
}

absl::StatusOr<WindowPayload> DecodeWindowPayload(std::string_view bytes) {
  base::ByteReader r(absl::string_view(bytes.data(), bytes.size()));
  WindowPayload p;
  if (r.U32() != kMagic || !r.ok()) return absl::DataLossError("not a window payload");
  if (const uint32_t version = r.U32(); version != kVersion) {
    return absl::DataLossError(absl::StrCat("window payload version ", version, " unknown"));
  }
  p.window_id = r.U64();
  p.first_second = r.U32();
  p.last_second = r.U32();
  p.samples = r.U64();
  p.sample_rows = r.U64();
  p.node = r.String();
  for (std::vector<uint64_t>* ids : {&p.stack_ids, &p.frame_ids}) {
    const uint64_t n = r.U64();
    if (!r.ok() || n > kMaxIds || n * 8 > r.remaining()) {
      return absl::DataLossError("window payload's id list cut short");
    }
    ids->reserve(n);
    for (uint64_t i = 0; i < n; ++i) ids->push_back(r.U64());
  }
  for (std::string* body : {&p.frames_body, &p.stacks_body, &p.samples_body}) *body = r.String();
  if (!r.ok() || r.remaining() != 0) return absl::DataLossError("window payload cut short or padded");
  return p;
}

}  // namespace profcpu::fleet
