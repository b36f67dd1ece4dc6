// The contents of a NetTrace stream's blocks, once the reader (reader.h) has
// framed one and holds its bytes: the header of an event or metadata block,
// its event blobs (either header encoding), the metadata records those blobs
// carry in a metadata block, the stacks of a stack block (which the reader
// keeps by id, stack_cache.h) and the sequence-point block, which profcpu
// checks and counts. Every function reads only inside the block it is
// given; errors name the stream offset.
#ifndef PROFCPU_NETTRACE_BLOCKS_H_
#define PROFCPU_NETTRACE_BLOCKS_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nettrace/event.h"

namespace profcpu::nettrace {

// An event or metadata block's header.
struct EventBlockHeader {
  size_t size = 0;  // where the first blob starts
  bool compressed = false;
};
// `block` is the block's bytes, its first at stream offset `block_offset`;
// `name` is the block's type, for errors.
absl::StatusOr<EventBlockHeader> ParseEventBlockHeader(absl::string_view block,
                                                       uint64_t block_offset,
                                                       absl::string_view name);

// The blobs of one event or metadata block. A compressed blob's header
// fields are deltas from, or repeats of, the blob before it in the same
// block, so the decoder keeps that blob's fields.
class EventBlobDecoder {
 public:
  // A new block: nothing carries over from the one before.
  void StartBlock(bool compressed);
  // Reads the blob at `*pos` of `block` into `event` and `metadata_id` and
  // advances `*pos` past it (and its padding); `*pos` is left as it was on
  // an error. event->payload points into `block`.
  absl::Status Read(absl::string_view block, uint64_t block_offset, size_t* pos,
                    NettraceEvent* event, uint32_t* metadata_id);

 private:
  bool compressed_ = false;
  NettraceEvent previous_;
  uint32_t previous_payload_size_ = 0;
  uint32_t previous_metadata_id_ = 0;
};

// Writes event blobs in the compressed encoding, each relative to the one
// written before it in the same block, so EventBlobDecoder reads them back
// field for field (the runtime's ep-block.c does the same): what a filter
// needs to rewrite a block without some of its events.
class EventBlobEncoder {
 public:
  // A new block: nothing carries over.
  void StartBlock();
  void Write(const NettraceEvent& event, uint32_t metadata_id, std::string* out);

 private:
  NettraceEvent previous_;
  uint32_t previous_payload_size_ = 0;
  uint32_t previous_metadata_id_ = 0;
};

// The record a metadata block's blob carries in its payload (the first byte
// at stream offset `payload_offset`). DataLoss for a record with id 0.
absl::Status ParseMetadataRecord(absl::string_view payload, uint64_t payload_offset,
                                 NettraceEventMetadata* metadata);

// A StackBlock: its stacks, each with its id (the block's first id, plus one
// for each stack before it in the block) and its bytes, `pointer_size`-byte
// addresses, the leaf first; `stack` is a view of `block`. The block is
// checked whole before `stack` is called, so an error leaves nothing half
// delivered: DataLoss for a count or size that does not fit, or a stack that
// is not a whole number of addresses. Returns how many stacks it holds.
absl::StatusOr<uint32_t> ParseStackBlock(
    absl::string_view block, uint64_t block_offset, int32_t pointer_size,
    absl::FunctionRef<void(uint64_t id, absl::string_view addresses)> stack);

// A sequence-point block (SPBlock): checked to be well-formed.
absl::Status ParseSequencePointBlock(absl::string_view block, uint64_t block_offset);

}  // namespace profcpu::nettrace

#endif  // PROFCPU_NETTRACE_BLOCKS_H_
