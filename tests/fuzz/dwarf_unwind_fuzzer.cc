// -callgraph dwarf samples (recording-format.md): the user registers and the
// copy of the user stack are the target's memory, hostile, and the DWARF
// unwinder (symbolize/dwarf_unwinder.h) walks them with the CFI of real files.
// The base sample is a real one, captured once from this process through a
// chain of calls (as perf copies a sample's stack); each input patches it:
//   byte 0: how much of the stack copy to keep (in 1/255ths)
//   then (u16 offset, u8 value) triples into registers + stack bytes,
// so the walk meets real code with corrupted return addresses, frame sizes,
// saved registers and a stack cut short. Checks: no crash, at most
// max_frames frames, the first frame is the sampled IP.
#include <fcntl.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "base/file_io.h"
#include "base/rooted_open.h"
#include "symbolize/dwarf_unwinder.h"
#include "tests/fuzz/fuzz_support.h"

namespace symbolize = profcpu::symbolize;
namespace recording = profcpu::recording;
using profcpu::fuzz::Check;

namespace {

constexpr uint64_t kRegsMask = 0xff01ff;  // AX..IP and R8..R15, perf's order
constexpr size_t kRegs = 17;
constexpr size_t kIp = 8;

// This process's executable mappings, as the recording's MMAP2 records say,
// and the top of the main thread's stack (the end of "[stack]"), where a
// stack copy ends.
struct OwnMaps {
  symbolize::AddressSpaceTracker code;
  uint64_t stack_top = 0;
};

OwnMaps ReadOwnMaps() {
  OwnMaps own;
  auto maps = profcpu::base::ReadFileBounded("/proc/self/maps", 16 << 20);
  Check(maps.ok(), "cannot read /proc/self/maps");
  for (absl::string_view line : absl::StrSplit(*maps, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    std::vector<absl::string_view> bounds = absl::StrSplit(f[0], '-');
    uint64_t start = 0, end = 0, offset = 0;
    if (f.size() < 5 || f[1].size() < 3 || bounds.size() != 2 ||
        !absl::SimpleHexAtoi(bounds[0], &start) || !absl::SimpleHexAtoi(bounds[1], &end) ||
        !absl::SimpleHexAtoi(f[2], &offset)) {
      continue;
    }
    if (f.size() > 5 && f[5] == "[stack]") own.stack_top = end;
    if (f[1][2] != 'x') continue;
    recording::Mmap m;
    m.pid = static_cast<uint32_t>(getpid());
    m.start = start;
    m.length = end - start;
    m.file_offset = offset;
    if (!absl::SimpleAtoi(f[4], &m.inode)) m.inode = 0;
    m.prot = PROT_READ | PROT_EXEC;
    m.filename = f.size() > 5 ? std::string(f[5]) : "//anon";
    own.code.OnMmap(m);
  }
  return own;
}

class OwnRoot : public symbolize::ProcessFiles {
 public:
  OwnRoot() {
    auto root = profcpu::base::RootDir::Open("/");
    Check(root.ok(), "cannot open / as a RootDir");
    root_ = *root;
  }
  std::shared_ptr<profcpu::base::RootDir> RootFor(uint32_t pid) const override {
    return pid == static_cast<uint32_t>(getpid()) ? root_ : nullptr;
  }
  uint32_t NamespacePid(uint32_t pid) const override { return pid; }

 private:
  std::shared_ptr<profcpu::base::RootDir> root_;
};

recording::Sample g_base;

// Registers and stack from here up, copied by the kernel through
// /proc/self/mem (a memcpy of other frames would trip ASan's redzones).
__attribute__((noinline)) void CaptureHere(uint64_t stack_top) {
  ucontext_t uc;
  getcontext(&uc);
  const greg_t* g = uc.uc_mcontext.gregs;
  g_base.pid = static_cast<uint32_t>(getpid());
  g_base.tid = static_cast<uint32_t>(gettid());
  g_base.user_regs_abi = 2;
  for (int reg : {REG_RAX, REG_RBX, REG_RCX, REG_RDX, REG_RSI, REG_RDI, REG_RBP, REG_RSP, REG_RIP,
                  REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15}) {
    g_base.user_regs.push_back(static_cast<uint64_t>(g[reg]));
  }
  const uint64_t sp = static_cast<uint64_t>(g[REG_RSP]);
  Check(sp < stack_top, "not running on the main thread's stack");
  size_t n = static_cast<size_t>(std::min<uint64_t>(recording::kMaxUserStack, stack_top - sp));
  g_base.user_stack.assign(n, '\0');
  profcpu::base::UniqueFd mem(::open("/proc/self/mem", O_RDONLY | O_CLOEXEC));
  ssize_t got = mem.valid() ? ::pread(mem.get(), g_base.user_stack.data(), n, static_cast<off_t>(sp))
                            : -1;
  g_base.user_stack.resize(got > 0 ? static_cast<size_t>(got) : 0);
}
__attribute__((noinline)) void Middle(int depth, uint64_t stack_top) {
  if (depth == 0) {
    CaptureHere(stack_top);
  } else {
    Middle(depth - 1, stack_top);
  }
  asm volatile("" ::: "memory");  // not a tail call: each level keeps its frame
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static OwnMaps* own = new OwnMaps(ReadOwnMaps());
  static const bool captured = (Middle(4, own->stack_top), true);
  static OwnRoot* files = new OwnRoot();
  static symbolize::DwarfUnwinder* unwinder = new symbolize::DwarfUnwinder(files);
  Check(captured && g_base.user_regs.size() == kRegs, "capturing the base sample failed");

  recording::Sample sample = g_base;
  if (size > 0) {
    sample.user_stack.resize(sample.user_stack.size() * data[0] / 255);
  }
  const size_t reg_bytes = kRegs * sizeof(uint64_t);
  for (size_t i = 1; i + 3 <= size; i += 3) {
    size_t offset = (data[i] | data[i + 1] << 8) % (reg_bytes + std::max<size_t>(1, sample.user_stack.size()));
    if (offset < reg_bytes) {
      reinterpret_cast<uint8_t*>(sample.user_regs.data())[offset] = data[i + 2];
    } else if (offset - reg_bytes < sample.user_stack.size()) {
      sample.user_stack[offset - reg_bytes] = static_cast<char>(data[i + 2]);
    }
  }
  symbolize::UnwoundStack stack = unwinder->Unwind(sample, kRegsMask, own->code);
  Check(stack.ips.size() <= symbolize::DwarfUnwinderOptions().max_frames,
        "more frames than max_frames");
  Check(stack.ips.empty() || stack.ips[0] == sample.user_regs[kIp],
        "the first frame is not the sampled IP");
  if (size == 1 && data[0] == 255) {
    // The real sample, untouched: the walk must get through the Middle()
    // chain, or the fuzzer is exercising nothing.
    Check(stack.ips.size() >= 7, "the unpatched real stack did not unwind");
  }
  return 0;
}
