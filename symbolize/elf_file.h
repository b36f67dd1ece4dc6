// An ELF file open for libelf: the Elf handle together with the descriptor
// it reads from. Files are read with ELF_C_READ, which reads lazily with
// pread (never mmap: a target truncating its file under us cannot raise
// SIGBUS here), so the descriptor must stay open as long as the handle. One
// owner for both ends them on every path, in order: elf_end, then close.
#ifndef PROFCPU_SYMBOLIZE_ELF_FILE_H_
#define PROFCPU_SYMBOLIZE_ELF_FILE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/unique_fd.h"

struct Elf;  // libelf.h: typedef struct Elf Elf

namespace profcpu::symbolize {

// libelf's one-time version handshake (elf_version); false if it refused.
bool LibelfReady();

// An Elf handle alone, for a file whose descriptor someone else owns or an
// image in memory.
struct ElfEnder {
  void operator()(Elf* elf) const;  // elf_end
};
using ElfPtr = std::unique_ptr<Elf, ElfEnder>;

class ElfFile {
 public:
  // Reads the file open at `fd` (ELF_C_READ), taking the descriptor. `what`
  // names it in errors: DataLoss when libelf cannot read it,
  // InvalidArgument when it is not an ELF file (an ar archive, a script).
  static absl::StatusOr<ElfFile> Open(base::UniqueFd fd, absl::string_view what);
  // Reads an ELF image in memory, which must outlive the ElfFile (libelf
  // reads it in place and may write to it). Errors as Open's.
  static absl::StatusOr<ElfFile> FromImage(absl::Span<char> image, absl::string_view what);

  ElfFile(ElfFile&& other) noexcept = default;
  ElfFile& operator=(ElfFile&& other) noexcept;
  ~ElfFile() = default;  // members end in reverse order: the Elf, then the fd

  Elf* get() const { return elf_.get(); }
  int fd() const { return fd_.get(); }  // -1 for an image

  // Hands both over to an owner that ends and closes them itself: libdwfl
  // takes the Elf and the fd its find_elf callback returns.
  struct Released {
    Elf* elf = nullptr;
    int fd = -1;
  };
  Released Release() &&;

 private:
  ElfFile(base::UniqueFd fd, ElfPtr elf) : fd_(std::move(fd)), elf_(std::move(elf)) {}

  base::UniqueFd fd_;  // declared first: outlives elf_
  ElfPtr elf_;
};

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_ELF_FILE_H_
