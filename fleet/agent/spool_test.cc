#include "fleet/agent/spool.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fleet/agent/spool_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace profcpu::fleet {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;

class SpoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = absl::StrCat(::testing::TempDir(), "/spool_test_XXXXXX");
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    scratch_ = pattern;
    dir_ = scratch_ + "/var/spool";  // parents created by Open
  }
  void TearDown() override { std::filesystem::remove_all(scratch_); }

  static std::string Payload(uint64_t window, size_t size) {
    std::string payload = absl::StrCat("window ", window, ":");
    payload.resize(size, static_cast<char>('a' + window % 26));
    return payload;
  }
  std::string PathOf(uint64_t seq) const { return absl::StrCat(dir_, "/", Spool::FileName(seq)); }
  static void WriteRaw(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  }
  static std::string ReadRaw(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  // Windows in the spool, oldest first, by reading and removing them all.
  static std::vector<uint64_t> Drain(Spool& spool) {
    std::vector<uint64_t> ids;
    while (auto entry = spool.Oldest()) {
      EXPECT_EQ(entry->payload, Payload(entry->window_id, entry->payload.size()));
      ids.push_back(entry->window_id);
      EXPECT_TRUE(spool.Remove(entry->seq).ok());
    }
    return ids;
  }

  std::string scratch_;
  std::string dir_;
};

TEST_F(SpoolTest, CreatesAPrivateDirectoryAndNamesFilesBySeq) {
  auto spool = Spool::Open(dir_, 1 << 20);
  ASSERT_TRUE(spool.ok()) << spool.status();
  struct stat st;
  ASSERT_EQ(::stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  auto losses = spool->Put(5, 10, Payload(5, 100));
  ASSERT_TRUE(losses.ok()) << losses.status();
  EXPECT_THAT(*losses, IsEmpty());
  EXPECT_EQ(Spool::FileName(1), "00000000000000000001.window");
  EXPECT_TRUE(std::filesystem::exists(PathOf(1)));
  EXPECT_EQ(spool->size_bytes(), kSpoolHeaderSize + 100);
  EXPECT_EQ(spool->windows(), 1u);
}

TEST_F(SpoolTest, OrderIsKeptAcrossReopen) {
  {
    auto spool = Spool::Open(dir_, 1 << 20);
    ASSERT_TRUE(spool.ok()) << spool.status();
    for (uint64_t w : {11, 12, 13}) ASSERT_TRUE(spool->Put(w, w * 10, Payload(w, 200)).ok());
    auto first = spool->Oldest();
    ASSERT_TRUE(first.has_value());
    EXPECT_EQ(first->window_id, 11u);
    EXPECT_EQ(first->samples, 110u);
    ASSERT_TRUE(spool->Remove(first->seq).ok());
  }
  auto spool = Spool::Open(dir_, 1 << 20);
  ASSERT_TRUE(spool.ok()) << spool.status();
  EXPECT_EQ(spool->windows(), 2u);
  EXPECT_EQ(spool->size_bytes(), 2 * (kSpoolHeaderSize + 200));
  // A window put after the restart goes after those left by the last run.
  ASSERT_TRUE(spool->Put(14, 140, Payload(14, 50)).ok());
  EXPECT_THAT(Drain(*spool), ElementsAre(12, 13, 14));
  EXPECT_THAT(spool->TakeLosses(), IsEmpty());
  EXPECT_EQ(spool->size_bytes(), 0u);
  EXPECT_EQ(spool->Remove(99).code(), absl::StatusCode::kNotFound);
}

TEST_F(SpoolTest, CapEvictsTheOldestAndCountsTheirSamples) {
  const uint64_t window_bytes = kSpoolHeaderSize + 1000;
  auto spool = Spool::Open(dir_, 3 * window_bytes);
  ASSERT_TRUE(spool.ok()) << spool.status();
  for (uint64_t w : {1, 2, 3}) {
    auto losses = spool->Put(w, 100 + w, Payload(w, 1000));
    ASSERT_TRUE(losses.ok());
    EXPECT_THAT(*losses, IsEmpty());
  }
  // Twice the size of one: the two oldest go.
  auto losses = spool->Put(4, 104, Payload(4, 2 * 1000 + kSpoolHeaderSize));
  ASSERT_TRUE(losses.ok()) << losses.status();
  const std::string reason = absl::StrCat("spool full (cap ", 3 * window_bytes, " bytes)");
  ASSERT_EQ(losses->size(), 2u);
  EXPECT_EQ((*losses)[0].window_id, 1u);
  EXPECT_EQ((*losses)[0].samples, 101u);
  EXPECT_EQ((*losses)[0].reason, reason);
  EXPECT_EQ((*losses)[1].window_id, 2u);
  EXPECT_EQ((*losses)[1].samples, 102u);
  EXPECT_LE(spool->size_bytes(), spool->cap_bytes());
  EXPECT_FALSE(std::filesystem::exists(PathOf(1)));
  EXPECT_THAT(Drain(*spool), ElementsAre(3, 4));
}

TEST_F(SpoolTest, CapInMegabytesIsSaidSoAndStaysBoundedUnderLoad) {
  auto spool = Spool::Open(dir_, 1 << 20);
  ASSERT_TRUE(spool.ok()) << spool.status();
  uint64_t lost_samples = 0;
  uint64_t lost_windows = 0;
  for (uint64_t w = 1; w <= 40; ++w) {
    auto losses = spool->Put(w, 1000, Payload(w, 100 << 10));
    ASSERT_TRUE(losses.ok()) << losses.status();
    for (const SpoolLoss& loss : *losses) {
      EXPECT_EQ(loss.reason, "spool full (cap 1 MB)");
      EXPECT_EQ(loss.window_id, lost_windows + 1);  // oldest first, none skipped
      lost_samples += loss.samples;
      ++lost_windows;
    }
    ASSERT_LE(spool->size_bytes(), uint64_t{1} << 20);
  }
  // Every window is either still spooled or counted lost.
  EXPECT_EQ(lost_windows + spool->windows(), 40u);
  EXPECT_EQ(lost_samples, lost_windows * 1000);
  EXPECT_EQ(spool->windows(), 10u);  // 10 windows of 100 KiB + header fit in 1 MiB
}

TEST_F(SpoolTest, AWindowLargerThanTheCapIsItselfLost) {
  auto spool = Spool::Open(dir_, 1000);
  ASSERT_TRUE(spool.ok()) << spool.status();
  ASSERT_TRUE(spool->Put(1, 5, Payload(1, 100)).ok());
  auto losses = spool->Put(2, 7, Payload(2, 1000));
  ASSERT_TRUE(losses.ok());
  EXPECT_THAT(*losses, ElementsAre(AllOf(Field(&SpoolLoss::window_id, 2u),
                                         Field(&SpoolLoss::samples, 7u),
                                         Field(&SpoolLoss::reason, "spool full (cap 1000 bytes)"))));
  EXPECT_THAT(Drain(*spool), ElementsAre(1));
}

TEST_F(SpoolTest, CrashMidWriteIsRecovered) {
  {
    auto spool = Spool::Open(dir_, 1 << 20);
    ASSERT_TRUE(spool.ok()) << spool.status();
    ASSERT_TRUE(spool->Put(21, 210, Payload(21, 300)).ok());
  }
  // A crash between fsync and rename leaves a whole temporary file: kept.
  WriteRaw(PathOf(2) + ".tmp", EncodeSpoolFile(22, 220, Payload(22, 300)));
  // A crash mid-write leaves part of one: counted lost, by what its header says.
  const std::string cut = EncodeSpoolFile(23, 230, Payload(23, 300));
  WriteRaw(PathOf(3) + ".tmp", cut.substr(0, cut.size() / 2));
  // Cut inside the header: lost, nothing known of it.
  WriteRaw(PathOf(4) + ".tmp", cut.substr(0, 10));

  auto spool = Spool::Open(dir_, 1 << 20);
  ASSERT_TRUE(spool.ok()) << spool.status();
  auto losses = spool->TakeLosses();
  ASSERT_EQ(losses.size(), 2u);
  EXPECT_EQ(losses[0].window_id, 23u);
  EXPECT_EQ(losses[0].samples, 230u);
  EXPECT_EQ(losses[0].reason, "spool write cut short");
  EXPECT_EQ(losses[1].window_id, 0u);
  EXPECT_EQ(losses[1].reason, "spool write cut short");
  EXPECT_FALSE(std::filesystem::exists(PathOf(3) + ".tmp"));
  EXPECT_FALSE(std::filesystem::exists(PathOf(4) + ".tmp"));
  // The next window takes a name after every one seen, kept or not.
  ASSERT_TRUE(spool->Put(24, 240, Payload(24, 10)).ok());
  EXPECT_TRUE(std::filesystem::exists(PathOf(5)));
  EXPECT_THAT(Drain(*spool), ElementsAre(21, 22, 24));
}

TEST_F(SpoolTest, CorruptFilesAreDetectedRemovedAndCounted) {
  {
    auto spool = Spool::Open(dir_, 1 << 20);
    ASSERT_TRUE(spool.ok()) << spool.status();
    for (uint64_t w : {31, 32, 33, 34}) ASSERT_TRUE(spool->Put(w, w, Payload(w, 500)).ok());
  }
  // Window 32: truncated (its size no longer matches its header): found at Open.
  std::string second = ReadRaw(PathOf(2));
  WriteRaw(PathOf(2), second.substr(0, 300));
  // Window 33: a payload byte flipped: found when read.
  std::string third = ReadRaw(PathOf(3));
  third[kSpoolHeaderSize + 10] ^= 1;
  WriteRaw(PathOf(3), third);

  auto spool = Spool::Open(dir_, 1 << 20);
  ASSERT_TRUE(spool.ok()) << spool.status();
  auto at_open = spool->TakeLosses();
  ASSERT_EQ(at_open.size(), 1u);
  EXPECT_EQ(at_open[0].window_id, 32u);
  EXPECT_EQ(at_open[0].samples, 32u);
  EXPECT_EQ(at_open[0].reason, "corrupt spool file");
  EXPECT_FALSE(std::filesystem::exists(PathOf(2)));

  EXPECT_THAT(Drain(*spool), ElementsAre(31, 34));
  auto when_read = spool->TakeLosses();
  ASSERT_EQ(when_read.size(), 1u);
  EXPECT_EQ(when_read[0].window_id, 33u);
  EXPECT_EQ(when_read[0].reason, "corrupt spool file");
  EXPECT_FALSE(std::filesystem::exists(PathOf(3)));
  EXPECT_EQ(spool->size_bytes(), 0u);
}

TEST_F(SpoolTest, OtherFilesAreLeftAloneAndNotCounted) {
  ASSERT_TRUE(Spool::Open(dir_, 1 << 20).ok());
  WriteRaw(dir_ + "/README", "notes");
  WriteRaw(dir_ + "/123.window", "not twenty digits");
  WriteRaw(dir_ + "/0000000000000000000x.window", "not digits");
  auto spool = Spool::Open(dir_, 1 << 20);
  ASSERT_TRUE(spool.ok()) << spool.status();
  EXPECT_EQ(spool->windows(), 0u);
  EXPECT_EQ(spool->size_bytes(), 0u);
  EXPECT_THAT(spool->TakeLosses(), IsEmpty());
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/README"));
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/123.window"));
}

TEST_F(SpoolTest, ALoweredCapEvictsOnOpen) {
  {
    auto spool = Spool::Open(dir_, 1 << 20);
    ASSERT_TRUE(spool.ok()) << spool.status();
    for (uint64_t w : {41, 42, 43}) ASSERT_TRUE(spool->Put(w, 1, Payload(w, 1000)).ok());
  }
  auto spool = Spool::Open(dir_, 2 * (kSpoolHeaderSize + 1000));
  ASSERT_TRUE(spool.ok()) << spool.status();
  auto losses = spool->TakeLosses();
  ASSERT_EQ(losses.size(), 1u);
  EXPECT_EQ(losses[0].window_id, 41u);
  EXPECT_THAT(losses[0].reason, ::testing::StartsWith("spool full (cap "));
  EXPECT_THAT(Drain(*spool), ElementsAre(42, 43));
}

TEST_F(SpoolTest, OneAgentPerDirectory) {
  auto first = Spool::Open(dir_, 1 << 20);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = Spool::Open(dir_, 1 << 20);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(second.status().message(), ::testing::HasSubstr("in use by another agent"));
  Spool moved = std::move(*first);  // the lock moves with the spool
  EXPECT_FALSE(Spool::Open(dir_, 1 << 20).ok());
}

}  // namespace
}  // namespace profcpu::fleet
