#include "archive/deflate_parallel.h"

#include <libdeflate.h>
#include <time.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
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

struct Piece {
  absl::string_view input;
  std::string output;  // raw deflate, joinable unless the last
  uint32_t adler = 1;
  double cpu_s = 0;
  absl::Status status;
};

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

void CompressPiece(libdeflate_compressor* compressor, bool last, Piece* piece) {
  const double start = ThreadCpuSeconds();
  const absl::string_view input = piece->input;
  piece->adler = libdeflate_adler32(1, input.data(), input.size());
  piece->output.resize(libdeflate_deflate_compress_bound(compressor, input.size()));
  const size_t size = libdeflate_deflate_compress(compressor, input.data(), input.size(),
                                                  piece->output.data(), piece->output.size());
  if (size == 0) {
    piece->status = absl::InternalError("libdeflate could not compress a piece");
  } else {
    piece->output.resize(size);
    if (!last) piece->status = MakeJoinable(input.size(), &piece->output);
    piece->output.shrink_to_fit();  // it waits for the others: hold what it needs
  }
  piece->cpu_s = ThreadCpuSeconds() - start;
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

absl::StatusOr<std::vector<std::string>> DeflateZlibInPieces(absl::string_view data,
                                                             size_t threads, DeflateWork* work,
                                                             size_t piece_bytes) {
  const auto start = std::chrono::steady_clock::now();
  piece_bytes = std::max<size_t>(piece_bytes, 1);
  std::vector<Piece> pieces(std::max<size_t>(1, (data.size() + piece_bytes - 1) / piece_bytes));
  for (size_t i = 0; i < pieces.size(); ++i) pieces[i].input = data.substr(i * piece_bytes, piece_bytes);
  std::vector<std::string> parts;
  size_t workers = 1;
  bool joined = false;
  if (pieces.size() > 1) {
    workers = std::clamp<size_t>(threads, 1, pieces.size());
    std::atomic<size_t> next{0};
    auto work_loop = [&pieces, &next] {
      Compressor compressor(libdeflate_alloc_compressor(kLevel));
      for (size_t i; (i = next.fetch_add(1)) < pieces.size();) {
        if (!compressor) {
          pieces[i].status = absl::ResourceExhaustedError("libdeflate could not allocate");
          continue;
        }
        CompressPiece(compressor.get(), i + 1 == pieces.size(), &pieces[i]);
      }
    };
    std::vector<std::thread> helpers;
    for (size_t i = 1; i < workers; ++i) helpers.emplace_back(work_loop);
    work_loop();  // this thread is one of the workers
    for (std::thread& helper : helpers) helper.join();
    joined = true;
    for (const Piece& piece : pieces) joined = joined && piece.status.ok();
  }
  if (joined) {
    parts.reserve(pieces.size() + 2);
    parts.emplace_back(kZlibHeader, sizeof(kZlibHeader));
    uint32_t adler = pieces[0].adler;
    for (size_t i = 0; i < pieces.size(); ++i) {
      parts.push_back(std::move(pieces[i].output));
      if (i > 0) {
        adler = adler32_combine(adler, pieces[i].adler, static_cast<z_off_t>(pieces[i].input.size()));
      }
    }
    std::string trailer;
    for (int shift = 24; shift >= 0; shift -= 8) trailer.push_back(static_cast<char>(adler >> shift));
    parts.push_back(std::move(trailer));
  } else {
    // One piece (nothing to join: libdeflate's own zlib stream), or a piece
    // that could not be joined (never expected): the whole data in one
    // stream on this thread.
    for (Piece& piece : pieces) std::string().swap(piece.output);
    const double cpu_start = ThreadCpuSeconds();
    absl::StatusOr<std::string> whole = DeflateWhole(data);
    if (!whole.ok()) return whole.status();
    parts.push_back(std::move(*whole));
    if (pieces.size() == 1) pieces[0].cpu_s = ThreadCpuSeconds() - cpu_start;
  }
  if (work != nullptr) {
    work->tasks = pieces.size();
    work->threads = workers;
    work->longest_task_s = work->task_cpu_s = 0;
    for (const Piece& piece : pieces) {
      work->longest_task_s = std::max(work->longest_task_s, piece.cpu_s);
      work->task_cpu_s += piece.cpu_s;
    }
    work->wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return parts;
}

}  // namespace profcpu::archive
