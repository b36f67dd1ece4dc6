#include "symbolize/elf_file.h"

#include <libelf.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace profcpu::symbolize {
namespace {

absl::StatusOr<ElfPtr> CheckedElf(Elf* elf, absl::string_view what) {
  ElfPtr owned(elf);
  if (owned == nullptr) {
    return absl::DataLossError(absl::StrCat("read ELF ", what, ": ", elf_errmsg(-1)));
  }
  if (elf_kind(owned.get()) != ELF_K_ELF) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is not an ELF file"));
  }
  return owned;
}

}  // namespace

bool LibelfReady() {
  static const bool ready = elf_version(EV_CURRENT) != EV_NONE;
  return ready;
}

void ElfEnder::operator()(Elf* elf) const { elf_end(elf); }

absl::StatusOr<ElfFile> ElfFile::Open(base::UniqueFd fd, absl::string_view what) {
  if (!LibelfReady()) return absl::InternalError("libelf: elf_version failed");
  absl::StatusOr<ElfPtr> elf = CheckedElf(elf_begin(fd.get(), ELF_C_READ, nullptr), what);
  if (!elf.ok()) return elf.status();
  return ElfFile(std::move(fd), std::move(*elf));
}

absl::StatusOr<ElfFile> ElfFile::FromImage(absl::Span<char> image, absl::string_view what) {
  if (!LibelfReady()) return absl::InternalError("libelf: elf_version failed");
  absl::StatusOr<ElfPtr> elf = CheckedElf(elf_memory(image.data(), image.size()), what);
  if (!elf.ok()) return elf.status();
  return ElfFile(base::UniqueFd(), std::move(*elf));
}

ElfFile& ElfFile::operator=(ElfFile&& other) noexcept {
  // The old Elf ends before its descriptor closes.
  elf_ = std::move(other.elf_);
  fd_ = std::move(other.fd_);
  return *this;
}

ElfFile::Released ElfFile::Release() && {
  return Released{elf_.release(), fd_.Release()};
}

}  // namespace profcpu::symbolize
