"""Writes written_by_libarchive.tar.gz: a prof.tar.gz as profcpu wrote it
before it framed tar itself, through libarchive's "pax restricted" format
with the calls archive.cc made then (ustar headers, a pax header only for a
name ustar cannot hold). Kept so the reader goes on reading archives users
already have. Run once with libarchive13 installed:
    python3 make_libarchive_fixture.py"""

import ctypes
import os

lib = ctypes.CDLL("libarchive.so.13")
lib.archive_write_new.restype = ctypes.c_void_p
lib.archive_entry_new.restype = ctypes.c_void_p
for name in ["archive_write_add_filter_gzip", "archive_write_set_format_pax_restricted",
             "archive_write_close", "archive_write_free"]:
    getattr(lib, name).argtypes = [ctypes.c_void_p]
lib.archive_write_set_bytes_in_last_block.argtypes = [ctypes.c_void_p, ctypes.c_int]
lib.archive_write_open_filename.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
lib.archive_write_header.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
lib.archive_write_data.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
lib.archive_entry_set_pathname.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
lib.archive_entry_set_size.argtypes = [ctypes.c_void_p, ctypes.c_int64]
lib.archive_entry_set_filetype.argtypes = [ctypes.c_void_p, ctypes.c_uint]
lib.archive_entry_set_perm.argtypes = [ctypes.c_void_p, ctypes.c_uint]
lib.archive_entry_set_mtime.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_long]
lib.archive_entry_free.argtypes = [ctypes.c_void_p]

ENTRIES = [
    ("recording.zst", b"recording bytes\n"),
    ("metadata.json", b'{"target": "fixture"}\n'),
    ("jit/perf-42.map", b"7f0000001000 40 App::Run\n"),
    ("dotnet/" + "n" * 120 + ".nettrace", b"a name past ustar's 100 bytes\n"),
    ("flamegraph.svg", b"<svg/>\n"),
    ("perf_script.out", b"x" * 70000),
]

a = lib.archive_write_new()
lib.archive_write_add_filter_gzip(a)
lib.archive_write_set_format_pax_restricted(a)
lib.archive_write_set_bytes_in_last_block(a, 1)
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "written_by_libarchive.tar.gz")
lib.archive_write_open_filename(a, out.encode())
for name, data in ENTRIES:
    e = lib.archive_entry_new()
    lib.archive_entry_set_pathname(e, name.encode())
    lib.archive_entry_set_size(e, len(data))
    lib.archive_entry_set_filetype(e, 0o100000)
    lib.archive_entry_set_perm(e, 0o644)
    lib.archive_entry_set_mtime(e, 1700000000, 0)
    lib.archive_write_header(a, e)
    lib.archive_write_data(a, data, len(data))
    lib.archive_entry_free(e)
lib.archive_write_close(a)
lib.archive_write_free(a)
