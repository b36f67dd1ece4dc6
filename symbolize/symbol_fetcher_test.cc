#include "symbolize/symbol_fetcher.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>

#include "absl/strings/escaping.h"
#include "base/file_io.h"
#include "gtest/gtest.h"
#include "symbolize/symbol_cache.h"

namespace profcpu::symbolize {
namespace {

// This test binary: an ELF file with a GNU build-id (Debian's toolchain
// links one in).
std::string OwnBuildId() {
  base::UniqueFd fd(::open("/proc/self/exe", O_RDONLY | O_CLOEXEC));
  absl::StatusOr<std::string> id = ReadElfBuildId(fd.get());
  return id.ok() ? *id : "";
}

class SymbolCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/profcpu-cache-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override { ASSERT_EQ(std::system(("rm -rf " + dir_).c_str()), 0); }

  // A download of `contents` in the cache's temporary file.
  std::string Download(const SymbolCache& cache, const std::string& contents) {
    std::string temp;
    absl::StatusOr<base::UniqueFd> fd = cache.CreateTemp(&temp);
    EXPECT_TRUE(fd.ok()) << fd.status();
    EXPECT_TRUE(base::WriteFile(temp, contents).ok());
    return temp;
  }

  std::string dir_;
};

TEST_F(SymbolCacheTest, KeepsAFileOnlyUnderItsOwnBuildId) {
  const std::string id = OwnBuildId();
  ASSERT_GE(id.size(), 2u) << "the test binary has no build-id";
  absl::StatusOr<std::string> self = base::ReadFileBounded("/proc/self/exe", size_t{1} << 30);
  ASSERT_TRUE(self.ok());
  const SymbolCache cache(dir_ + "/nested/cache");
  const std::string hex = absl::BytesToHexString(id);
  EXPECT_EQ(cache.PathFor(id),
            dir_ + "/nested/cache/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) + ".debug");
  EXPECT_FALSE(cache.Has(id));

  // Another build-id: refused, and the download is gone.
  std::string other = id;
  other[0] ^= 1;
  std::string temp = Download(cache, *self);
  absl::Status refused = cache.Adopt(temp, other);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("build-id mismatch"), std::string::npos) << refused;
  EXPECT_NE(::access(temp.c_str(), F_OK), 0);
  EXPECT_FALSE(cache.Has(other));

  // Not ELF (an error page): refused.
  temp = Download(cache, "<html>404</html>");
  EXPECT_FALSE(cache.Adopt(temp, id).ok());
  EXPECT_NE(::access(temp.c_str(), F_OK), 0);

  // Its own: kept where the symbolizer looks.
  temp = Download(cache, *self);
  ASSERT_TRUE(cache.Adopt(temp, id).ok());
  EXPECT_TRUE(cache.Has(id));
  EXPECT_NE(::access(temp.c_str(), F_OK), 0);
}

TEST(SymbolFetcherTest, ServerNamesAndKeys) {
  EXPECT_EQ(*SymbolServerUrl("msdl"), "https://msdl.microsoft.com/download/symbols");
  EXPECT_EQ(*SymbolServerUrl("http://127.0.0.1:8000//"), "http://127.0.0.1:8000");
  EXPECT_FALSE(SymbolServerUrl("file:///etc").ok());
  EXPECT_FALSE(SymbolServerUrl("127.0.0.1:8000").ok());
  EXPECT_EQ(SsqpDebugFileUrl("https://s", std::string("\x3e\xad\x01", 3)),
            "https://s/_.debug/elf-buildid-sym-3ead01/_.debug");
}

TEST(SymbolFetcherTest, SaysWhatTheCacheHoldsWithoutFetching) {
  SymbolFetchOptions options;
  options.cache_dir = "/nonexistent/profcpu-cache";
  options.fetch = false;
  options.servers = {"http://127.0.0.1:9"};  // never asked
  base::RunLog log;
  std::vector<ModuleFetchResult> results =
      FetchDebugFiles({{"/lib/a.so", "\x01\x02\x03", 5}, {"/lib/b.so", "", 2}}, options, &log);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].status, ModuleFetchResult::Status::kNotInCache);
  EXPECT_TRUE(results[0].tried.empty());
  EXPECT_EQ(results[1].status, ModuleFetchResult::Status::kNoBuildId);
  EXPECT_EQ(FetchStatusName(results[1].status), "no_build_id");
}

TEST(SymbolFetcherTest, ARefusedConnectionIsNamedPerServer) {
  char dir[] = "/tmp/profcpu-cache-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  SymbolFetchOptions options;
  options.cache_dir = dir;
  // Port 9 (discard) is closed on loopback here: refused at once.
  options.servers = {"http://127.0.0.1:9", "http://127.0.0.1:9/second"};
  options.limits.timeout = absl::Seconds(2);
  base::RunLog log;
  std::vector<ModuleFetchResult> results =
      FetchDebugFiles({{"/lib/a.so", "\x01\x02\x03", 5}}, options, &log);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, ModuleFetchResult::Status::kNotFound);
  ASSERT_EQ(results[0].tried.size(), 2u);
  EXPECT_EQ(results[0].tried[1].server, "http://127.0.0.1:9/second");
  EXPECT_EQ(results[0].tried[0].result, "connection refused");
  EXPECT_EQ(DescribeFetch(results[0]),
            "not found (http://127.0.0.1:9: connection refused; http://127.0.0.1:9/second: "
            "connection refused)");
  ASSERT_EQ(std::system((std::string("rm -rf ") + dir).c_str()), 0);
}

}  // namespace
}  // namespace profcpu::symbolize
