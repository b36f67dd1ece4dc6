// prof.tar.gz in and out (and zips out), with zlib alone: tar_writer.h and
// tar_reader.h frame the tar stream, parallel_gzip.h and archive_input.h
// compress and inflate it, zip_writer.h writes zips; no library is loaded, so
// a binary copied into a bare container finishes its run. Writing goes to a
// temporary name renamed into place only when complete, so a full disk never
// leaves a half-written archive posing as a good one. Entries are written in
// the order given (prof.tar.gz's order: run_archive.h). Reading treats the
// archive as hostile: only regular files and folders, names confined to the
// destination (no absolute paths, no "..", no links, devices or FIFOs),
// bounded sizes; a .tar.gz or a plain .tar, as GNU tar, Python's tarfile and
// profcpu (also before it wrote tar itself, through libarchive) write them.
#ifndef PROFCPU_ARCHIVE_ARCHIVE_H_
#define PROFCPU_ARCHIVE_ARCHIVE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace profcpu::archive {

struct ArchiveEntry {
  std::string name;         // path inside the archive, e.g. "jit/perf-42.map"
  std::string source_path;  // file on disk to copy in
};

absl::Status WriteTarGz(const std::string& archive_path, const std::vector<ArchiveEntry>& entries);

// The same in another format: a zip (for PerfView's NAME.trace.zip) or tar.gz.
enum class ArchiveFormat { kTarGz, kZip };
absl::Status WriteArchive(const std::string& archive_path, ArchiveFormat format,
                          const std::vector<ArchiveEntry>& entries);

struct ExtractLimits {
  uint64_t max_entry_bytes = 16ull << 30;
  uint64_t max_total_bytes = 64ull << 30;
  uint32_t max_entries = 100000;
};

// Entries extraction leaves out, and where it may stop reading.
struct ExtractSkip {
  // Not written (postprocess: the outputs it rebuilds anyway). They are still
  // checked like every entry read: a hostile one is refused all the same.
  std::vector<std::string> names;
  // Archives written with `names` last: once an entry named `inputs_marker`
  // has been read with none of `names` before it, the first entry in `names`
  // ends the extraction (the rest of the stream is not even decompressed).
  // An archive with a skipped entry before the marker (an older order) is
  // read whole. Empty: never stop early.
  std::string inputs_marker;
};

// Extracts regular files into `dest_dir`, without overwriting files that
// already exist there, leaving out `skip`. Returns the names extracted, as
// written: "./a//b" is "a/b". An entry cut short leaves no file behind.
absl::StatusOr<std::vector<std::string>> ExtractTarGz(const std::string& archive_path,
                                                      const std::string& dest_dir,
                                                      const ExtractLimits& limits = {},
                                                      const ExtractSkip& skip = {});

}  // namespace profcpu::archive

#endif  // PROFCPU_ARCHIVE_ARCHIVE_H_
