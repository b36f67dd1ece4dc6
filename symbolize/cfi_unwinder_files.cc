#include "symbolize/cfi_unwinder_files.h"

#include <sys/stat.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/types/span.h"
#include "base/unique_fd.h"
#include "symbolize/debug_file_finder.h"
#include "symbolize/vdso_image.h"

namespace profcpu::symbolize {

std::shared_ptr<base::RootDir> CfiModuleFiles::RootOf(const Module& module, uint32_t pid) const {
  if (files_ == nullptr) return nullptr;
  std::shared_ptr<base::RootDir> root = files_->RootFor(pid);
  return root != nullptr ? root : files_->RootFor(module.example_pid);
}

absl::StatusOr<ElfFile> CfiModuleFiles::Open(const Module& module, uint32_t pid) {
  if (module.path == "[vdso]") {
    if (!vdso_loaded_) {
      vdso_loaded_ = true;
      absl::StatusOr<std::string> image = ReadOwnVdsoImage();
      if (image.ok()) vdso_image_ = std::move(*image);
    }
    if (vdso_image_.empty()) return absl::NotFoundError("no vdso image");
    return ElfFile::FromImage(absl::MakeSpan(vdso_image_), "[vdso]");
  }
  if (module.path.empty() || module.path[0] == '[') {
    return absl::NotFoundError(absl::StrCat(module.path, " is not a file"));
  }
  std::shared_ptr<base::RootDir> root = RootOf(module, pid);
  if (root == nullptr) return absl::NotFoundError(absl::StrCat("no root for process ", pid));
  std::string path(absl::StripSuffix(module.path, kDeletedSuffix));
  absl::StatusOr<base::UniqueFd> fd = root->OpenFile(path);
  struct stat st;
  if (!fd.ok() || ::fstat(fd->get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    std::string warning = absl::StrCat("cannot open ", path, " to unwind through it: ",
                                       fd.ok() ? "not a regular file" : fd.status().message());
    warn_(warning);
    return absl::FailedPreconditionError(std::move(warning));
  }
  return ElfFile::Open(std::move(*fd), path);
}

}  // namespace profcpu::symbolize
