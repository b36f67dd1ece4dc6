#include "archive/libarchive_api.h"

#include "base/shared_library.h"
#include "base/status_macros.h"

namespace profcpu::archive {
namespace {

absl::StatusOr<LibArchive> Load() {
  PROFCPU_ASSIGN_OR_RETURN(base::SharedLibrary lib,
                           base::SharedLibrary::Open("libarchive.so.13", "libarchive13"));
  LibArchive api;
  PROFCPU_RETURN_IF_ERROR(lib.Get("archive_error_string", &api.error_string));
  PROFCPU_RETURN_IF_ERROR(lib.Get("archive_free", &api.free_archive));

  PROFCPU_RETURN_IF_ERROR(lib.Get("archive_write_new", &api.write_new));
  PROFCPU_RETURN_IF_ERROR(lib.Get("archive_write_add_filter_gzip", &api.write_add_filter_gzip));
  PROFCPU_RETURN_IF_ERROR(
      lib.Get("archive_write_set_format_pax_restricted", &api.write_set_format_pax_restricted));
  PROFCPU_RETURN_IF_ERROR(lib.Get("archive_write_set_format_zip", &api.write_set_format_zip));
  PROFCPU_RETURN_IF_ERROR(lib.Get("archive_write_open_filename", &api.write_open_filename));
  PROFCPU_RETURN_IF_ERROR(lib.Get("archive_write_open", &api.write_open));
  PROFCPU_RETURN_IF_ERROR(
      lib.Get("archive_write_set_bytes_in_last_block", &api.write_set_bytes_in_last_block));
  PROFCPU_RETURN_IF_ERROR(lib.Get("archive_write_header", &api.write_header));
  PROFCPU_RETURN_IF_ERROR(lib.Get("archive_write_data", &api.write_data));
  PROFCPU_RETURN_IF_ERROR(lib.Get("archive_write_close", &api.write_close));

  PROFCPU_RETURN_IF_ERROR(lib.Get("archive_read_new", &api.read_new));
  PROFCPU_RETURN_IF_ERROR(
      lib.Get("archive_read_support_filter_gzip", &api.read_support_filter_gzip));
  PROFCPU_RETURN_IF_ERROR(
      lib.Get("archive_read_support_filter_none", &api.read_support_filter_none));
  PROFCPU_RETURN_IF_ERROR(lib.Get("archive_read_support_format_tar", &api.read_support_format_tar));
  PROFCPU_RETURN_IF_ERROR(lib.Get("archive_read_open_filename", &api.read_open_filename));
  PROFCPU_RETURN_IF_ERROR(lib.Get("archive_read_next_header", &api.read_next_header));
  PROFCPU_RETURN_IF_ERROR(lib.Get("archive_read_data", &api.read_data));

  PROFCPU_RETURN_IF_ERROR(lib.Get("archive_entry_new", &api.entry_new));
  PROFCPU_RETURN_IF_ERROR(lib.Get("archive_entry_free", &api.entry_free));
  PROFCPU_RETURN_IF_ERROR(lib.Get("archive_entry_set_pathname", &api.entry_set_pathname));
  PROFCPU_RETURN_IF_ERROR(lib.Get("archive_entry_set_size", &api.entry_set_size));
  PROFCPU_RETURN_IF_ERROR(lib.Get("archive_entry_set_filetype", &api.entry_set_filetype));
  PROFCPU_RETURN_IF_ERROR(lib.Get("archive_entry_set_perm", &api.entry_set_perm));
  PROFCPU_RETURN_IF_ERROR(lib.Get("archive_entry_set_mtime", &api.entry_set_mtime));
  PROFCPU_RETURN_IF_ERROR(lib.Get("archive_entry_pathname", &api.entry_pathname));
  PROFCPU_RETURN_IF_ERROR(lib.Get("archive_entry_filetype", &api.entry_filetype));
  PROFCPU_RETURN_IF_ERROR(lib.Get("archive_entry_size", &api.entry_size));
  return api;
}

}  // namespace

absl::StatusOr<const LibArchive*> LoadLibArchive() {
  static const absl::StatusOr<LibArchive> api = Load();  // once, thread-safe
  if (!api.ok()) return api.status();
  return &*api;
}

}  // namespace profcpu::archive
