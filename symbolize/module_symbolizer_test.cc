#include "symbolize/module_symbolizer.h"

#include <sys/stat.h>

#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "symbolize/test_util.h"

namespace profcpu::symbolize {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Each test builds a target root (and maybe an own root and a symbol
// directory) holding a stripped fixture and its debug file in one place, and
// checks that exactly the rule for that place finds it.
class ModuleSymbolizerTest : public ::testing::Test {
 protected:
  std::shared_ptr<base::RootDir> Root(const testing::ScratchDir& dir) {
    auto root = base::RootDir::Open(dir.path());
    EXPECT_TRUE(root.ok()) << root.status();
    return root.ok() ? *root : nullptr;
  }

  // Copies fixture `name` into `dir` at `relative`.
  static void Place(const testing::ScratchDir& dir, absl::string_view relative,
                    absl::string_view name) {
    dir.Write(relative, testing::ReadWholeFile(testing::SymfixPath(name)));
  }

  static Module ModuleAt(const std::string& path) {
    Module m;
    m.path = path;
    return m;
  }

  // The file offset of the inlined marker in fixture `name` (all split
  // variants share symfix_dwarf5's layout).
  static uint64_t MarkerOffset(absl::string_view name = "symfix_dwarf5") {
    const std::string path = testing::SymfixPath(name);
    auto offset = testing::ElfAddressToOffset(
        path, testing::ElfSymbolValue(path, "symfix_marker_blend"));
    EXPECT_TRUE(offset.has_value());
    return offset.value_or(0);
  }

  // Loads `module` with the target root `target` and search roots `roots`,
  // and expects the marker to resolve to the inlined chain.
  std::string ExpectNamed(const Module& module, const testing::ScratchDir* target,
                          std::vector<DebugSearchRoot> roots,
                          uint64_t marker_offset = MarkerOffset()) {
    std::shared_ptr<base::RootDir> target_root = target ? Root(*target) : nullptr;
    if (target_root != nullptr) {
      roots.insert(roots.begin(), {target_root, DebugSearchRoot::Kind::kSystem, "target"});
    }
    auto loaded = LoadModuleSymbolizer(module, target_root.get(), roots);
    if (!loaded.ok()) {
      ADD_FAILURE() << loaded.status();
      return "";
    }
    std::vector<Frame> frames = loaded->symbolizer->Lookup(marker_offset);
    EXPECT_EQ(frames.size(), 2u) << "warnings: " << ::testing::PrintToString(loaded->warnings);
    if (frames.size() == 2) {
      EXPECT_THAT(frames[0].function, HasSubstr("Mixer<unsigned long>::Blend"));
      EXPECT_TRUE(frames[0].inlined);
      EXPECT_THAT(frames[1].function, HasSubstr("symfix::Churn<unsigned long>"));
    }
    return loaded->symbolizer->debug_file();
  }

  testing::ScratchDir target_;
};

TEST_F(ModuleSymbolizerTest, UnstrippedFileNeedsNoDebugFile) {
  Place(target_, "app/symfix_dwarf5", "symfix_dwarf5");
  EXPECT_EQ(ExpectNamed(ModuleAt("/app/symfix_dwarf5"), &target_, {}), "");
}

TEST_F(ModuleSymbolizerTest, StrippedWithoutDebugFileNamesOnlyDynsym) {
  Place(target_, "app/symfix_stripped", "symfix_stripped");
  auto root = Root(target_);
  auto loaded = LoadModuleSymbolizer(ModuleAt("/app/symfix_stripped"), root.get(),
                                     {{root, DebugSearchRoot::Kind::kSystem, "target"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_THAT(loaded->symbolizer->Lookup(MarkerOffset()), IsEmpty());
  EXPECT_EQ(loaded->symbolizer->debug_file(), "");
}

// Over the DWARF bound (the fleet agent's), a module is named from its ELF
// symbol tables: the function, without the inlined frame or a line, and a
// warning says why. Both where the DWARF is in the file and in a debug file.
TEST_F(ModuleSymbolizerTest, DwarfOverTheBoundNamesFromElfSymbolsOnly) {
  Place(target_, "app/symfix_dwarf5", "symfix_dwarf5");
  Place(target_, "app/symfix_buildid", "symfix_buildid");
  std::string hex = absl::BytesToHexString(testing::ElfBuildId(testing::SymfixPath("symfix_buildid")));
  ASSERT_FALSE(hex.empty());
  Place(target_, absl::StrCat("usr/lib/debug/.build-id/", hex.substr(0, 2), "/", hex.substr(2),
                              ".debug"),
        "symfix_buildid.debug");
  auto root = Root(target_);
  ModuleSymbolizerLimits limits;
  limits.dwarf.max_section_bytes = 1;
  for (const char* name : {"symfix_dwarf5", "symfix_buildid"}) {
    SCOPED_TRACE(name);
    auto loaded = LoadModuleSymbolizer(ModuleAt(absl::StrCat("/app/", name)), root.get(),
                                       {{root, DebugSearchRoot::Kind::kSystem, "target"}}, limits);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_FALSE(loaded->symbolizer->has_dwarf());
    std::vector<Frame> frames = loaded->symbolizer->Lookup(MarkerOffset());
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_THAT(frames[0].function, HasSubstr("symfix::Churn<unsigned long>"));
    EXPECT_FALSE(frames[0].inlined);
    EXPECT_EQ(frames[0].line, 0u);
    EXPECT_THAT(loaded->warnings, Contains(HasSubstr("ELF symbol tables only")));
  }
}

TEST_F(ModuleSymbolizerTest, BuildIdRule) {
  Place(target_, "app/symfix_buildid", "symfix_buildid");
  std::string hex = absl::BytesToHexString(testing::ElfBuildId(testing::SymfixPath("symfix_buildid")));
  ASSERT_FALSE(hex.empty());
  Place(target_, absl::StrCat("usr/lib/debug/.build-id/", hex.substr(0, 2), "/", hex.substr(2),
                              ".debug"),
        "symfix_buildid.debug");
  EXPECT_THAT(ExpectNamed(ModuleAt("/app/symfix_buildid"), &target_, {}), HasSubstr("(build-id)"));
}

TEST_F(ModuleSymbolizerTest, DebugLinkBesideTheFile) {
  Place(target_, "app/symfix_stripped", "symfix_stripped");
  Place(target_, "app/symfix_stripped.dbg", "symfix_stripped.dbg");
  EXPECT_THAT(ExpectNamed(ModuleAt("/app/symfix_stripped"), &target_, {}),
              HasSubstr("debuglink beside the file"));
}

TEST_F(ModuleSymbolizerTest, DebugLinkInDotDebugSubdirectory) {
  Place(target_, "app/symfix_stripped", "symfix_stripped");
  Place(target_, "app/.debug/symfix_stripped.dbg", "symfix_stripped.dbg");
  EXPECT_THAT(ExpectNamed(ModuleAt("/app/symfix_stripped"), &target_, {}),
              HasSubstr("debuglink in .debug/"));
}

// Where users put dotnet-symbol's libcoreclr.so.dbg:
// /usr/lib/debug/<the library's directory>/.
TEST_F(ModuleSymbolizerTest, DebugLinkUnderGlobalDebugDirectory) {
  Place(target_, "usr/share/dotnet/shared/symfix_stripped", "symfix_stripped");
  Place(target_, "usr/lib/debug/usr/share/dotnet/shared/symfix_stripped.dbg",
        "symfix_stripped.dbg");
  EXPECT_THAT(ExpectNamed(ModuleAt("/usr/share/dotnet/shared/symfix_stripped"), &target_, {}),
              HasSubstr("debuglink under the debug directory"));
}

TEST_F(ModuleSymbolizerTest, PathRule) {
  Place(target_, "app/symfix_buildid", "symfix_buildid");
  Place(target_, "usr/lib/debug/app/symfix_buildid.debug", "symfix_buildid.debug");
  EXPECT_THAT(ExpectNamed(ModuleAt("/app/symfix_buildid"), &target_, {}), HasSubstr("(path.debug)"));
}

TEST_F(ModuleSymbolizerTest, DebugLinkCrcDecidesWithoutBuildIds) {
  Place(target_, "app/symfix_nobid_stripped", "symfix_nobid_stripped");
  Place(target_, "app/symfix_nobid_stripped.dbg", "symfix_nobid_stripped.dbg");
  ASSERT_EQ(testing::ElfBuildId(testing::SymfixPath("symfix_nobid_stripped")), "");
  EXPECT_THAT(ExpectNamed(ModuleAt("/app/symfix_nobid_stripped"), &target_, {},
                          MarkerOffset("symfix_nobid")),
              HasSubstr("debuglink beside the file"));
}

TEST_F(ModuleSymbolizerTest, DebugLinkWithWrongCrcIsRejected) {
  Place(target_, "app/symfix_nobid_stripped", "symfix_nobid_stripped");
  // Same name, other contents (one byte more): the CRC differs.
  target_.Write("app/symfix_nobid_stripped.dbg",
                testing::ReadWholeFile(testing::SymfixPath("symfix_nobid_stripped.dbg")) + "x");
  auto root = Root(target_);
  auto loaded = LoadModuleSymbolizer(ModuleAt("/app/symfix_nobid_stripped"), root.get(),
                                     {{root, DebugSearchRoot::Kind::kSystem, "target"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->symbolizer->debug_file(), "");
  EXPECT_THAT(::testing::PrintToString(loaded->warnings), HasSubstr("CRC"));
}

TEST_F(ModuleSymbolizerTest, MismatchedBuildIdIsRejected) {
  // symfix_dwarf4 has another build-id than symfix_buildid.
  Place(target_, "app/symfix_buildid", "symfix_buildid");
  Place(target_, "usr/lib/debug/app/symfix_buildid.debug", "symfix_dwarf4");
  auto root = Root(target_);
  auto loaded = LoadModuleSymbolizer(ModuleAt("/app/symfix_buildid"), root.get(),
                                     {{root, DebugSearchRoot::Kind::kSystem, "target"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->symbolizer->debug_file(), "");
  EXPECT_THAT(::testing::PrintToString(loaded->warnings), HasSubstr("build-id"));
}

TEST_F(ModuleSymbolizerTest, ProfilersOwnRootIsSearched) {
  Place(target_, "app/symfix_stripped", "symfix_stripped");
  testing::ScratchDir own;
  Place(own, "usr/lib/debug/app/symfix_stripped.dbg", "symfix_stripped.dbg");
  EXPECT_THAT(ExpectNamed(ModuleAt("/app/symfix_stripped"), &target_,
                          {{Root(own), DebugSearchRoot::Kind::kSystem, "own"}}),
              HasSubstr("in own"));
}

TEST_F(ModuleSymbolizerTest, SymbolDirectoryFlatDebugLink) {
  Place(target_, "app/symfix_stripped", "symfix_stripped");
  testing::ScratchDir symbols;
  Place(symbols, "symfix_stripped.dbg", "symfix_stripped.dbg");  // dotnet-symbol -o DIR
  EXPECT_THAT(ExpectNamed(ModuleAt("/app/symfix_stripped"), &target_,
                          {{Root(symbols), DebugSearchRoot::Kind::kSymbolDir, "syms"}}),
              HasSubstr("file name in a symbol directory"));
}

TEST_F(ModuleSymbolizerTest, SymbolDirectoryBuildIdTree) {
  Place(target_, "app/symfix_buildid", "symfix_buildid");
  testing::ScratchDir symbols;
  std::string hex = absl::BytesToHexString(testing::ElfBuildId(testing::SymfixPath("symfix_buildid")));
  Place(symbols, absl::StrCat(".build-id/", hex.substr(0, 2), "/", hex.substr(2), ".debug"),
        "symfix_buildid.debug");
  EXPECT_THAT(ExpectNamed(ModuleAt("/app/symfix_buildid"), &target_,
                          {{Root(symbols), DebugSearchRoot::Kind::kSymbolDir, "syms"}}),
              HasSubstr("(build-id)"));
}

// Late symbolization: no target files at all, only what the snapshot kept
// (build-id and load layout) and a symbol directory holding the debug file
// under the module's file name.
TEST_F(ModuleSymbolizerTest, WithoutTheTargetMatchesByRecordedBuildId) {
  Module module = ModuleAt("/app/symfix_buildid");
  // What the sidecar learned from the binary.
  {
    Place(target_, "app/symfix_buildid", "symfix_buildid");
    auto root = Root(target_);
    auto learned = LoadModuleSymbolizer(module, root.get(), {});
    ASSERT_TRUE(learned.ok()) << learned.status();
    module.build_id = learned->symbolizer->build_id();
    module.segments = learned->symbolizer->segments();
  }
  ASSERT_FALSE(module.build_id.empty());
  ASSERT_FALSE(module.segments.empty());
  testing::ScratchDir symbols;
  Place(symbols, "symfix_buildid.debug", "symfix_buildid.debug");
  EXPECT_THAT(ExpectNamed(module, nullptr,
                          {{Root(symbols), DebugSearchRoot::Kind::kSymbolDir, "syms"}}),
              HasSubstr("file name in a symbol directory"));
}

TEST_F(ModuleSymbolizerTest, WithoutTheTargetAWrongBuildIdIsRefused) {
  Module module = ModuleAt("/app/symfix_buildid");
  module.build_id = std::string(20, '\x11');
  module.segments = {{0, 0x100000, 0, true}};
  testing::ScratchDir symbols;
  Place(symbols, "symfix_buildid.debug", "symfix_buildid.debug");
  auto loaded = LoadModuleSymbolizer(module, nullptr,
                                     {{Root(symbols), DebugSearchRoot::Kind::kSymbolDir, "syms"}});
  EXPECT_FALSE(loaded.ok());
}

TEST_F(ModuleSymbolizerTest, NothingAtAllIsNotFound) {
  auto loaded = LoadModuleSymbolizer(ModuleAt("/app/absent"), nullptr, {});
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kNotFound);
}

// What gdb, perf and debuginfod-find fetched: CACHE/<build-id>/debuginfo,
// found by build-id only (no other rule looks there).
TEST_F(ModuleSymbolizerTest, DebuginfodCacheByBuildId) {
  Place(target_, "app/symfix_buildid", "symfix_buildid");
  testing::ScratchDir cache;
  std::string hex = absl::BytesToHexString(testing::ElfBuildId(testing::SymfixPath("symfix_buildid")));
  Place(cache, absl::StrCat(hex, "/debuginfo"), "symfix_buildid.debug");
  EXPECT_THAT(ExpectNamed(ModuleAt("/app/symfix_buildid"), &target_,
                          {{Root(cache), DebugSearchRoot::Kind::kDebuginfodCache, "cache"}}),
              HasSubstr("debuginfo in cache (build-id)"));

  DebugFileQuery query;
  query.module_path = "/app/x";
  query.build_id = "\xab\xcd\xef";
  query.debug_link = DebugLink{"x.dbg", 0};
  std::vector<std::string> paths;
  for (const auto& c : DebugFileCandidates(
           query, {{Root(cache), DebugSearchRoot::Kind::kDebuginfodCache, "cache"}})) {
    paths.push_back(c.path);
  }
  EXPECT_EQ(paths, (std::vector<std::string>{"/abcdef/debuginfo"}));
}

TEST_F(ModuleSymbolizerTest, DebuginfodCacheWithAnotherBuildIdIsRefused) {
  Module module = ModuleAt("/app/symfix_buildid");
  module.build_id = testing::ElfBuildId(testing::SymfixPath("symfix_buildid"));
  module.segments = {{0, 0x100000, 0, true}};
  testing::ScratchDir cache;
  Place(cache, absl::StrCat(absl::BytesToHexString(module.build_id), "/debuginfo"),
        "symfix_dwarf4");
  auto loaded = LoadModuleSymbolizer(
      module, nullptr, {{Root(cache), DebugSearchRoot::Kind::kDebuginfodCache, "cache"}});
  ASSERT_FALSE(loaded.ok());
  // Why is in the error: the file found was another build's.
  EXPECT_THAT(std::string(loaded.status().message()),
              HasSubstr("/debuginfo in cache for /app/symfix_buildid: its build-id"));
}

// libdebuginfod's choice of cache directory (debuginfod-client.c).
TEST(DebuginfodClientCacheDirTest, EnvironmentOrder) {
  EXPECT_EQ(DebuginfodClientCacheDir("/c", "/x", "/h"), "/c");
  EXPECT_EQ(DebuginfodClientCacheDir(nullptr, "/x", "/h"), "/x/debuginfod_client");
  EXPECT_EQ(DebuginfodClientCacheDir("", "", "/h"), "/h/.cache/debuginfod_client");
  EXPECT_EQ(DebuginfodClientCacheDir(nullptr, nullptr, nullptr), "");
}

TEST_F(ModuleSymbolizerTest, DebugLinkCannotClimbOutOfItsDirectory) {
  DebugFileQuery query;
  query.module_path = "/app/x";
  query.debug_link = DebugLink{"x.dbg", 0};
  testing::ScratchDir dir;
  std::vector<DebugSearchRoot> roots = {{Root(dir), DebugSearchRoot::Kind::kSystem, "t"},
                                        {Root(dir), DebugSearchRoot::Kind::kSymbolDir, "s"}};
  std::vector<std::string> paths;
  for (const auto& c : DebugFileCandidates(query, roots)) paths.push_back(c.path);
  EXPECT_EQ(paths, (std::vector<std::string>{
                       "/app/x.dbg", "/app/.debug/x.dbg", "/usr/lib/debug/app/x.dbg",
                       "/app/x.dbg", "/x.dbg", "/usr/lib/debug/app/x.debug", "/app/x.debug"}));
  query.module_path = "relative/x";  // not a path to build others from
  paths.clear();
  for (const auto& c : DebugFileCandidates(query, roots)) paths.push_back(c.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"/x.dbg"}));
}

}  // namespace
}  // namespace profcpu::symbolize
