#include "symbolize/jitdump.h"

// Reading the jitdump file format (jitdump.h describes it) into a Jitdump's
// regions, names and line tables: the target writes the file, so this is
// the part that distrusts its input; jitdump.cc indexes what was kept and
// answers lookups.

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/errno_status.h"

namespace profcpu::symbolize {
namespace {

constexpr uint32_t kMagic = 0x4A695444;         // "JiTD" in the writer's byte order
constexpr uint32_t kMagicSwapped = 0x4454694A;
constexpr size_t kFileHeaderSize = 40;
constexpr size_t kRecordPrefixSize = 16;
constexpr uint64_t kMaxHeaderSize = 4096;
constexpr uint32_t kCodeLoad = 0;
constexpr uint32_t kCodeMove = 1;
constexpr uint32_t kDebugInfo = 2;
constexpr uint32_t kCodeClose = 3;
constexpr uint32_t kUnwindingInfo = 4;
constexpr size_t kCodeLoadFixed = 4 + 4 + 8 + 8 + 8 + 8;
constexpr size_t kCodeMoveFixed = 4 + 4 + 8 + 8 + 8 + 8 + 8;
constexpr size_t kDebugEntryMin = 8 + 4 + 4 + 1;
// A DEBUG_INFO record is read whole; its entries are small.
constexpr uint64_t kMaxDebugInfoBytes = uint64_t{64} << 20;

// Reads [offset, offset+n) of the input into `out`; returns the bytes read
// (fewer at the end of the input).
using ReadAt = std::function<absl::StatusOr<size_t>(uint64_t offset, size_t n, char* out)>;

}  // namespace

class Jitdump::Parser {
 public:
  // `input_size`: the bytes available; a record reaching past them was cut.
  Parser(ReadAt read, uint64_t input_size, const JitdumpLimits& limits, Jitdump* out)
      : read_(std::move(read)), input_size_(input_size), limits_(limits), out_(out) {}

  absl::Status Run() {
    char header[kFileHeaderSize];
    absl::StatusOr<size_t> n = read_(0, sizeof(header), header);
    if (!n.ok()) return n.status();
    if (*n < sizeof(header)) return absl::InvalidArgumentError("too short for a jitdump header");
    uint32_t magic;
    std::memcpy(&magic, header, 4);
    if (magic == kMagicSwapped) {
      swap_ = true;
    } else if (magic != kMagic) {
      return absl::InvalidArgumentError("not a jitdump (bad magic)");
    }
    JitdumpStats& stats = out_->stats_;
    stats.byte_swapped = swap_;
    const uint32_t version = U32(header + 4);
    const uint32_t header_size = U32(header + 8);
    out_->header_pid_ = U32(header + 20);
    const uint64_t flags = U64(header + 32);
    if (version != 1) {
      return absl::InvalidArgumentError(absl::StrCat("jitdump version ", version,
                                                     " is not supported (profcpu reads 1)"));
    }
    if (header_size < kFileHeaderSize || header_size > kMaxHeaderSize) {
      return absl::InvalidArgumentError(absl::StrCat("bad jitdump header size ", header_size));
    }
    // Bit 0 is JITDUMP_FLAGS_ARCH_TIMESTAMP; the spec makes any other bit an error.
    if ((flags & ~uint64_t{1}) != 0) {
      return absl::InvalidArgumentError(absl::StrCat("unknown jitdump header flags 0x",
                                                     absl::Hex(flags)));
    }
    stats.arch_timestamps = (flags & 1) != 0;

    uint64_t offset = header_size;
    while (true) {
      if (offset >= limits_.max_bytes) {
        Stop("the file is larger than the read limit", true);
        break;
      }
      char prefix[kRecordPrefixSize];
      n = read_(offset, sizeof(prefix), prefix);
      if (!n.ok()) return n.status();
      if (*n == 0) break;  // clean end
      if (*n < sizeof(prefix)) {
        stats.truncated = true;
        break;
      }
      const uint32_t id = U32(prefix);
      const uint32_t total = U32(prefix + 4);
      const uint64_t time = U64(prefix + 8);
      if (total < kRecordPrefixSize) {
        Stop(absl::StrCat("record ", stats.records + 1, " claims ", total, " bytes"));
        break;
      }
      const uint64_t body_at = offset + kRecordPrefixSize;
      const uint64_t body_size = total - kRecordPrefixSize;
      bool keep_going = true;
      switch (id) {
        case kCodeLoad:
          keep_going = CodeLoad(body_at, body_size, time);
          break;
        case kCodeMove:
          keep_going = CodeMove(body_at, body_size, time);
          break;
        case kDebugInfo:
          keep_going = DebugInfo(body_at, body_size);
          break;
        case kCodeClose:
          stats.closed = true;
          break;
        case kUnwindingInfo:
          keep_going = UnwindingInfo(body_at, body_size);
          break;
        default:
          ++stats.unknown_records;  // a newer record type: skipped by its size
          break;
      }
      if (!keep_going) break;
      ++stats.records;
      if (total > input_size_ || offset > input_size_ - total) {
        // Cut inside its code bytes: what was read of it is kept.
        stats.truncated = true;
        break;
      }
      if (stats.closed) break;
      offset += total;
    }
    FinishLines();
    return absl::OkStatus();
  }

 private:
  uint32_t U32(const char* p) const {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return swap_ ? __builtin_bswap32(v) : v;
  }
  uint64_t U64(const char* p) const {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return swap_ ? __builtin_bswap64(v) : v;
  }

  void Stop(std::string why, bool limit = false) {
    out_->stats_.stopped_because = std::move(why);
    out_->stats_.limit_hit = limit;
  }

  // Reads exactly `n` bytes at `offset`; false (and the parse ends as
  // truncated) if the file ends first.
  bool ReadExactly(uint64_t offset, size_t n, std::string* out) {
    out->resize(n);
    absl::StatusOr<size_t> got = read_(offset, n, out->data());
    if (!got.ok()) {
      Stop(std::string(got.status().message()));
      return false;
    }
    if (*got < n) {
      out_->stats_.truncated = true;
      return false;
    }
    return true;
  }

  bool CodeLoad(uint64_t at, uint64_t size, uint64_t time) {
    if (size < kCodeLoadFixed + 1) {
      Stop(absl::StrCat("CODE_LOAD record ", out_->stats_.records + 1, " is too short"));
      return false;
    }
    // The fixed fields and the name; the code bytes after it are never read.
    size_t want = static_cast<size_t>(
        std::min<uint64_t>(size, kCodeLoadFixed + limits_.max_name_length + 1));
    std::string body;
    body.resize(want);
    absl::StatusOr<size_t> got = read_(at, want, body.data());
    if (!got.ok()) {
      Stop(std::string(got.status().message()));
      return false;
    }
    body.resize(*got);
    if (body.size() < kCodeLoadFixed + 1) {
      out_->stats_.truncated = true;
      return false;
    }
    const uint64_t code_addr = U64(body.data() + 16);
    const uint64_t code_size = U64(body.data() + 24);
    absl::string_view rest = absl::string_view(body).substr(kCodeLoadFixed);
    size_t nul = rest.find('\0');
    if (nul == absl::string_view::npos) {
      // A record cut inside its name (truncated file), or a name over the cap.
      if (body.size() < want) {
        out_->stats_.truncated = true;
      } else {
        Stop(absl::StrCat("CODE_LOAD record ", out_->stats_.records + 1,
                          " has a name longer than ", limits_.max_name_length, " bytes"));
      }
      return false;
    }
    if (code_size > UINT64_MAX - code_addr || kCodeLoadFixed + nul + 1 > size) {
      Stop(absl::StrCat("CODE_LOAD record ", out_->stats_.records + 1, " is inconsistent"));
      return false;
    }
    ++out_->stats_.code_loads;
    if (code_size == 0) return true;
    uint32_t lines_begin = 0, lines_end = 0;
    if (pending_lines_.has_value() && pending_lines_->first == code_addr) {
      lines_begin = pending_lines_->second.first;
      lines_end = pending_lines_->second.second;
    }
    pending_lines_.reset();
    return AddRegion(code_addr, code_addr + code_size, time, rest.substr(0, nul), lines_begin,
                     lines_end);
  }

  bool AddRegion(uint64_t start, uint64_t end, uint64_t time, absl::string_view name,
                 uint32_t lines_begin, uint32_t lines_end, bool moved_in = false) {
    if (out_->regions_.size() >= limits_.max_regions ||
        out_->names_.size() + name.size() > limits_.max_name_bytes) {
      Stop("the region or name limit was reached", true);
      return false;
    }
    Region r;
    r.start = start;
    r.end = end;
    r.load_time = time;
    r.moved_in = moved_in;
    r.name_offset = static_cast<uint32_t>(out_->names_.size());
    r.name_length = static_cast<uint32_t>(name.size());
    r.lines_begin = lines_begin;
    r.lines_end = lines_end;
    out_->names_.append(name.data(), name.size());
    latest_at_[start] = static_cast<uint32_t>(out_->regions_.size());
    out_->regions_.push_back(r);
    return true;
  }

  bool CodeMove(uint64_t at, uint64_t size, uint64_t time) {
    std::string body;
    if (size < kCodeMoveFixed) {
      Stop(absl::StrCat("CODE_MOVE record ", out_->stats_.records + 1, " is too short"));
      return false;
    }
    if (!ReadExactly(at, kCodeMoveFixed, &body)) return false;
    const uint64_t old_addr = U64(body.data() + 16);
    const uint64_t new_addr = U64(body.data() + 24);
    const uint64_t code_size = U64(body.data() + 32);
    ++out_->stats_.code_moves;
    if (code_size == 0 || code_size > UINT64_MAX - new_addr) return true;
    auto it = latest_at_.find(old_addr);
    if (it == latest_at_.end()) return true;  // moving code we never saw loaded
    const uint32_t from = it->second;
    out_->regions_[from].end_time = time;
    // The moved code keeps its name and its lines, shifted to the new place.
    const Region old = out_->regions_[from];
    uint32_t lines_begin = static_cast<uint32_t>(out_->lines_.size());
    for (uint32_t i = old.lines_begin; i < old.lines_end; ++i) {
      if (out_->lines_.size() >= limits_.max_debug_entries) break;
      LineEntry e = out_->lines_[i];
      e.address = e.address - old_addr + new_addr;
      out_->lines_.push_back(e);
    }
    uint32_t lines_end = static_cast<uint32_t>(out_->lines_.size());
    latest_at_.erase(it);
    std::string name(absl::string_view(out_->names_).substr(old.name_offset, old.name_length));
    return AddRegion(new_addr, new_addr + code_size, time, name, lines_begin, lines_end,
                     /*moved_in=*/true);
  }

  bool DebugInfo(uint64_t at, uint64_t size) {
    if (size < 16 || size > kMaxDebugInfoBytes) {
      Stop(absl::StrCat("DEBUG_INFO record ", out_->stats_.records + 1, " has a bad size"));
      return false;
    }
    std::string body;
    if (!ReadExactly(at, static_cast<size_t>(size), &body)) return false;
    const uint64_t code_addr = U64(body.data());
    const uint64_t count = U64(body.data() + 8);
    if (count > (size - 16) / kDebugEntryMin) {
      Stop(absl::StrCat("DEBUG_INFO record ", out_->stats_.records + 1,
                        " claims more entries than it holds"));
      return false;
    }
    ++out_->stats_.debug_infos;
    const uint32_t begin = static_cast<uint32_t>(out_->lines_.size());
    size_t pos = 16;
    uint32_t previous_file = 0;
    for (uint64_t i = 0; i < count; ++i) {
      if (pos + kDebugEntryMin > body.size()) break;
      LineEntry e;
      e.address = U64(body.data() + pos);
      e.line = U32(body.data() + pos + 8);
      pos += 16;  // addr, line, discriminator
      size_t nul = body.find('\0', pos);
      if (nul == std::string::npos) break;
      absl::string_view file = absl::string_view(body).substr(pos, nul - pos);
      pos = nul + 1;
      // "\xff\0": the same file as the previous entry (perf's jitdump writer).
      if (file == "\xff") {
        e.file = previous_file;
      } else {
        e.file = InternFile(file);
        previous_file = e.file;
      }
      if (out_->lines_.size() >= limits_.max_debug_entries) {
        Stop("the debug entry limit was reached", true);
        return false;
      }
      out_->lines_.push_back(e);
    }
    pending_lines_ = {code_addr, {begin, static_cast<uint32_t>(out_->lines_.size())}};
    return true;
  }

  bool UnwindingInfo(uint64_t at, uint64_t size) {
    // unwinding_size, eh_frame_hdr_size, mapped_size, then the data: checked
    // for consistency, then skipped (profcpu unwinds JIT code by frame pointer).
    std::string body;
    if (size < 24 || !ReadExactly(at, 24, &body)) {
      if (size < 24) Stop("UNWINDING_INFO record is too short");
      return false;
    }
    const uint64_t unwinding_size = U64(body.data());
    const uint64_t eh_frame_hdr_size = U64(body.data() + 8);
    if (unwinding_size > size - 24 || eh_frame_hdr_size > unwinding_size) {
      Stop(absl::StrCat("UNWINDING_INFO record ", out_->stats_.records + 1, " is inconsistent"));
      return false;
    }
    ++out_->stats_.unwinding_infos;
    return true;
  }

  uint32_t InternFile(absl::string_view file) {
    auto [it, inserted] = file_ids_.try_emplace(file, static_cast<uint32_t>(out_->files_.size()));
    if (inserted) out_->files_.emplace_back(file);
    return it->second;
  }

  // Each region's lines sorted by address, for binary search.
  void FinishLines() {
    for (const Region& r : out_->regions_) {
      std::stable_sort(out_->lines_.begin() + r.lines_begin, out_->lines_.begin() + r.lines_end,
                       [](const LineEntry& a, const LineEntry& b) { return a.address < b.address; });
    }
  }

  ReadAt read_;
  const uint64_t input_size_;
  const JitdumpLimits& limits_;
  Jitdump* out_;
  bool swap_ = false;
  std::optional<std::pair<uint64_t, std::pair<uint32_t, uint32_t>>> pending_lines_;
  absl::flat_hash_map<uint64_t, uint32_t> latest_at_;  // start address -> latest region there
  absl::flat_hash_map<std::string, uint32_t> file_ids_;
};

absl::StatusOr<Jitdump> Jitdump::Read(int fd, absl::string_view what,
                                      const JitdumpLimits& limits) {
  Jitdump out;
  std::string name(what);
  struct stat st;
  if (::fstat(fd, &st) != 0) return base::ErrnoStatus(errno, absl::StrCat("stat ", what));
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(what, " is not a regular file"));
  }
  Parser parser(
      [fd, &name](uint64_t offset, size_t n, char* buffer) -> absl::StatusOr<size_t> {
        size_t done = 0;
        while (done < n) {
          ssize_t got = ::pread(fd, buffer + done, n - done, static_cast<off_t>(offset + done));
          if (got < 0) {
            if (errno == EINTR) continue;
            return base::ErrnoStatus(errno, absl::StrCat("read ", name));
          }
          if (got == 0) break;
          done += static_cast<size_t>(got);
        }
        return done;
      },
      static_cast<uint64_t>(st.st_size), limits, &out);
  absl::Status status = parser.Run();
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat(what, ": ", status.message()));
  }
  out.Index();
  return out;
}

absl::StatusOr<Jitdump> Jitdump::Parse(absl::string_view bytes, const JitdumpLimits& limits) {
  Jitdump out;
  Parser parser(
      [bytes](uint64_t offset, size_t n, char* buffer) -> absl::StatusOr<size_t> {
        if (offset >= bytes.size()) return size_t{0};
        size_t take = std::min<uint64_t>(n, bytes.size() - offset);
        std::memcpy(buffer, bytes.data() + offset, take);
        return take;
      },
      bytes.size(), limits, &out);
  absl::Status status = parser.Run();
  if (!status.ok()) return status;
  out.Index();
  return out;
}

}  // namespace profcpu::symbolize
