#include "symbolize/module_symbols.h"

#include <sys/stat.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "symbolize/test_util.h"

namespace profcpu::symbolize {
namespace {

using ::testing::HasSubstr;

class ModuleSymbolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.Write("lib/libfixture.so", testing::ReadWholeFile(testing::FixtureLibPath()));
    struct stat st;
    ASSERT_EQ(::stat(path_.c_str(), &st), 0);
    inode_ = st.st_ino;
    auto root = base::RootDir::Open(dir_.path());
    ASSERT_TRUE(root.ok()) << root.status();
    root_ = *root;
  }

  Module FixtureModule() const {
    Module m;
    m.path = "/lib/libfixture.so";
    m.inode = inode_;
    return m;
  }

  testing::ScratchDir dir_;
  std::string path_;
  uint64_t inode_ = 0;
  std::shared_ptr<base::RootDir> root_;
};

TEST_F(ModuleSymbolsTest, LoadsTheFileInsideTheRoot) {
  auto loaded = LoadModuleSymbols(*root_, FixtureModule());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->warning, "");
  auto match = loaded->symbols->LookupFileOffset(testing::FixtureOffset("fixture_leaf"));
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->function, "fixture_leaf");
}

TEST_F(ModuleSymbolsTest, DifferentInodeStillLoadsButWarns) {
  Module module = FixtureModule();
  module.inode = inode_ + 1;
  auto loaded = LoadModuleSymbols(*root_, module);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_THAT(loaded->warning, HasSubstr("/lib/libfixture.so: file changed since it was mapped"));
  EXPECT_NE(loaded->symbols, nullptr);
}

TEST_F(ModuleSymbolsTest, MatchingBuildIdSettlesIdentity) {
  auto first = LoadModuleSymbols(*root_, FixtureModule());
  ASSERT_TRUE(first.ok()) << first.status();
  Module module = FixtureModule();
  module.inode = inode_ + 1;  // e.g. overlayfs with xino: inode numbers differ
  module.build_id = first->symbols->build_id();
  auto loaded = LoadModuleSymbols(*root_, module);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->warning, "");
}

TEST_F(ModuleSymbolsTest, DifferentBuildIdWarns) {
  Module module = FixtureModule();
  module.build_id = std::string(20, '\x42');
  auto loaded = LoadModuleSymbols(*root_, module);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_THAT(loaded->warning, HasSubstr("file changed since it was mapped (build-id 4242"));
}

TEST_F(ModuleSymbolsTest, DeletedPathIsLookedUpWithoutTheSuffix) {
  Module module = FixtureModule();
  module.path = "/lib/libfixture.so (deleted)";
  module.inode = 0;
  auto loaded = LoadModuleSymbols(*root_, module);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_THAT(loaded->warning, HasSubstr("deleted"));

  // The file that was mapped, kept open after its deletion: nothing to warn.
  module.inode = inode_;
  auto kept = LoadModuleSymbols(*root_, module);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(kept->warning, "");
}

TEST_F(ModuleSymbolsTest, MissingFileIsAnError) {
  Module module = FixtureModule();
  module.path = "/lib/absent.so";
  auto loaded = LoadModuleSymbols(*root_, module);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kNotFound);
}

TEST_F(ModuleSymbolsTest, AbsoluteSymlinkCannotLeaveTheRoot) {
  // Inside the root, /lib/evil.so points at the fixture's host path; resolved
  // in the root, that path does not exist.
  dir_.Symlink("lib/evil.so", testing::FixtureLibPath());
  Module module = FixtureModule();
  module.path = "/lib/evil.so";
  auto loaded = LoadModuleSymbols(*root_, module);
  EXPECT_FALSE(loaded.ok());
}

}  // namespace
}  // namespace profcpu::symbolize
