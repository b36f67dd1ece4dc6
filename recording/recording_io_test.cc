#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "base/file_io.h"
#include "gtest/gtest.h"
#include "recording/recording_reader.h"
#include "recording/recording_writer.h"

namespace profcpu::recording {
namespace {

std::string TempPath(const char* name) {
  return std::string(::testing::TempDir()) + "/" + name;
}

std::vector<Record> ReadAll(const std::string& path, bool* truncated) {
  auto reader = RecordingReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  std::vector<Record> records;
  while (true) {
    auto record = (*reader)->Next();
    EXPECT_TRUE(record.ok()) << record.status();
    if (!record.ok() || !record->has_value()) break;
    records.push_back(**record);
  }
  *truncated = (*reader)->truncated();
  return records;
}

Sample MakeSample(uint64_t i) {
  Sample s;
  s.time_ns = i;
  s.pid = 1;
  s.tid = 1;
  s.user_ips = {0x1000 + i, 0x2000};
  return s;
}

TEST(RecordingIoTest, ManyFramesReadBackInOrder) {
  std::string path = TempPath("many.rec");
  auto writer = RecordingWriter::Create(path);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Write(Header{}).ok());
  for (uint64_t i = 0; i < 100000; ++i) {
    ASSERT_TRUE((*writer)->Write(MakeSample(i)).ok());
    if (i % 7919 == 0) {
      ASSERT_TRUE((*writer)->Flush().ok());
    }
  }
  ASSERT_TRUE((*writer)->Close().ok());
  bool truncated = true;
  auto records = ReadAll(path, &truncated);
  EXPECT_FALSE(truncated);
  ASSERT_EQ(records.size(), 100001u);
  EXPECT_EQ(std::get<Sample>(records[100000]).time_ns, 99999u);
}

TEST(RecordingIoTest, FileCutMidFrameReadsUpToLastCompleteRecord) {
  std::string path = TempPath("cut.rec");
  {
    auto writer = RecordingWriter::Create(path);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->Write(Header{}).ok());
    for (uint64_t i = 0; i < 10; ++i) ASSERT_TRUE((*writer)->Write(MakeSample(i)).ok());
    ASSERT_TRUE((*writer)->Flush().ok());
    for (uint64_t i = 10; i < 5000; ++i) ASSERT_TRUE((*writer)->Write(MakeSample(i)).ok());
    ASSERT_TRUE((*writer)->Close().ok());
  }
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  ASSERT_EQ(::truncate(path.c_str(), st.st_size - 7), 0);
  bool truncated = false;
  auto records = ReadAll(path, &truncated);
  EXPECT_TRUE(truncated);
  EXPECT_GE(records.size(), 11u);  // at least the first flushed frame
  EXPECT_LT(records.size(), 5001u);
}

TEST(RecordingIoTest, GarbageIsDataLossNotACrash) {
  std::string path = TempPath("garbage.rec");
  ASSERT_TRUE(base::WriteFile(path, std::string(4096, '\x5a')).ok());
  auto reader = RecordingReader::Open(path);
  ASSERT_TRUE(reader.ok());
  auto record = (*reader)->Next();
  EXPECT_EQ(record.status().code(), absl::StatusCode::kDataLoss);
}

TEST(RecordingIoTest, EmptyFileIsDataLoss) {
  std::string path = TempPath("empty.rec");
  ASSERT_TRUE(base::WriteFile(path, "").ok());
  auto reader = RecordingReader::Open(path);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->Next().status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace profcpu::recording
