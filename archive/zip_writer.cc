#include "archive/zip_writer.h"

#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/byte_io.h"
#include "base/errno_status.h"
#include "base/file_io.h"

namespace profcpu::archive {
namespace {

constexpr uint32_t kLocalHeaderSignature = 0x04034b50;
constexpr uint32_t kCentralHeaderSignature = 0x02014b50;
constexpr uint32_t kEndSignature = 0x06054b50;
constexpr uint32_t kZip64EndSignature = 0x06064b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint16_t kMethodDeflate = 8;
constexpr uint16_t kZipVersion = 20;       // deflate
constexpr uint16_t kZipVersionZip64 = 45;  // APPNOTE 4.4.3.2
constexpr uint16_t kUnix = 3 << 8;      // "version made by": external attributes are a mode
constexpr uint16_t kUtf8Flag = 1 << 11;
constexpr uint32_t kAllOnes32 = 0xffffffff;
// Deflate can grow incompressible data by a few bytes per 16 KiB block: below
// this size the compressed size surely fits 32 bits too.
constexpr uint64_t kZip64Threshold = 0xf0000000;

void DosTime(int64_t mtime, uint16_t* time, uint16_t* date) {
  const time_t seconds = static_cast<time_t>(mtime);
  struct tm local = {};
  if (localtime_r(&seconds, &local) == nullptr || local.tm_year < 80) {
    *time = 0;
    *date = (1 << 5) | 1;  // 1980-01-01, the first day a zip can say
    return;
  }
  *time = static_cast<uint16_t>((local.tm_hour << 11) | (local.tm_min << 5) | (local.tm_sec / 2));
  *date = static_cast<uint16_t>(((local.tm_year - 80) << 9) | ((local.tm_mon + 1) << 5) |
                                local.tm_mday);
}

bool IsAscii(absl::string_view name) {
  for (char c : name) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

absl::Status PWriteAll(int fd, absl::string_view bytes, uint64_t offset) {
  while (!bytes.empty()) {
    ssize_t n = ::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return base::ErrnoStatus(errno, "write zip header");
    bytes.remove_prefix(static_cast<size_t>(n));
    offset += static_cast<uint64_t>(n);
  }
  return absl::OkStatus();
}

struct DeflateStream {
  z_stream stream = {};
  ~DeflateStream() { deflateEnd(&stream); }
};

}  // namespace

absl::Status ZipWriter::Append(absl::string_view bytes) {
  absl::Status status = base::WriteAll(fd_, bytes, "write zip");
  if (status.ok()) offset_ += bytes.size();
  return status;
}

absl::Status ZipWriter::AddFile(absl::string_view name, int source_fd,
                                const std::string& source_path, uint64_t size, int64_t mtime) {
  if (name.empty() || name.size() > 0xffff) {
    return absl::InvalidArgumentError(absl::StrCat("cannot name a zip entry '", name, "'"));
  }
  Entry entry;
  entry.name = std::string(name);
  entry.offset = offset_;
  entry.size = size;
  entry.zip64 = force_zip64_ || size > kZip64Threshold;
  DosTime(mtime, &entry.dos_time, &entry.dos_date);

  // The local header, its CRC-32 and sizes to be filled in after the data.
  std::string header;
  base::ByteWriter w(&header);
  w.U32(kLocalHeaderSignature);
  w.U16(entry.zip64 ? kZipVersionZip64 : kZipVersion);
  w.U16(IsAscii(name) ? 0 : kUtf8Flag);
  w.U16(kMethodDeflate);
  w.U16(entry.dos_time);
  w.U16(entry.dos_date);
  w.U32(0);  // CRC-32
  w.U32(entry.zip64 ? kAllOnes32 : 0);  // compressed size
  w.U32(entry.zip64 ? kAllOnes32 : 0);  // size
  w.U16(static_cast<uint16_t>(name.size()));
  w.U16(entry.zip64 ? 20 : 0);  // extra field length
  header.append(name.data(), name.size());
  if (entry.zip64) {
    w.U16(kZip64ExtraId);
    w.U16(16);
    w.U64(0);  // size
    w.U64(0);  // compressed size
  }
  absl::Status status = Append(header);
  if (!status.ok()) return status;

  DeflateStream deflate;
  // Raw deflate (-15 window bits): zip's method 8 carries no zlib wrapper.
  if (deflateInit2(&deflate.stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    return absl::InternalError("zlib deflateInit2 failed");
  }
  auto in = std::make_unique<char[]>(256 * 1024);
  auto out = std::make_unique<char[]>(256 * 1024);
  uLong crc = crc32(0, nullptr, 0);
  uint64_t remaining = size;
  while (true) {
    size_t n = 0;
    if (remaining > 0) {
      ssize_t got = ::read(source_fd, in.get(), std::min<uint64_t>(remaining, 256 * 1024));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return base::ErrnoStatus(errno, absl::StrCat("read ", source_path));
      if (got == 0) return absl::DataLossError(absl::StrCat(source_path, " shrank while archived"));
      n = static_cast<size_t>(got);
      remaining -= n;
      crc = crc32(crc, reinterpret_cast<const Bytef*>(in.get()), static_cast<uInt>(n));
    }
    const int flush = remaining == 0 ? Z_FINISH : Z_NO_FLUSH;
    deflate.stream.next_in = reinterpret_cast<Bytef*>(in.get());
    deflate.stream.avail_in = static_cast<uInt>(n);
    int result;
    do {
      deflate.stream.next_out = reinterpret_cast<Bytef*>(out.get());
      deflate.stream.avail_out = 256 * 1024;
      result = ::deflate(&deflate.stream, flush);
      if (result == Z_STREAM_ERROR) return absl::InternalError("zlib deflate failed");
      const size_t produced = 256 * 1024 - deflate.stream.avail_out;
      status = Append(absl::string_view(out.get(), produced));
      if (!status.ok()) return status;
      entry.compressed += produced;
    } while (deflate.stream.avail_out == 0);
    if (result == Z_STREAM_END) break;
  }
  entry.crc = static_cast<uint32_t>(crc);
  if (!entry.zip64 && entry.compressed >= kAllOnes32) {
    return absl::InternalError(absl::StrCat(source_path, " grew past 4 GiB when compressed"));
  }

  std::string fields;
  base::ByteWriter f(&fields);
  f.U32(entry.crc);
  if (!entry.zip64) {
    f.U32(static_cast<uint32_t>(entry.compressed));
    f.U32(static_cast<uint32_t>(entry.size));
  }
  status = PWriteAll(fd_, fields, entry.offset + 14);
  if (status.ok() && entry.zip64) {
    std::string sizes;
    base::ByteWriter s(&sizes);
    s.U64(entry.size);
    s.U64(entry.compressed);
    status = PWriteAll(fd_, sizes, entry.offset + 30 + name.size() + 4);
  }
  if (!status.ok()) return status;
  entries_.push_back(std::move(entry));
  return absl::OkStatus();
}

absl::Status ZipWriter::Finish() {
  const uint64_t directory_offset = offset_;
  std::string directory;
  base::ByteWriter w(&directory);
  for (const Entry& entry : entries_) {
    // APPNOTE 4.5.3: the Zip64 field holds, in order, those of size,
    // compressed size and offset whose 32-bit field says 0xffffffff.
    const bool big_offset = force_zip64_ || entry.offset >= kAllOnes32;
    std::string extra;
    base::ByteWriter x(&extra);
    if (entry.zip64 || big_offset) {
      x.U16(kZip64ExtraId);
      x.U16(static_cast<uint16_t>((entry.zip64 ? 16 : 0) + (big_offset ? 8 : 0)));
      if (entry.zip64) {
        x.U64(entry.size);
        x.U64(entry.compressed);
      }
      if (big_offset) x.U64(entry.offset);
    }
    const uint16_t version = entry.zip64 || big_offset ? kZipVersionZip64 : kZipVersion;
    w.U32(kCentralHeaderSignature);
    w.U16(kUnix | version);
    w.U16(version);
    w.U16(IsAscii(entry.name) ? 0 : kUtf8Flag);
    w.U16(kMethodDeflate);
    w.U16(entry.dos_time);
    w.U16(entry.dos_date);
    w.U32(entry.crc);
    w.U32(entry.zip64 ? kAllOnes32 : static_cast<uint32_t>(entry.compressed));
    w.U32(entry.zip64 ? kAllOnes32 : static_cast<uint32_t>(entry.size));
    w.U16(static_cast<uint16_t>(entry.name.size()));
    w.U16(static_cast<uint16_t>(extra.size()));
    w.U16(0);  // comment length
    w.U16(0);  // disk number
    w.U16(0);  // internal attributes
    w.U32(0100644u << 16);  // external attributes: a regular file, rw-r--r--
    w.U32(big_offset ? kAllOnes32 : static_cast<uint32_t>(entry.offset));
    directory += entry.name;
    directory += extra;
  }
  const uint64_t directory_size = directory.size();
  const uint64_t count = entries_.size();
  const bool zip64_end = force_zip64_ || count >= 0xffff || directory_offset >= kAllOnes32 ||
                         directory_size >= kAllOnes32;
  if (zip64_end) {
    const uint64_t end64_offset = directory_offset + directory_size;
    w.U32(kZip64EndSignature);
    w.U64(44);  // the record's size after this field
    w.U16(kUnix | kZipVersionZip64);
    w.U16(kZipVersionZip64);
    w.U32(0);  // this disk
    w.U32(0);  // the directory's disk
    w.U64(count);
    w.U64(count);
    w.U64(directory_size);
    w.U64(directory_offset);
    w.U32(kZip64LocatorSignature);
    w.U32(0);  // the Zip64 end record's disk
    w.U64(end64_offset);
    w.U32(1);  // disks
  }
  w.U32(kEndSignature);
  w.U16(0);
  w.U16(0);
  w.U16(zip64_end ? 0xffff : static_cast<uint16_t>(count));
  w.U16(zip64_end ? 0xffff : static_cast<uint16_t>(count));
  w.U32(zip64_end ? kAllOnes32 : static_cast<uint32_t>(directory_size));
  w.U32(zip64_end ? kAllOnes32 : static_cast<uint32_t>(directory_offset));
  w.U16(0);  // comment length
  return Append(directory);
}

}  // namespace profcpu::archive
