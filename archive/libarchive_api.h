// libarchive, loaded when an archive is first read or written (dlopen through
// base/shared_library.h), not linked: it pulls in libxml2, ICU, nettle, acl,
// lz4 and more, a start-up cost every command paid while only prof.tar.gz and
// the PerfView zip use it. The functions archive.cc calls, as a table.
#ifndef PROFCPU_ARCHIVE_LIBARCHIVE_API_H_
#define PROFCPU_ARCHIVE_LIBARCHIVE_API_H_

#include <archive.h>
#include <archive_entry.h>

#include "absl/status/statusor.h"

namespace profcpu::archive {

struct LibArchive {
  const char* (*error_string)(::archive* a);
  int (*free_archive)(::archive* a);  // archive_free: a reader or a writer

  ::archive* (*write_new)();
  int (*write_add_filter_gzip)(::archive* a);
  int (*write_set_format_pax_restricted)(::archive* a);
  int (*write_set_format_zip)(::archive* a);
  int (*write_open_filename)(::archive* a, const char* path);
  int (*write_open)(::archive* a, void* client, archive_open_callback* open,
                    archive_write_callback* write, archive_close_callback* close);
  int (*write_set_bytes_in_last_block)(::archive* a, int bytes);
  int (*write_header)(::archive* a, archive_entry* entry);
  la_ssize_t (*write_data)(::archive* a, const void* data, size_t size);
  int (*write_close)(::archive* a);

  ::archive* (*read_new)();
  int (*read_support_filter_gzip)(::archive* a);
  int (*read_support_filter_none)(::archive* a);
  int (*read_support_format_tar)(::archive* a);
  int (*read_open_filename)(::archive* a, const char* path, size_t block_size);
  int (*read_next_header)(::archive* a, archive_entry** entry);
  la_ssize_t (*read_data)(::archive* a, void* buffer, size_t size);

  archive_entry* (*entry_new)();
  void (*entry_free)(archive_entry* entry);
  void (*entry_set_pathname)(archive_entry* entry, const char* name);
  void (*entry_set_size)(archive_entry* entry, la_int64_t size);
  void (*entry_set_filetype)(archive_entry* entry, unsigned int type);
  void (*entry_set_perm)(archive_entry* entry, mode_t perm);
  void (*entry_set_mtime)(archive_entry* entry, time_t seconds, long nanoseconds);
  const char* (*entry_pathname)(archive_entry* entry);
  mode_t (*entry_filetype)(archive_entry* entry);
  la_int64_t (*entry_size)(archive_entry* entry);
};

// The table, loaded once (thread-safe); an error names the Debian package
// (libarchive13) when the library is missing.
absl::StatusOr<const LibArchive*> LoadLibArchive();

}  // namespace profcpu::archive

#endif  // PROFCPU_ARCHIVE_LIBARCHIVE_API_H_
