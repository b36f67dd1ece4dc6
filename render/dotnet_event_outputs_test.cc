// The .NET event profiles' files: folded stacks that sum the periods and
// name frames as folded_stacks.out does, and pprof files with the sample
// types go tool pprof knows (alloc_space, delay, ...).
#include "render/dotnet_event_outputs.h"

#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/file_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/profile.pb.h"  // generated from render/proto/profile.proto
#include "render/testing_dotnet_event_profiles.h"

namespace profcpu::render {
namespace {

namespace pb = ::perftools::profiles;
using fold::DotnetEventKind;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::string Gunzip(const std::string& data) {
  z_stream stream{};
  EXPECT_EQ(inflateInit2(&stream, 15 + 16), Z_OK);
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  std::string out;
  char buffer[4096];
  int result = Z_OK;
  while (result == Z_OK) {
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof(buffer);
    result = inflate(&stream, Z_NO_FLUSH);
    out.append(buffer, sizeof(buffer) - stream.avail_out);
  }
  EXPECT_EQ(result, Z_STREAM_END);
  inflateEnd(&stream);
  return out;
}

class DotnetEventOutputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/dotnet_event_outputs_test.XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override { (void)std::system(absl::StrCat("rm -rf ", dir_).c_str()); }

  std::string Read(const std::string& name) {
    return base::ReadFileBounded(absl::StrCat(dir_, "/", name), 1 << 24).value_or("");
  }
  bool Exists(const std::string& name) {
    return ::access(absl::StrCat(dir_, "/", name).c_str(), F_OK) == 0;
  }
  pb::Profile ReadPprof(const std::string& name) {
    pb::Profile profile;
    EXPECT_TRUE(profile.ParseFromString(Gunzip(Read(name)))) << name;
    return profile;
  }

  std::string dir_;
};

TEST_F(DotnetEventOutputsTest, KindsWithoutSamplesGetNoFiles) {
  const fold::DotnetEventProfiles profiles = testing::MakeDotnetEventProfiles(false);
  const auto kept = DotnetProfilesWithSamples(&profiles);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0]->kind, DotnetEventKind::kAlloc);
  EXPECT_EQ(kept[1]->kind, DotnetEventKind::kLockWait);
  EXPECT_THAT(DotnetProfilesWithSamples(nullptr), IsEmpty());

  std::vector<std::string> written;
  ASSERT_TRUE(WriteDotnetEventStacks(dir_, kept, {}, &written).ok());
  EXPECT_THAT(written, ElementsAre("alloc_stacks.out", "lock_wait_stacks.out"));
  EXPECT_FALSE(Exists("exception_stacks.out"));
}

// stackcollapse's "comm;outer;...;leaf N", N the sum of periods (bytes,
// microseconds, throws), sorted as folded_stacks.out is.
TEST_F(DotnetEventOutputsTest, FoldedStacksSumTheWeightsUnderTheProcessRoot) {
  const fold::DotnetEventProfiles profiles = testing::MakeDotnetEventProfiles(true);
  std::vector<std::string> written;
  ASSERT_TRUE(
      WriteDotnetEventStacks(dir_, DotnetProfilesWithSamples(&profiles), {}, &written).ok());
  EXPECT_THAT(written,
              ElementsAre("alloc_stacks.out", "lock_wait_stacks.out", "exception_stacks.out"));
  EXPECT_EQ(Read("alloc_stacks.out"),
            "EventsApp;EventsApp.Program::Main;EventsApp.Program::AllocBig;System.Byte[] 300000\n"
            "EventsApp;EventsApp.Program::Main;EventsApp.Program::AllocSmall;System.String 100000\n");
  EXPECT_EQ(Read("lock_wait_stacks.out"),
            "EventsApp;EventsApp.Other::Run;System.Threading.Monitor::Enter 250\n"
            "EventsApp;EventsApp.Worker::Run;System.Threading.Monitor::Enter 750\n");
  EXPECT_EQ(Read("exception_stacks.out"),
            "EventsApp;EventsApp.Program::Main;EventsApp.TestException 1\n"
            "EventsApp;EventsApp.Program::Thrower;EventsApp.TestException 2\n");
}

// The CPU folded file's naming options carry over: -threads' roots, "_[j]"
// on JIT frames when the palette asks for it.
TEST_F(DotnetEventOutputsTest, FoldedStacksNameFramesWithTheCpuFilesOptions) {
  const fold::DotnetEventProfiles profiles = testing::MakeDotnetEventProfiles(false);
  fold::FoldOptions cpu;
  cpu.include_tid = true;
  cpu.annotate_jit = true;
  cpu.event_filter = "cpu-clock";  // the CPU profile's event: not the events'
  std::vector<std::string> written;
  ASSERT_TRUE(
      WriteDotnetEventStacks(dir_, DotnetProfilesWithSamples(&profiles), cpu, &written).ok());
  EXPECT_EQ(Read("lock_wait_stacks.out"),
            "EventsApp-4242/12;EventsApp.Worker::Run_[j];System.Threading.Monitor::Enter_[j] 750\n"
            "EventsApp-4242/13;EventsApp.Other::Run_[j];System.Threading.Monitor::Enter_[j] 250\n");
}

TEST_F(DotnetEventOutputsTest, PprofFilesHaveTheKindsSampleTypes) {
  const fold::DotnetEventProfiles profiles = testing::MakeDotnetEventProfiles(true);
  PprofOptions run;
  run.start_unix_ns = 1'700'000'000'000'000'000;
  run.duration_ns = 2'000'000'000;
  run.comments = {"profcpu test"};
  std::vector<std::string> written;
  ASSERT_TRUE(WriteDotnetEventPprofs(dir_, DotnetProfilesWithSamples(&profiles), run, &written).ok());
  EXPECT_THAT(written, ElementsAre("alloc.pb.gz", "lock_wait.pb.gz", "exceptions.pb.gz"));

  auto types = [](const pb::Profile& p) {
    std::vector<std::string> out;
    for (const pb::ValueType& t : p.sample_type()) {
      out.push_back(absl::StrCat(p.string_table(t.type()), "/", p.string_table(t.unit())));
    }
    return out;
  };
  auto totals = [](const pb::Profile& p) {
    std::vector<int64_t> sums(p.sample_type_size(), 0);
    for (const pb::Sample& s : p.sample()) {
      for (int i = 0; i < s.value_size(); ++i) sums[i] += s.value(i);
    }
    return sums;
  };

  const pb::Profile alloc = ReadPprof("alloc.pb.gz");
  EXPECT_THAT(types(alloc), ElementsAre("alloc_objects/count", "alloc_space/bytes"));
  EXPECT_EQ(alloc.string_table(alloc.default_sample_type()), "alloc_space");
  EXPECT_THAT(totals(alloc), ElementsAre(4, 400'000));
  EXPECT_EQ(alloc.time_nanos(), run.start_unix_ns);
  EXPECT_EQ(alloc.duration_nanos(), run.duration_ns);
  EXPECT_EQ(alloc.period(), 0);
  // The leaf of the heaviest sample is the allocated type.
  const pb::Sample* heaviest = &alloc.sample(0);
  for (const pb::Sample& s : alloc.sample()) {
    if (s.value(1) > heaviest->value(1)) heaviest = &s;
  }
  const pb::Location& leaf = alloc.location(static_cast<int>(heaviest->location_id(0) - 1));
  ASSERT_EQ(leaf.line_size(), 1);
  EXPECT_EQ(alloc.string_table(alloc.function(static_cast<int>(leaf.line(0).function_id() - 1)).name()),
            "System.Byte[]");

  const pb::Profile lock = ReadPprof("lock_wait.pb.gz");
  EXPECT_THAT(types(lock), ElementsAre("contentions/count", "delay/nanoseconds"));
  EXPECT_EQ(lock.string_table(lock.default_sample_type()), "delay");
  EXPECT_THAT(totals(lock), ElementsAre(2, 1'000'000));  // 1,000 µs

  const pb::Profile thrown = ReadPprof("exceptions.pb.gz");
  EXPECT_THAT(types(thrown), ElementsAre("exceptions/count"));
  EXPECT_EQ(thrown.string_table(thrown.default_sample_type()), "exceptions");
  EXPECT_THAT(totals(thrown), ElementsAre(3));
  bool says_what = false;
  for (int64_t c : thrown.comment()) {
    says_what = says_what || thrown.string_table(c).rfind("Exceptions: ", 0) == 0;
  }
  EXPECT_TRUE(says_what);
}

TEST(DotnetEventOutputTest, EveryKindHasItsNames) {
  EXPECT_STREQ(DotnetEventOutputOf(DotnetEventKind::kAlloc).stacks_file, "alloc_stacks.out");
  EXPECT_STREQ(DotnetEventOutputOf(DotnetEventKind::kLockWait).stacks_file,
               "lock_wait_stacks.out");
  EXPECT_STREQ(DotnetEventOutputOf(DotnetEventKind::kException).stacks_file,
               "exception_stacks.out");
  EXPECT_STREQ(DotnetEventOutputOf(DotnetEventKind::kException).pprof_file, "exceptions.pb.gz");
  EXPECT_STREQ(DotnetEventOutputOf(DotnetEventKind::kLockWait).count_name, "microseconds");
}

}  // namespace
}  // namespace profcpu::render
