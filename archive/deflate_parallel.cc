#include "archive/deflate_parallel.h"

#include <libdeflate.h>
#include <time.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace profcpu::archive {
namespace {

constexpr int kLevel = 8;
// CMF (deflate, 32 KiB window) and FLG (FLEVEL 3, as libdeflate writes for
// levels above 6, with the check bits making CMF*256+FLG a multiple of 31).
constexpr char kZlibHeader[] = {0x78, static_cast<char>(0xda)};
// An empty stored block's length and its complement, after its 3 header bits
// (not final, type 00) and the padding to a byte: zlib's sync flush marker.
constexpr char kStoredEmpty[] = {0, 0, static_cast<char>(0xff), static_cast<char>(0xff)};

double ThreadCpuSeconds() {
  timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

struct CompressorFree {
  void operator()(libdeflate_compressor* compressor) const {
    libdeflate_free_compressor(compressor);
  }
};
using Compressor = std::unique_ptr<libdeflate_compressor, CompressorFree>;

// Bits from a raw deflate stream's start to its final block's header, and
// to its end (past the final block's end code).
struct FinalBlock {
  uint64_t header_bit = 0;
  uint64_t end_bit = 0;
};

// libdeflate does not say where its final block begins: zlib's inflate,
// stopping at each block boundary (Z_BLOCK), finds it, and checks the
// piece inflates back to its size on the way.
absl::StatusOr<FinalBlock> FindFinalBlock(absl::string_view raw, size_t inflated_bytes) {
  z_stream stream = {};
  if (inflateInit2(&stream, -15) != Z_OK) return absl::InternalError("zlib inflateInit2 failed");
  std::string scratch(std::max<size_t>(inflated_bytes, 1), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  stream.avail_in = static_cast<uInt>(raw.size());
  stream.next_out = reinterpret_cast<Bytef*>(scratch.data());
  stream.avail_out = static_cast<uInt>(scratch.size());
  FinalBlock found;
  int result;
  // data_type: the unused bits of the last byte read (& 7); 128 when
  // stopped after a block's end code; 64 when that block was the final one
  // (the stream ends there: the next call only skips the padding).
  while ((result = inflate(&stream, Z_BLOCK)) == Z_OK) {
    if (stream.data_type & 128) {
      const uint64_t bit = stream.total_in * 8 - (stream.data_type & 7);
      (stream.data_type & 64 ? found.end_bit : found.header_bit) = bit;
    }
  }
  const bool whole = result == Z_STREAM_END && stream.total_in == raw.size() &&
                     stream.total_out == inflated_bytes;
  inflateEnd(&stream);
  if (!whole || found.end_bit <= found.header_bit || found.end_bit + 8 <= raw.size() * 8 ||
      found.end_bit > raw.size() * 8 ||
      ((static_cast<uint8_t>(raw[found.header_bit / 8]) >> (found.header_bit % 8)) & 1) == 0) {
    return absl::InternalError("a deflated piece's final block was not found");
  }
  return found;
}

// Makes a raw deflate stream's final block not final and ends it on a byte
// with an empty stored block, so another stream can follow it.
absl::Status MakeJoinable(size_t inflated_bytes, std::string* raw) {
  absl::StatusOr<FinalBlock> final_block = FindFinalBlock(*raw, inflated_bytes);
  if (!final_block.ok()) return final_block.status();
  (*raw)[final_block->header_bit / 8] &= static_cast<char>(~(1u << (final_block->header_bit % 8)));
  const unsigned used = final_block->end_bit % 8;  // bits used in the last byte; 0: all 8
  if (used != 0) raw->back() &= static_cast<char>((1u << used) - 1);  // padding: 0 bits
  // The stored block's 3 header bits (all 0) go in the padding if it has room.
  if (used == 0 || used > 5) raw->push_back('\0');
  raw->append(kStoredEmpty, sizeof(kStoredEmpty));
  return absl::OkStatus();
}

// A piece to raw deflate (made joinable unless the last), with its Adler-32.
absl::Status CompressPiece(libdeflate_compressor* compressor, absl::string_view input, bool last,
                           std::string* output, uint32_t* adler) {
  *adler = libdeflate_adler32(1, input.data(), input.size());
  output->resize(libdeflate_deflate_compress_bound(compressor, input.size()));
  const size_t size = libdeflate_deflate_compress(compressor, input.data(), input.size(),
                                                  output->data(), output->size());
  if (size == 0) return absl::InternalError("libdeflate could not compress a piece");
  output->resize(size);
  if (!last) {
    absl::Status joinable = MakeJoinable(input.size(), output);
    if (!joinable.ok()) return joinable;
  }
  output->shrink_to_fit();  // it waits for the others: hold what it needs
  return absl::OkStatus();
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

absl::StatusOr<std::string> DeflateWhole(absl::string_view data) {
  Compressor compressor(libdeflate_alloc_compressor(kLevel));
  if (!compressor) return absl::ResourceExhaustedError("libdeflate could not allocate");
  std::string out(libdeflate_zlib_compress_bound(compressor.get(), data.size()), '\0');
  const size_t size = libdeflate_zlib_compress(compressor.get(), data.data(), data.size(),
                                               out.data(), out.size());
  if (size == 0) return absl::InternalError("libdeflate could not compress");
  out.resize(size);
  return out;
}

}  // namespace

ZlibPieceStream::ZlibPieceStream(size_t threads, size_t piece_bytes)
    : threads_(std::max<size_t>(threads, 1)), piece_bytes_(std::max<size_t>(piece_bytes, 1)) {}

ZlibPieceStream::~ZlibPieceStream() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
  }
  changed_.notify_all();
  for (std::thread& helper : helpers_) helper.join();
}

bool ZlibPieceStream::CompressNext(std::unique_lock<std::mutex>& lock) {
  if (next_ >= pieces_.size()) return false;
  Piece& piece = pieces_[next_++];
  lock.unlock();
  // A compressor per piece (its allocation is small beside compressing
  // 2 MiB), none held by an idle helper.
  const double start = ThreadCpuSeconds();
  Compressor compressor(libdeflate_alloc_compressor(kLevel));
  piece.status = compressor ? CompressPiece(compressor.get(), piece.input, piece.last,
                                            &piece.output, &piece.adler)
                            : absl::ResourceExhaustedError("libdeflate could not allocate");
  std::string().swap(piece.input);
  piece.cpu_s = ThreadCpuSeconds() - start;
  lock.lock();
  ++done_;
  changed_.notify_all();
  return true;
}

void ZlibPieceStream::HelperLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [this] { return closing_ || next_ < pieces_.size(); });
    if (!CompressNext(lock) && closing_) return;
  }
}

void ZlibPieceStream::Add(std::string piece) {
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  Piece& added = pieces_.emplace_back();
  added.input_bytes = piece.size();
  added.input = std::move(piece);
  // A helper more for each piece until there are threads_ - 1 (a run's
  // page has tens of pieces: none is started for a small page).
  if (helpers_.size() + 1 < threads_) helpers_.emplace_back([this] { HelperLoop(); });
  changed_.notify_one();
  // Pieces piling up (the helpers are behind, or there are none): the
  // caller compresses them, so that the raw pieces held stay few.
  const size_t backlog = helpers_.empty() ? 0 : 2;
  bool helped = false;
  while (pieces_.size() - next_ > backlog) helped |= CompressNext(lock);
  if (helped) caller_s_ += SecondsSince(start);
}

absl::StatusOr<std::vector<std::string>> ZlibPieceStream::Finish(std::string last,
                                                                 DeflateWork* work) {
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  Piece& added = pieces_.emplace_back();
  added.input_bytes = last.size();
  added.input = std::move(last);
  added.last = true;
  changed_.notify_one();
  while (CompressNext(lock)) {
  }
  changed_.wait(lock, [this] { return done_ == pieces_.size(); });
  lock.unlock();
  absl::Status status;
  for (const Piece& piece : pieces_) status.Update(piece.status);
  if (!status.ok()) return status;
  std::vector<std::string> parts;
  parts.reserve(pieces_.size() + 2);
  parts.emplace_back(kZlibHeader, sizeof(kZlibHeader));
  uint32_t adler = pieces_[0].adler;
  for (size_t i = 0; i < pieces_.size(); ++i) {
    parts.push_back(std::move(pieces_[i].output));
    if (i > 0) {
      adler = adler32_combine(adler, pieces_[i].adler, static_cast<z_off_t>(pieces_[i].input_bytes));
    }
  }
  std::string trailer;
  for (int shift = 24; shift >= 0; shift -= 8) trailer.push_back(static_cast<char>(adler >> shift));
  parts.push_back(std::move(trailer));
  caller_s_ += SecondsSince(start);
  if (work != nullptr) {
    work->tasks = pieces_.size();
    work->threads = helpers_.size() + 1;
    work->longest_task_s = work->task_cpu_s = 0;
    for (const Piece& piece : pieces_) {
      work->longest_task_s = std::max(work->longest_task_s, piece.cpu_s);
      work->task_cpu_s += piece.cpu_s;
    }
    work->wall_s = caller_s_;
  }
  return parts;
}

absl::StatusOr<std::vector<std::string>> DeflateZlibInPieces(absl::string_view data,
                                                             size_t threads, DeflateWork* work,
                                                             size_t piece_bytes) {
  piece_bytes = std::max<size_t>(piece_bytes, 1);
  if (data.size() > piece_bytes) {
    ZlibPieceStream stream(threads, piece_bytes);
    size_t at = 0;
    for (; data.size() - at > piece_bytes; at += piece_bytes) {
      stream.Add(std::string(data.substr(at, piece_bytes)));
    }
    return stream.Finish(std::string(data.substr(at)), work);
  }
  // One piece: nothing to join, libdeflate's own zlib stream.
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = ThreadCpuSeconds();
  absl::StatusOr<std::string> whole = DeflateWhole(data);
  if (!whole.ok()) return whole.status();
  if (work != nullptr) {
    work->tasks = work->threads = 1;
    work->longest_task_s = work->task_cpu_s = ThreadCpuSeconds() - cpu_start;
    work->wall_s = SecondsSince(start);
  }
  std::vector<std::string> parts;
  parts.push_back(std::move(*whole));
  return parts;
}

}  // namespace profcpu::archive
