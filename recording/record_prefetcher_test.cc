#include "recording/record_prefetcher.h"

#include <string>
#include <utility>

#include "base/file_io.h"
#include "gtest/gtest.h"
#include "recording/recording_writer.h"

namespace profcpu::recording {
namespace {

std::string WriteSamples(const char* name, uint64_t count) {
  std::string path = std::string(::testing::TempDir()) + "/" + name;
  auto writer = RecordingWriter::Create(path);
  EXPECT_TRUE(writer.ok());
  EXPECT_TRUE((*writer)->Write(Header{}).ok());
  for (uint64_t i = 0; i < count; ++i) {
    Sample s;
    s.time_ns = i;
    s.pid = s.tid = 1;
    s.user_ips = {0x1000 + i};
    EXPECT_TRUE((*writer)->Write(s).ok());
  }
  EXPECT_TRUE((*writer)->Close().ok());
  return path;
}

// Every record, in order, across many batches, then an empty batch.
TEST(RecordPrefetcherTest, GivesEveryRecordInOrder) {
  const std::string path = WriteSamples("prefetch.rec", 10000);
  auto reader = RecordingReader::Open(path);
  ASSERT_TRUE(reader.ok());
  RecordPrefetcher records(reader->get());
  uint64_t next_time = 0;
  bool header = false;
  for (auto batch = records.NextBatch(); !batch.empty(); batch = records.NextBatch()) {
    for (const Record& record : batch) {
      if (std::holds_alternative<Header>(record)) {
        EXPECT_FALSE(header);
        header = true;
        continue;
      }
      EXPECT_EQ(std::get<Sample>(record).time_ns, next_time++);
    }
  }
  EXPECT_TRUE(header);
  EXPECT_EQ(next_time, 10000u);
  EXPECT_TRUE(records.status().ok());
  EXPECT_TRUE(records.NextBatch().empty());  // and stays at the end
}

// A reader's error arrives after the records before it.
TEST(RecordPrefetcherTest, ReportsTheReadersError) {
  const std::string path = WriteSamples("prefetch_bad.rec", 100);
  auto bytes = base::ReadFileBounded(path, 1 << 20);
  ASSERT_TRUE(bytes.ok());
  std::string corrupt = std::string("\x28\xb5\x2f\xfd", 4) + std::string(64, '\xff');
  ASSERT_TRUE(base::WriteFile(path, *bytes + corrupt).ok());
  auto reader = RecordingReader::Open(path);
  ASSERT_TRUE(reader.ok());
  RecordPrefetcher records(reader->get());
  size_t read = 0;
  for (auto batch = records.NextBatch(); !batch.empty(); batch = records.NextBatch()) {
    read += batch.size();
  }
  EXPECT_EQ(read, 101u);
  EXPECT_FALSE(records.status().ok());
}

// Leaving early stops the reading thread.
TEST(RecordPrefetcherTest, StopsWhenDestroyedEarly) {
  const std::string path = WriteSamples("prefetch_early.rec", 50000);
  auto reader = RecordingReader::Open(path);
  ASSERT_TRUE(reader.ok());
  RecordPrefetcher records(reader->get());
  EXPECT_FALSE(records.NextBatch().empty());
}

// The reading thread's CPU time, for the parallel replay's log line: none
// before it starts, some once it has decoded 200k samples, never less later.
TEST(RecordPrefetcherTest, TellsTheDecodingThreadsCpuTime) {
  const std::string path = WriteSamples("prefetch_cpu.rec", 200000);
  auto reader = RecordingReader::Open(path);
  ASSERT_TRUE(reader.ok());
  RecordPrefetcher records(reader->get());
  double last = 0;
  for (auto batch = records.NextBatch(); !batch.empty(); batch = records.NextBatch()) {
    const double now = records.decode_cpu_seconds();
    EXPECT_GE(now, last);
    last = now;
    records.Recycle(std::move(batch));
  }
  EXPECT_GT(records.decode_cpu_seconds(), 0);
  EXPECT_LT(records.decode_cpu_seconds(), 60);
}

}  // namespace
}  // namespace profcpu::recording
