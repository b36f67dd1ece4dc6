#include "fold/unknown_frames.h"

#include "gtest/gtest.h"

namespace profcpu::fold {
namespace {

using symbolize::CodeKind;

// A location in `module`, named `function` ("" leaves it unknown).
uint32_t Add(Profile* profile, uint64_t value, const std::string& module,
             const std::string& function) {
  Location location;
  location.address = value;
  location.code = {CodeKind::kNative, 1, value};
  symbolize::Symbolization s;
  s.module = module;
  if (!function.empty()) s.frames.emplace_back().function = function;
  profile->mutable_symbols().Insert(location.code, std::move(s));
  return profile->InternLocation(location);
}

void AddSamples(Profile* profile, const std::vector<uint32_t>& stack, int times) {
  Sample sample;
  sample.stack = profile->InternStack(stack);
  for (int i = 0; i < times; ++i) profile->AddSample(sample);
}

TEST(UnknownFramesTest, CountsFramesOfSamplesPerModuleMostFirst) {
  Profile profile;
  const uint32_t named = Add(&profile, 1, "/usr/bin/app", "main");
  const uint32_t stdcxx = Add(&profile, 2, "/usr/lib/libstdc++.so.6", "");
  const uint32_t jit = Add(&profile, 3, "//anon", "");
  Location nowhere;  // never symbolized: no module at all
  nowhere.code = {CodeKind::kProcess, 7, 0x1234};
  const uint32_t unmapped = profile.InternLocation(nowhere);
  AddSamples(&profile, {named, stdcxx}, 5);
  AddSamples(&profile, {jit, stdcxx, unmapped}, 2);

  const UnknownFrames unknown = CountUnknownFrames(profile);
  EXPECT_EQ(unknown.total, 5u + 2u * 3u);
  ASSERT_EQ(unknown.by_module.size(), 3u);
  EXPECT_EQ(unknown.by_module[0], (std::pair<std::string, uint64_t>{"/usr/lib/libstdc++.so.6", 7}));
  // Ties by name.
  EXPECT_EQ(unknown.by_module[1], (std::pair<std::string, uint64_t>{"//anon", 2}));
  EXPECT_EQ(unknown.by_module[2], (std::pair<std::string, uint64_t>{"[unknown]", 2}));
  // libstdc++'s unnamed frame is in every sample, once, next to the root.
  EXPECT_EQ(unknown.samples, 7u);
  EXPECT_EQ(unknown.top_samples, 7u);
  EXPECT_EQ(unknown.top_most_in_a_sample, 1u);
  EXPECT_TRUE(unknown.top_at_thread_start);
  EXPECT_EQ(DescribeUnknownFrames(unknown),
            ", 11 unknown frames (one per sample, at thread start, 7 in libstdc++.so.6, which has "
            "no symbols here: profcpu.log says how to name it)");
}

TEST(UnknownFramesTest, SaysInWhatShareOfSamplesALibrarysFramesAreUnnamed) {
  Profile profile;
  const uint32_t main = Add(&profile, 1, "/usr/bin/app", "main");
  const uint32_t start = Add(&profile, 2, "/lib/libc.so.6", "__libc_start_main");
  const uint32_t a = Add(&profile, 3, "/usr/bin/app", "a");
  const uint32_t b = Add(&profile, 4, "/usr/bin/app", "b");
  const uint32_t lib = Add(&profile, 5, "/usr/lib/libz.so.1", "");
  AddSamples(&profile, {lib, b, a, main, start}, 3);  // deep in the stack
  AddSamples(&profile, {b, a, main, start}, 5);
  UnknownFrames unknown = CountUnknownFrames(profile);
  EXPECT_EQ(unknown.top_samples, 3u);
  EXPECT_FALSE(unknown.top_at_thread_start);
  EXPECT_EQ(DescribeUnknownFrames(unknown),
            ", 3 unknown frames (one in 3 of 8 samples, all in libz.so.1, which has no symbols "
            "here: profcpu.log says how to name it)");
  // Several unnamed frames of it in one sample: the plain count.
  AddSamples(&profile, {lib, lib, main}, 1);
  unknown = CountUnknownFrames(profile);
  EXPECT_EQ(unknown.top_most_in_a_sample, 2u);
  EXPECT_EQ(DescribeUnknownFrames(unknown), ", 5 unknown frames (all in libz.so.1)");
}

TEST(UnknownFramesTest, DescribesNoneAllAndSpecialModules) {
  EXPECT_EQ(DescribeUnknownFrames({}), ", 0 unknown frames");
  EXPECT_EQ(DescribeUnknownFrames({4, {{"/lib/libc.so.6", 4}}}),
            ", 4 unknown frames (all in libc.so.6)");
  EXPECT_EQ(DescribeUnknownFrames({4, {{"//anon", 3}, {"/x", 1}}}),
            ", 4 unknown frames (3 in //anon)");
  EXPECT_EQ(DescribeUnknownFrames({1, {{"/", 1}}}), ", 1 unknown frames (all in /)");
}

TEST(UnknownFramesTest, LocationsOutsideSamplesDoNotCount) {
  Profile profile;
  Add(&profile, 1, "/lib/unused.so", "");
  const uint32_t named = Add(&profile, 2, "/usr/bin/app", "main");
  AddSamples(&profile, {named}, 3);
  const UnknownFrames unknown = CountUnknownFrames(profile);
  EXPECT_EQ(unknown.total, 0u);
  EXPECT_TRUE(unknown.by_module.empty());
}

}  // namespace
}  // namespace profcpu::fold
