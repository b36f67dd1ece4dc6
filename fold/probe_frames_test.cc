#include "fold/probe_frames.h"

#include "fold/profile_test_util.h"
#include "gtest/gtest.h"

namespace profcpu::fold {
namespace {

using testing::ProfileMaker;

struct Frames {
  uint32_t traceiter, schedule, read, main, off_cpu_root, on_cpu_root, user_bpf_prog;
};

Frames AddFrames(ProfileMaker* maker) {
  Frames f;
  const std::string kernel = "[kernel.kallsyms]";
  f.traceiter = maker->Location(0xffff1000, true, kernel, {{"__traceiter_sched_switch"}});
  f.schedule = maker->Location(0xffff2000, true, kernel, {{"__schedule"}});
  f.read = maker->Location(0xffff3000, true, kernel, {{"ksys_read"}});
  f.main = maker->Location(0x1000, false, "/app", {{"main"}});
  f.off_cpu_root = maker->Location(1, false, "[profcpu]", {{"[off-cpu]"}});
  f.on_cpu_root = maker->Location(0, false, "[profcpu]", {{"[on-cpu]"}});
  // A user-space function that merely has such a name stays.
  f.user_bpf_prog = maker->Location(0x2000, false, "/app", {{"bpf_prog_load_file"}});
  return f;
}

std::vector<std::string> Leaves(const Profile& profile) {
  std::vector<std::string> leaves;
  for (const Sample& s : profile.samples()) {
    const Location& leaf = profile.location(profile.stack(s.stack).front());
    leaves.push_back(profile.symbols().Find(leaf.code)->frames.front().function);
  }
  return leaves;
}

TEST(ProbeFramesTest, RecognisesTheTracingMachinery) {
  EXPECT_TRUE(IsProbeFunction("__traceiter_sched_switch"));
  EXPECT_TRUE(IsProbeFunction("__bpf_trace_sched_switch"));
  EXPECT_TRUE(IsProbeFunction("bpf_trace_run4"));
  EXPECT_TRUE(IsProbeFunction("bpf_prog_6deef7357e7b4530_on_switch"));
  EXPECT_FALSE(IsProbeFunction("__schedule"));
  EXPECT_FALSE(IsProbeFunction("trace_sched_switch_hook"));
  EXPECT_FALSE(IsProbeFunction(""));
}

TEST(ProbeFramesTest, OffCpuModeTrimsEverySampleOnlyAtTheKernelLeaf) {
  ProfileMaker maker;
  const Frames f = AddFrames(&maker);
  maker.Sample("app", 1, 1, 0, 10, 5, "offcpu-time", {f.traceiter, f.schedule, f.read, f.main});
  maker.Sample("app", 1, 1, 0, 20, 5, "offcpu-time", {f.schedule, f.read, f.main});
  maker.Sample("app", 1, 1, 0, 30, 5, "offcpu-time", {f.user_bpf_prog, f.main});
  Profile& profile = maker.profile();
  EXPECT_EQ(TrimProbeFrames(/*all_off_cpu=*/true, &profile), 1u);
  EXPECT_EQ(Leaves(profile),
            (std::vector<std::string>{"__schedule", "__schedule", "bpf_prog_load_file"}));
  // The first two samples now share one stack.
  EXPECT_EQ(profile.samples()[0].stack, profile.samples()[1].stack);
  // Again: nothing left to trim.
  EXPECT_EQ(TrimProbeFrames(true, &profile), 0u);
}

TEST(ProbeFramesTest, WallModeTrimsOnlyUnderOffCpu) {
  ProfileMaker maker;
  const Frames f = AddFrames(&maker);
  maker.Sample("app", 1, 1, 0, 10, 5, "wall-time",
               {f.traceiter, f.schedule, f.read, f.main, f.off_cpu_root});
  // On the CPU inside the tracepoint iterator: real time, kept.
  maker.Sample("app", 1, 1, 0, 20, 5, "wall-time", {f.traceiter, f.main, f.on_cpu_root});
  Profile& profile = maker.profile();
  EXPECT_EQ(TrimProbeFrames(/*all_off_cpu=*/false, &profile), 1u);
  EXPECT_EQ(Leaves(profile), (std::vector<std::string>{"__schedule", "__traceiter_sched_switch"}));
}

}  // namespace
}  // namespace profcpu::fold
