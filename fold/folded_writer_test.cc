#include "fold/folded_writer.h"

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "fold/folded_writer_order.h"
#include "fold/perf_script_writer.h"
#include "fold/profile_test_util.h"
#include "fold/stackcollapse.h"
#include "gtest/gtest.h"

namespace profcpu::fold {
namespace {

using testing::ProfileMaker;
using testing::TestFrame;

Profile MakeProfile() {
  ProfileMaker m;
  uint32_t k1 = m.Location(0xffffffff821f236b, true, "[kernel.kallsyms]",
                           {{"pv_native_safe_halt", 0xb}});
  uint32_t k2 = m.Location(0xffffffff81000010, true, "", {});
  uint32_t u1 = m.Location(0x55d0c0de1234, false, "/usr/bin/app",
                           {{"inner_fn", 0x10, true}, {"outer_fn(int)", 0x33}}, 1);
  uint32_t u2 = m.Location(0x7f0000001000, false, "/usr/lib/x86_64-linux-gnu/libc.so.6", {});
  uint32_t n1 = m.Location(0, false, "", {});
  uint32_t j1 = m.Location(0x7f1234567890, false, "/tmp/perf-42.map",
                           {{"System.Threading.Thread.Run()[Optimized]", 0x20}});
  uint32_t h1 = m.Location(0x400000, false, "/tmp/a (deleted)\n", {{"evil\nname\t(x)\r\xff", 0}});
  m.Sample("swapper", 0, 0, 0, 192274019000, 10101010, "cpu-clock", {k1});
  m.Sample("V8 Worker", 42, 43, 3, 192275000999, 10101010, "cpu-clock", {k2, u1, u2, n1});
  m.Sample("V8 Worker", 42, 44, 3, 192276000999, 10101010, "cpu-clock", {k2, u1, u2, n1});
  m.Sample("dotnet", 42, 42, 12, 193000000000, 1, "cpu-clock", {j1, h1});
  return std::move(m.profile());
}

TEST(FoldedWriterTest, FoldsRootFirstAndCountsSamples) {
  EXPECT_EQ(FormatFolded(FoldProfile(MakeProfile())),
            "V8_Worker;[unknown];[libc.so.6];outer_fn;inner_fn;[[kernel.kallsyms]] 2\n"
            "dotnet;evil?name?;System.Threading.Thread.Run 1\n"
            "swapper;pv_native_safe_halt 1\n");
}

TEST(FoldedWriterTest, FramesAreKeptSeparately) {
  FoldedProfile folded = FoldProfile(MakeProfile());
  ASSERT_EQ(folded.stacks.size(), 3u);
  EXPECT_EQ(folded.FrameNames(folded.stacks[0]),
            (std::vector<absl::string_view>{"V8_Worker", "[unknown]", "[libc.so.6]", "outer_fn",
                                      "inner_fn", "[[kernel.kallsyms]]"}));
  EXPECT_EQ(folded.stacks[0].count, 2u);
  EXPECT_EQ(folded.count_name, "samples");
}

TEST(FoldedWriterTest, Options) {
  FoldOptions options;
  options.include_tid = true;
  options.annotate_kernel = options.annotate_jit = true;
  options.include_addrs = true;
  EXPECT_EQ(FormatFolded(FoldProfile(MakeProfile(), options)),
            "V8_Worker-42/43;[unknown <0>];[libc.so.6 <7f0000001000>];outer_fn;inner_fn;"
            "[[kernel.kallsyms] <ffffffff81000010>]_[k] 1\n"
            "V8_Worker-42/44;[unknown <0>];[libc.so.6 <7f0000001000>];outer_fn;inner_fn;"
            "[[kernel.kallsyms] <ffffffff81000010>]_[k] 1\n"
            "dotnet-42/42;evil?name?;System.Threading.Thread.Run_[j] 1\n"
            "swapper-0/0;pv_native_safe_halt_[k] 1\n");
  options = {};
  options.include_pid = true;
  options.weight_by_period = true;
  EXPECT_EQ(FormatFolded(FoldProfile(MakeProfile(), options)),
            "V8_Worker-42;[unknown];[libc.so.6];outer_fn;inner_fn;[[kernel.kallsyms]] 20202020\n"
            "dotnet-42;evil?name?;System.Threading.Thread.Run 1\n"
            "swapper-0;pv_native_safe_halt 10101010\n");
}

TEST(FoldedWriterTest, OneCountServesFoldingsThatNameDifferently) {
  const Profile profile = MakeProfile();
  FoldOptions plain;
  plain.include_tid = true;
  plain.weight_by_period = true;
  FoldOptions annotated = plain;
  annotated.annotate_kernel = annotated.annotate_jit = true;
  const StackCounts counts = CountStacks(profile, plain);
  EXPECT_EQ(FormatFolded(FoldCounts(profile, counts, plain)),
            FormatFolded(FoldProfile(profile, plain)));
  const std::string marked = FormatFolded(FoldCounts(profile, counts, annotated));
  EXPECT_EQ(marked, FormatFolded(FoldProfile(profile, annotated)));
  EXPECT_NE(marked.find("_[k]"), std::string::npos) << marked;
  EXPECT_NE(marked.find("_[j]"), std::string::npos) << marked;
}

TEST(FoldedWriterTest, MergesStacksThatNameAlikeAndSortsByText) {
  ProfileMaker m;
  uint32_t a1 = m.Location(0x1000, false, "/bin/x", {{"f(int)", 0}});
  uint32_t a2 = m.Location(0x2000, false, "/bin/x", {{"f(long)", 0}});
  uint32_t b = m.Location(0x3000, false, "/bin/x", {{"a!b", 0}});
  uint32_t c = m.Location(0x4000, false, "/bin/x", {{"a", 0}});
  uint32_t d = m.Location(0x5000, false, "/bin/x", {{"b", 0}});
  m.Sample("xx", 1, 1, 0, 0, 1, "ev", {a1});
  m.Sample("xx", 1, 1, 0, 0, 1, "ev", {a2});
  m.Sample("xx", 1, 1, 0, 0, 1, "ev", {d, c});
  m.Sample("xx", 1, 1, 0, 0, 1, "ev", {b});
  // Joined text order: "xx;a!b" < "xx;a;b" although frame "a" < "a!b".
  EXPECT_EQ(FormatFolded(FoldProfile(m.profile())), "xx;a!b 1\nxx;a;b 1\nxx;f 2\n");
}

TEST(FoldedWriterTest, KeepsTheFirstEventUnlessTold) {
  ProfileMaker m;
  uint32_t f = m.Location(0x1000, false, "/bin/x", {{"f", 0}});
  uint32_t g = m.Location(0x2000, false, "/bin/x", {{"g", 0}});
  m.Sample("xx", 1, 1, 0, 0, 1, "cycles", {f});
  m.Sample("xx", 1, 1, 0, 0, 1, "instructions", {g});
  EXPECT_EQ(FormatFolded(FoldProfile(m.profile())), "xx;f 1\n");
  FoldOptions options;
  options.event_filter = "instructions";
  EXPECT_EQ(FormatFolded(FoldProfile(m.profile(), options)), "xx;g 1\n");
  EXPECT_EQ(FormatFolded(FoldProfile(Profile())), "");
}

// The design property: folding a Profile equals folding its perf script text
// with stackcollapse (byte-identical when counting periods as the script
// does; the same stacks when counting samples).
void ExpectSameAsStackcollapse(const Profile& profile, const std::string& label) {
  const std::string text = FormatPerfScript(profile);
  struct Variant {
    const char* name;
    bool pid, tid, kernel, jit, addrs;
  };
  for (const Variant& v : {Variant{"default", false, false, false, false, false},
                           Variant{"pid", true, false, false, false, false},
                           Variant{"tid", false, true, false, false, false},
                           Variant{"kernel", false, false, true, false, false},
                           Variant{"jit", false, false, false, true, false},
                           Variant{"all", false, false, true, true, false},
                           Variant{"addrs", false, false, false, false, true}}) {
    StackCollapseOptions collapse;
    collapse.include_pid = v.pid;
    collapse.include_tid = v.tid;
    collapse.annotate_kernel = v.kernel;
    collapse.annotate_jit = v.jit;
    collapse.include_addrs = v.addrs;
    FoldOptions fold;
    fold.include_pid = v.pid;
    fold.include_tid = v.tid;
    fold.annotate_kernel = v.kernel;
    fold.annotate_jit = v.jit;
    fold.include_addrs = v.addrs;
    fold.weight_by_period = true;
    const std::string want = CollapsePerfScriptText(text, collapse);
    EXPECT_EQ(FormatFolded(FoldProfile(profile, fold)), want) << label << " " << v.name;

    // Counting samples: the same stacks, in the same order.
    fold.weight_by_period = false;
    FoldedProfile by_samples = FoldProfile(profile, fold);
    std::vector<std::string> want_lines = absl::StrSplit(want, '\n', absl::SkipEmpty());
    ASSERT_EQ(by_samples.stacks.size(), want_lines.size()) << label << " " << v.name;
    for (size_t i = 0; i < want_lines.size(); ++i) {
      std::string stack = want_lines[i].substr(0, want_lines[i].rfind(' '));
      EXPECT_EQ(by_samples.JoinedText(by_samples.stacks[i]), stack) << label << " " << v.name;
    }
  }
}

TEST(FoldedWriterTest, MatchesStackcollapseOnItsPerfScript) {
  // MakeProfile() minus the swapper sample: the script reads its "0/0" as a
  // lone TID ("swapper-?"), where FoldProfile says "swapper-0".
  Profile profile = MakeProfile();
  profile.mutable_samples().erase(profile.mutable_samples().begin());
  ExpectSameAsStackcollapse(profile, "fixed");
}

// Random profiles with hostile names: whatever the names, both paths agree.
TEST(FoldedWriterTest, MatchesStackcollapseOnRandomProfiles) {
  const std::vector<std::string> atoms = {
      "f",  "Lcom/x/Y;", ".(", ").", "(", ")", " (", "(anonymous namespace)", ";", "\"", "'",
      "->", "-", ">", "[unknown]", "+0x1f", "_[i]", "_[j]", "_[k]", " ", "\t", "\n", "\r",
      "\xff", "\xc3\xa9", "::", "<", "vmlinux", "/tmp/perf-9.map", "/", "[", "]", "#", "0"};
  const std::vector<std::string> modules = {
      "[kernel.kallsyms]", "/boot/vmlinux", "/usr/lib/libc.so.6", "/tmp/perf-42.map", "",
      "[unknown]", "/x/a (deleted)", "[nf_tables]", "/tmp/perf-x.map", "we(ird)\n;mod"};
  const std::vector<std::string> comms = {"java", "javaws", "V8 WorkerThread", "dotnet",
                                          "x;y", "(sd-pam)", "kworker/0:1", "\xc3\xa9t\xc3\xa9"};
  const std::vector<std::string> events = {"cpu-clock", "cycles", "cycles:u"};
  std::mt19937 random(7);
  auto pick = [&random](const auto& from) { return from[random() % from.size()]; };
  for (int round = 0; round < 40; ++round) {
    ProfileMaker m;
    std::vector<uint32_t> locations;
    for (int i = 0; i < 30; ++i) {
      std::vector<TestFrame> frames;
      int count = static_cast<int>(random() % 4);  // 0: unnamed
      for (int f = 0; f < count; ++f) {
        std::string name;
        for (int n = static_cast<int>(random() % 6); n >= 0; --n) name += pick(atoms);
        frames.push_back({name, random() % 0x100, f + 1 < count});
      }
      locations.push_back(m.Location(random() % 2 ? random() : 0xffffffff81000000 + random(),
                                     random() % 4 == 0, pick(modules), frames,
                                     static_cast<uint8_t>(random() % 2)));
    }
    for (int s = 0; s < 60; ++s) {
      std::vector<uint32_t> stack;
      for (int n = static_cast<int>(random() % 8); n > 0; --n) stack.push_back(pick(locations));
      uint32_t pid = 1 + random() % 3;
      m.Sample(pick(comms), pid, pid + random() % 2, random() % 4, 1000000000ull * s,
               random() % 3 == 0 ? 0 : random() % 1000, round % 4 == 0 ? pick(events) : "cycles",
               stack);
    }
    ExpectSameAsStackcollapse(m.profile(), absl::StrCat("round ", round));
    if (HasFailure()) break;
  }
}

// Distinct deep stacks over names that are prefixes of one another, with
// the bytes around ';' after them (':' and ' ' sort before it, 'a' after):
// more stacks than one thread's run of the sort, so it splits.
FoldedProfile RandomDeepStacks(bool semicolon_comm) {
  const std::vector<std::string> names = {"f", "f:", "f::g", "f a", "fa", "f!", "g", "", "\xff",
                                          "f::", "g(int)"};
  std::mt19937 random(11);
  FoldedProfile folded;
  absl::flat_hash_set<std::string> texts;
  while (folded.stacks.size() < 40000) {
    std::vector<absl::string_view> frames;
    frames.push_back(semicolon_comm && random() % 2 ? "a;b" : "a");
    for (int depth = 1 + static_cast<int>(random() % 12); depth > 0; --depth) {
      frames.push_back(names[random() % names.size()]);
    }
    if (!texts.insert(absl::StrJoin(frames, ";")).second) continue;
    folded.AddStack(absl::MakeConstSpan(frames), 1 + random() % 5);
  }
  return folded;
}

TEST(FoldedWriterTest, SortsByJoinedTextOnAnyNumberOfThreads) {
  for (bool semicolon_comm : {false, true}) {
    for (int threads : {1, 4}) {
      FoldedProfile folded = RandomDeepStacks(semicolon_comm);
      SortByJoinedText(folded.names(), &folded.stacks, threads);
      for (size_t i = 1; i < folded.stacks.size(); ++i) {
        ASSERT_LT(folded.JoinedText(folded.stacks[i - 1]), folded.JoinedText(folded.stacks[i]))
            << "stack " << i << " threads " << threads << " semicolon " << semicolon_comm;
      }
    }
  }
}

TEST(FoldedWriterTest, PrintsTheSameBytesOnThreads) {
  FoldedProfile folded = RandomDeepStacks(false);
  folded.count_unit = 0.01;  // counts with decimals too
  const std::string serial = FormatFolded(folded, 1);
  EXPECT_EQ(FormatFolded(folded, 3), serial);
  EXPECT_EQ(FormatFolded(folded, 16), serial);
  folded.differential = true;
  EXPECT_NE(FormatFolded(folded, 1), serial);
  EXPECT_EQ(FormatFolded(folded, 5), FormatFolded(folded, 1));
}

// Enough samples that FoldCounts names and sorts in several tasks: the
// same stacks and counts on any number of threads, each text once
// (locations that name alike merged), in text order.
TEST(FoldedWriterTest, FoldsTheSameOnThreads) {
  ProfileMaker m;
  std::mt19937 random(5);
  std::vector<uint32_t> locations;
  for (int i = 0; i < 40; ++i) {
    // Several addresses per function: stacks of different locations name alike.
    locations.push_back(m.Location(0x1000 + 16 * i, false, "/bin/x",
                                   {{absl::StrCat("f", i % 13, i % 3 == 0 ? "::g" : ""), 0}}));
  }
  for (int s = 0; s < 30000; ++s) {
    std::vector<uint32_t> stack;
    for (int n = 1 + static_cast<int>(random() % 24); n > 0; --n) {
      stack.push_back(locations[random() % locations.size()]);
    }
    const uint32_t pid = 1 + random() % 2;
    m.Sample(pid == 1 ? "one" : "two", pid, pid, 0, 1000ull * s, 1, "cycles", stack);
  }
  FoldOptions one_thread;
  const FoldedProfile serial = FoldProfile(m.profile(), one_thread);
  FoldOptions four_threads;
  four_threads.threads = 4;
  const FoldedProfile split = FoldProfile(m.profile(), four_threads);
  EXPECT_EQ(FormatFolded(split, 4), FormatFolded(serial));
  ASSERT_GT(serial.stacks.size(), 2 * 8192u);  // the sort split
  uint64_t total = 0;
  for (size_t i = 0; i < serial.stacks.size(); ++i) {
    total += serial.stacks[i].count;
    if (i > 0) {
      ASSERT_LT(serial.JoinedText(serial.stacks[i - 1]), serial.JoinedText(serial.stacks[i]));
    }
  }
  EXPECT_EQ(total, 30000u);
}

}  // namespace
}  // namespace profcpu::fold
