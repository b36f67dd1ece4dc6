#include "fold/stack_ends.h"

#include <string>
#include <utility>
#include <vector>

#include "fold/profile_test_util.h"
#include "fold/recording_summary.h"
#include "gtest/gtest.h"

namespace profcpu::fold {
namespace {

using testing::ProfileMaker;
using Modules = std::vector<std::pair<std::string, uint64_t>>;

TEST(IsThreadRootTest, NamesThreadStartsWithOrWithoutParameters) {
  for (const char* root : {"start_thread", "__libc_start_call_main", "clone3", "_start",
                           "ret_from_fork_asm", "execute_native_thread_routine",
                           "CorUnix::CPalThread::ThreadEntry(void*)"}) {
    EXPECT_TRUE(IsThreadRoot(root)) << root;
  }
  for (const char* other : {"main", "[unknown]", "", "start_thread_x", "__vfprintf_internal",
                            "(anonymous)", "coreclr_initialize"}) {
    EXPECT_FALSE(IsThreadRoot(other)) << other;
  }
}

// As in a real .NET recording (fp+cfi): most chains end at start_thread or
// __libc_start_call_main; some stop in unnamed libcoreclr code, past the
// frame-pointer walk's reach, or at a leaf with no caller at all.
TEST(CountStackEndsTest, CountsStacksWhoseOutermostFrameIsNoThreadRoot) {
  ProfileMaker m;
  const uint32_t start = m.Location(0x1000, false, "/usr/lib/libc.so.6", {{"start_thread"}});
  const uint32_t main = m.Location(0x1100, false, "/usr/lib/libc.so.6",
                                   {{"main", 0, true}, {"__libc_start_call_main"}});
  const uint32_t work = m.Location(0x2000, false, "/app", {{"Work"}});
  const uint32_t clr = m.Location(0x3000, false, "/usr/share/dotnet/libcoreclr.so", {});
  const uint32_t garbage = m.Location(0xdead, false, "", {});
  const uint32_t printf = m.Location(0x1200, false, "/usr/lib/libc.so.6", {{"__vfprintf_internal"}});
  const uint32_t kernel = m.Location(0xffff0000, true, "[kernel.kallsyms]", {{"ret_from_fork_asm"}});
  m.Sample("app", 1, 1, 0, 1, 1, "cpu-clock", {work, main});
  m.Sample("app", 1, 2, 0, 2, 1, "cpu-clock", {work, start});
  m.Sample("app", 1, 2, 0, 3, 1, "cpu-clock", {work, clr});
  m.Sample("app", 1, 2, 0, 4, 1, "cpu-clock", {work, clr});
  m.Sample("app", 1, 3, 0, 5, 1, "cpu-clock", {clr, garbage});
  m.Sample("app", 1, 3, 0, 6, 1, "cpu-clock", {printf});
  m.Sample("kworker", 9, 9, 0, 7, 1, "cpu-clock", {kernel});
  const StackEnds ends = CountStackEnds(m.profile());
  EXPECT_EQ(ends.samples, 7u);
  EXPECT_EQ(ends.cut_short, 4u);
  EXPECT_EQ(ends.cut_by_module, (Modules{{"/usr/share/dotnet/libcoreclr.so", 2},
                                         {"/usr/lib/libc.so.6", 1},
                                         {"[unknown]", 1}}));
  EXPECT_EQ(DescribeCutStacks(ends),
            ", 4 stacks cut short (2 in libcoreclr.so, 1 in libc.so.6, 1 elsewhere)");
  EXPECT_EQ(DescribeCutStacks(ends, 5),
            ", 4 stacks cut short (2 in libcoreclr.so, 1 in libc.so.6, 1 in [unknown])");
  EXPECT_EQ(DescribeCutStacks(StackEnds()), "");
}

// -mode wall roots every stack under [on-cpu] or [off-cpu]: the thread's
// root is the frame below.
TEST(CountStackEndsTest, LooksBelowWallModesRoots) {
  ProfileMaker m;
  const uint32_t start = m.Location(0x1000, false, "/usr/lib/libc.so.6", {{"start_thread"}});
  const uint32_t work = m.Location(0x2000, false, "/app", {{"Work"}});
  const uint32_t on_cpu = m.Location(0x1, false, "[profcpu]", {{kOnCpuFrame}});
  const uint32_t off_cpu = m.Location(0x2, false, "[profcpu]", {{kOffCpuFrame}});
  m.Sample("app", 1, 1, 0, 1, 1, "wall-time", {work, start, on_cpu});
  m.Sample("app", 1, 1, 0, 2, 1, "wall-time", {work, off_cpu});
  const StackEnds ends = CountStackEnds(m.profile());
  EXPECT_EQ(ends.cut_short, 1u);
  EXPECT_EQ(ends.cut_by_module, (Modules{{"/app", 1}}));
}

// std::thread's threads as Debian's libstdc++ leaves them to a frame-pointer
// walk: _M_run, then the unnamed thread routine, where the walk stops. An
// unnamed libstdc++ frame under anything else is still cut short.
TEST(CountStackEndsTest, StdThreadsRoutineUnderItsRunIsTheThreadsStart) {
  ProfileMaker m;
  const char* libstdcxx = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30";
  const uint32_t routine = m.Location(0x5000, false, libstdcxx, {});
  const uint32_t run = m.Location(
      0x2100, false, "/app",
      {{"std::thread::_State_impl<std::thread::_Invoker<std::tuple<void (*)()> > >::_M_run()"}});
  const uint32_t other = m.Location(0x2200, false, "/app", {{"Worker::Loop()"}});
  const uint32_t work = m.Location(0x2000, false, "/app", {{"Work"}});
  m.Sample("app", 1, 2, 0, 1, 1, "cpu-clock", {work, run, routine});
  m.Sample("app", 1, 2, 0, 2, 1, "cpu-clock", {work, other, routine});
  m.Sample("app", 1, 2, 0, 3, 1, "cpu-clock", {routine});
  const StackEnds ends = CountStackEnds(m.profile());
  EXPECT_EQ(ends.cut_short, 2u);
  EXPECT_EQ(ends.cut_by_module, (Modules{{libstdcxx, 2}}));
}

}  // namespace
}  // namespace profcpu::fold
