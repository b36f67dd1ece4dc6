#include "symbolize/modules_to_fetch.h"

#include <stdlib.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "base/file_io.h"
#include "gtest/gtest.h"

namespace profcpu::symbolize {
namespace {

TEST(ModulesToFetchTest, OnlyNativeModulesAreFetchedWithTheirBuildIds) {
  std::vector<Module> modules(2);
  modules[0].path = "/usr/lib/libc.so.6";
  modules[0].build_id = "\x01\x02";
  modules[1].path = "/app/server";
  const std::vector<ModuleToFetch> wanted = NativeModulesToFetch(
      {{"/app/server", 40}, {"[JIT] tid 7", 30}, {"/usr/lib/libc.so.6", 2}}, modules);
  ASSERT_EQ(wanted.size(), 2u);
  EXPECT_EQ(wanted[0].module, "/app/server");
  EXPECT_EQ(wanted[0].build_id, "");
  EXPECT_EQ(wanted[0].unknown_frames, 40u);
  EXPECT_EQ(wanted[1].module, "/usr/lib/libc.so.6");
  EXPECT_EQ(wanted[1].build_id, "\x01\x02");
}

class MetadataFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/modules_to_fetch_test.XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override { (void)std::system(absl::StrCat("rm -rf ", dir_).c_str()); }
  void WriteMetadata(const std::string& text) {
    ASSERT_TRUE(base::WriteFile(absl::StrCat(dir_, "/metadata.json"), text).ok());
  }
  std::string dir_;
};

TEST_F(MetadataFolder, WhatIsWrittenIsReadBack) {
  const std::vector<ModuleToFetch> modules = {{"/app/server", std::string("\x12\xab", 2), 40},
                                              {"/usr/lib/libc.so.6", "", 2}};
  nlohmann::ordered_json metadata;
  metadata["symbols"]["unknown_native_modules"] = ModulesToFetchJson(modules);
  WriteMetadata(metadata.dump());
  auto read = ReadModulesToFetch(dir_);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ((*read)[0].module, "/app/server");
  EXPECT_EQ((*read)[0].build_id, std::string("\x12\xab", 2));
  EXPECT_EQ((*read)[0].unknown_frames, 40u);
  EXPECT_EQ((*read)[1].build_id, "");
}

TEST_F(MetadataFolder, HostileEntriesAreSkippedAndBadFilesRefused) {
  EXPECT_TRUE(absl::IsNotFound(ReadModulesToFetch(dir_).status()));
  WriteMetadata("not json {");
  EXPECT_TRUE(absl::IsInvalidArgument(ReadModulesToFetch(dir_).status()));
  WriteMetadata(R"({"symbols": {}})");  // an older profcpu's
  EXPECT_TRUE(absl::IsInvalidArgument(ReadModulesToFetch(dir_).status()));
  WriteMetadata(R"({"symbols": {"unknown_native_modules": [
      {"module": "/ok", "build_id": "ab"}, {"module": 7, "build_id": "ab"},
      {"module": "/odd", "build_id": "abc"}, {"module": "/upper", "build_id": "AB"}, 5]}})");
  auto read = ReadModulesToFetch(dir_);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ((*read)[0].module, "/ok");
}

}  // namespace
}  // namespace profcpu::symbolize
