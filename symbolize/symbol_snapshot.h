// The symbol snapshot: a SymbolTable and the Modules its native locations
// refer to, saved into the archive so that `profcpu postprocess` on another
// machine names every frame exactly as the collecting machine did, without
// the target's files.
//
// Format, version 3 (versions 1 and 2, still read, lack the fields marked v2
// and v3).
// All integers little-endian; "str" is a u32 index into
// the string table; "bytes" is a u32 length followed by that many bytes
// (base/byte_io.h).
//
//   magic      8 bytes   "PCSYMSNP"
//   version    u32       1
//   strings    u32 N, then N x bytes     every distinct string once; index 0
//                                        is always the empty string
//   modules    u32 M, then M x:
//                str path, u32 dev_major, u32 dev_minor, u64 inode,
//                str build_id (raw bytes), u32 example_pid,
//                v2: u32 S, then S x (u64 file_offset, u64 file_size,
//                    u64 address, u8 executable): the file's PT_LOAD layout,
//                v3: u8 debug_info (0 or 1): named from DWARF or a debug file
//   entries    u32 E, then E x, sorted by (kind, space, value, epoch), no
//              duplicates:
//                u8 kind (CodeKind: 1 kernel, 2 native, 3 process, 4 imported),
//                u32 space (for native: a module index < M), u64 value,
//                v2: u32 epoch (JIT code generation, code_location.h),
//                str module, u32 F, then F frames (innermost first):
//                  str function, u64 offset, u8 flags (bit 0: inlined; the
//                  other bits must be 0), str source_file, u32 line
//
// Nothing may follow the last entry. A reader rejects (DataLoss) a wrong
// magic, truncation, trailing bytes, counts larger than the remaining bytes
// could hold, out-of-range indices, unknown kinds or flags and duplicate
// locations; it rejects a newer version with Unimplemented. Writers sort
// entries so the same table always gives the same bytes.
#ifndef PROFCPU_SYMBOLIZE_SYMBOL_SNAPSHOT_H_
#define PROFCPU_SYMBOLIZE_SYMBOL_SNAPSHOT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "symbolize/code_location.h"
#include "symbolize/symbol_table.h"

namespace profcpu::symbolize {

inline constexpr absl::string_view kSnapshotMagic = "PCSYMSNP";
inline constexpr uint32_t kSnapshotVersion = 3;

std::string SerializeSnapshot(const SymbolTable& table, const std::vector<Module>& modules);

// Replaces `*table` and `*modules` with the snapshot's contents. On error
// both are left untouched.
absl::Status ParseSnapshot(absl::string_view data, SymbolTable* table,
                           std::vector<Module>* modules);

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_SYMBOL_SNAPSHOT_H_
