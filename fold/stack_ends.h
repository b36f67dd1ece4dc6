// Where the samples' stacks stop: at their thread's root (the first code a
// thread runs, such as start_thread or _start), or short of it. A stack cut
// short lacks its outermost callers (the frame-pointer walk met code without
// a frame record, a DWARF unwind ran out of stack copy, the kernel's depth
// limit); the frames it has are all there. Counted on the named profile, as
// the outputs hold it, so the count says what a user sees.
//
// The rule (docs/stacks.md): a stack is whole when its outermost frame's
// function is one of kThreadRoots (compared without a demangled parameter
// list), or when it is libstdc++'s unnamed thread routine under std::thread's
// _M_run (the only caller of _M_run; Debian's libstdc++ keeps no frame
// pointers, so walks stop there); else, an unnamed outermost frame included,
// it is cut short, and counted under the module its outermost frame is in.
#ifndef PROFCPU_FOLD_STACK_ENDS_H_
#define PROFCPU_FOLD_STACK_ENDS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "fold/profile.h"

namespace profcpu::fold {

// Functions a thread's stack starts from, outermost first as unwinders
// reach them on x86-64 Linux (checked on real recordings: frame-pointer
// chains end at glibc's start_thread or __libc_start_call_main, DWARF
// unwinds at clone3 or _start, kernel threads' at ret_from_fork_asm):
// glibc and musl process and thread starts, the loader's, libstdc++'s
// std::thread entry, .NET's thread entry, the kernel's fork return and idle
// entries.
inline constexpr absl::string_view kThreadRoots[] = {
    "_start", "__libc_start_main", "__libc_start_main_impl", "__libc_start_call_main",
    "start_thread", "clone", "clone3", "__clone", "__clone3", "__GI___clone",
    "__GI___clone3", "thread_start", "_dl_start", "_dl_start_user",
    "execute_native_thread_routine", "CorUnix::CPalThread::ThreadEntry",
    "ret_from_fork", "ret_from_fork_asm", "secondary_startup_64",
    "secondary_startup_64_no_verify", "common_startup_64", "x86_64_start_kernel",
    "x86_64_start_reservations", "start_kernel"};

// Whether `function` (a frame's demangled name) is one of kThreadRoots.
bool IsThreadRoot(absl::string_view function);

struct StackEnds {
  uint64_t samples = 0;    // samples looked at
  uint64_t cut_short = 0;  // whose outermost frame is not a thread root
  // Where the cut ones stopped: the module of their outermost frame (as
  // the symbolizer recorded it, "[unknown]" when no mapping covered it),
  // samples, most first, then by name.
  std::vector<std::pair<std::string, uint64_t>> cut_by_module;
};

// Looks at every sample's outermost frame, below -mode wall's [on-cpu] and
// [off-cpu] roots.
StackEnds CountStackEnds(const Profile& profile);

// The closing line's words: ", 18 stacks cut short (9 in libcoreclr.so, 6
// in [unknown], ...)", the first `shown` modules by file name; "" when none.
std::string DescribeCutStacks(const StackEnds& ends, size_t shown = 2);

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_STACK_ENDS_H_
