#include "symbolize/elf_file.h"

#include <fcntl.h>
#include <libelf.h>
#include <unistd.h>

#include <string>
#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "symbolize/test_util.h"

namespace profcpu::symbolize {
namespace {

using ::testing::HasSubstr;

base::UniqueFd OpenForReading(const std::string& path) {
  return base::UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
}

bool IsOpen(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

TEST(ElfFileTest, OwnsTheDescriptorItReadsFrom) {
  base::UniqueFd fd = OpenForReading(testing::FixtureLibPath());
  ASSERT_TRUE(fd.valid());
  const int raw = fd.get();
  {
    absl::StatusOr<ElfFile> file = ElfFile::Open(std::move(fd), "the fixture");
    ASSERT_TRUE(file.ok()) << file.status();
    EXPECT_EQ(elf_kind(file->get()), ELF_K_ELF);
    EXPECT_EQ(file->fd(), raw);
    ElfFile moved = *std::move(file);
    EXPECT_EQ(file->get(), nullptr);
    EXPECT_EQ(moved.fd(), raw);
    EXPECT_TRUE(IsOpen(raw));
  }
  EXPECT_FALSE(IsOpen(raw));
}

TEST(ElfFileTest, AFileThatIsNotElfIsClosedAndNamed) {
  testing::ScratchDir dir;
  const std::string path = dir.Write("script.sh", "#!/bin/sh\nexit 0\n");
  base::UniqueFd fd = OpenForReading(path);
  ASSERT_TRUE(fd.valid());
  const int raw = fd.get();
  absl::StatusOr<ElfFile> file = ElfFile::Open(std::move(fd), "script.sh");
  EXPECT_TRUE(absl::IsInvalidArgument(file.status()));
  EXPECT_THAT(file.status().message(), HasSubstr("script.sh is not an ELF file"));
  EXPECT_FALSE(IsOpen(raw));
}

TEST(ElfFileTest, ReadsAnImageInMemory) {
  std::string image = testing::ReadWholeFile(testing::FixtureLibPath());
  ASSERT_FALSE(image.empty());
  absl::StatusOr<ElfFile> file = ElfFile::FromImage(absl::MakeSpan(image), "the image");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(elf_kind(file->get()), ELF_K_ELF);
  EXPECT_EQ(file->fd(), -1);

  std::string text = "not ELF at all";
  EXPECT_TRUE(absl::IsInvalidArgument(ElfFile::FromImage(absl::MakeSpan(text), "text").status()));
}

TEST(ElfFileTest, ReleaseHandsBothOver) {
  absl::StatusOr<ElfFile> file =
      ElfFile::Open(OpenForReading(testing::FixtureLibPath()), "the fixture");
  ASSERT_TRUE(file.ok()) << file.status();
  ElfFile::Released released = std::move(*file).Release();
  // The new owner (here, as libdwfl would) ends and closes them.
  ElfPtr elf(released.elf);
  base::UniqueFd fd(released.fd);
  ASSERT_NE(elf, nullptr);
  EXPECT_TRUE(IsOpen(fd.get()));
  EXPECT_EQ(file->get(), nullptr);
  EXPECT_EQ(file->fd(), -1);
}

}  // namespace
}  // namespace profcpu::symbolize
