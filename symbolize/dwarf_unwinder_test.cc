#include "symbolize/dwarf_unwinder.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "symbolize/elf_symbols.h"

extern "C" int unwind_fixture_a(void (*capture)(void*), void* arg);

namespace profcpu::symbolize {
namespace {

constexpr uint64_t kRegsMask = 0xff01ff;  // AX..IP and R8..R15

// This process's executable mappings, replayed as a recording's would be.
AddressSpaceTracker OwnMappings() {
  AddressSpaceTracker tracker;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    std::string range, perms, offset, dev, inode, path;
    in >> range >> perms >> offset >> dev >> inode;
    std::getline(in >> std::ws, path);
    if (perms.size() < 3 || perms[2] != 'x') continue;
    std::vector<std::string> bounds = absl::StrSplit(range, '-');
    recording::Mmap m;
    m.pid = static_cast<uint32_t>(getpid());
    uint64_t start = 0, end = 0, off = 0;
    absl::SimpleHexAtoi(bounds[0], &start);
    absl::SimpleHexAtoi(bounds[1], &end);
    absl::SimpleHexAtoi(offset, &off);
    m.start = start;
    m.length = end - start;
    m.file_offset = off;
    absl::SimpleAtoi(inode, &m.inode);
    m.prot = PROT_READ | PROT_EXEC;
    m.filename = path.empty() ? "//anon" : path;
    tracker.OnMmap(m);
  }
  return tracker;
}

class OwnRoot : public ProcessFiles {
 public:
  OwnRoot() {
    auto root = base::RootDir::Open("/");
    if (root.ok()) root_ = *root;
  }
  std::shared_ptr<base::RootDir> RootFor(uint32_t pid) const override {
    return pid == static_cast<uint32_t>(getpid()) ? root_ : nullptr;
  }
  uint32_t NamespacePid(uint32_t pid) const override { return pid; }

 private:
  std::shared_ptr<base::RootDir> root_;
};

struct Capture {
  size_t max_stack = 65528;
  recording::Sample sample;
  bool whole_stack = false;
};

// What a perf sample with PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER
// holds: the registers (perf's order for kRegsMask) and the stack from sp up.
__attribute__((noinline)) void CaptureHere(void* arg) {
  auto* c = static_cast<Capture*>(arg);
  ucontext_t uc;
  getcontext(&uc);
  const greg_t* g = uc.uc_mcontext.gregs;
  c->sample.pid = static_cast<uint32_t>(getpid());
  c->sample.tid = static_cast<uint32_t>(gettid());
  c->sample.user_regs_abi = 2;
  c->sample.user_regs = {
      static_cast<uint64_t>(g[REG_RAX]), static_cast<uint64_t>(g[REG_RBX]),
      static_cast<uint64_t>(g[REG_RCX]), static_cast<uint64_t>(g[REG_RDX]),
      static_cast<uint64_t>(g[REG_RSI]), static_cast<uint64_t>(g[REG_RDI]),
      static_cast<uint64_t>(g[REG_RBP]), static_cast<uint64_t>(g[REG_RSP]),
      static_cast<uint64_t>(g[REG_RIP]), static_cast<uint64_t>(g[REG_R8]),
      static_cast<uint64_t>(g[REG_R9]),  static_cast<uint64_t>(g[REG_R10]),
      static_cast<uint64_t>(g[REG_R11]), static_cast<uint64_t>(g[REG_R12]),
      static_cast<uint64_t>(g[REG_R13]), static_cast<uint64_t>(g[REG_R14]),
      static_cast<uint64_t>(g[REG_R15])};
  pthread_attr_t attr;
  void* stack_addr = nullptr;
  size_t stack_size = 0;
  pthread_getattr_np(pthread_self(), &attr);
  pthread_attr_getstack(&attr, &stack_addr, &stack_size);
  pthread_attr_destroy(&attr);
  const uint64_t sp = static_cast<uint64_t>(g[REG_RSP]);
  const uint64_t top = reinterpret_cast<uint64_t>(stack_addr) + stack_size;
  size_t n = static_cast<size_t>(std::min<uint64_t>(c->max_stack, top - sp));
  c->whole_stack = n == top - sp;
  // Copied by the kernel (as perf copies a sample's stack), through
  // /proc/self/mem: a plain memcpy of other frames' bytes would trip
  // AddressSanitizer's redzones in the instrumented build.
  c->sample.user_stack.assign(n, '\0');
  int mem = ::open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
  ssize_t got = mem < 0 ? -1 : ::pread(mem, c->sample.user_stack.data(), n, static_cast<off_t>(sp));
  if (mem >= 0) ::close(mem);
  c->sample.user_stack.resize(got > 0 ? static_cast<size_t>(got) : 0);
}

int MainBias(struct dl_phdr_info* info, size_t, void* data) {
  *static_cast<uint64_t*>(data) = info->dlpi_addr;  // the first object is the executable
  return 1;
}

// Names an address: dladdr for shared objects' exported functions, else the
// test executable's own .symtab (its functions are not exported).
std::string NameOf(uint64_t address) {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(address), &info) != 0 && info.dli_sname != nullptr) {
    return info.dli_sname;
  }
  static std::unique_ptr<ElfSymbols> exe = [] {
    base::UniqueFd fd(::open("/proc/self/exe", O_RDONLY | O_CLOEXEC));
    auto symbols = ElfSymbols::FromFd(fd.get(), "test executable");
    return symbols.ok() ? std::move(*symbols) : nullptr;
  }();
  static uint64_t bias = [] {
    uint64_t b = 0;
    dl_iterate_phdr(&MainBias, &b);
    return b;
  }();
  if (exe == nullptr) return "?";
  std::optional<SymbolMatch> match = exe->LookupAddress(address - bias);
  return match.has_value() ? match->function : "?";
}

std::vector<std::string> Names(const UnwoundStack& stack) {
  std::vector<std::string> names;
  for (size_t i = 0; i < stack.ips.size(); ++i) {
    names.push_back(NameOf(i == 0 ? stack.ips[i] : stack.ips[i] - 1));
  }
  return names;
}

TEST(DwarfUnwinderTest, WalksCodeWithoutFramePointersToTheProcessStart) {
  Capture capture;
  unwind_fixture_a(&CaptureHere, &capture);
  AddressSpaceTracker spaces = OwnMappings();
  OwnRoot files;
  DwarfUnwinder unwinder(&files);
  UnwoundStack stack = unwinder.Unwind(capture.sample, kRegsMask, spaces);
  std::vector<std::string> names = Names(stack);
  SCOPED_TRACE(::testing::PrintToString(names));
  ASSERT_GE(names.size(), 5u);
  EXPECT_THAT(names[0], ::testing::HasSubstr("CaptureHere"));
  EXPECT_EQ(names[1], "unwind_fixture_c");
  EXPECT_EQ(names[2], "unwind_fixture_b");
  EXPECT_EQ(names[3], "unwind_fixture_a");
  EXPECT_THAT(names[4], ::testing::HasSubstr("WalksCodeWithoutFramePointers"));
  // The whole stack was copied: the walk ends at _start, not early.
  if (capture.whole_stack) {
    EXPECT_FALSE(stack.truncated) << ::testing::PrintToString(names);
    EXPECT_TRUE(std::find(names.begin(), names.end(), "main") != names.end());
  }
  EXPECT_EQ(unwinder.stats().stacks, 1u);
}

TEST(DwarfUnwinderTest, ShortStackCopyIsTruncatedAndSaysWhy) {
  Capture capture;
  capture.max_stack = 256;
  unwind_fixture_a(&CaptureHere, &capture);
  AddressSpaceTracker spaces = OwnMappings();
  OwnRoot files;
  DwarfUnwinder unwinder(&files);
  UnwoundStack stack = unwinder.Unwind(capture.sample, kRegsMask, spaces);
  EXPECT_TRUE(stack.truncated);
  ASSERT_FALSE(stack.ips.empty());
  EXPECT_THAT(NameOf(stack.ips[0]), ::testing::HasSubstr("CaptureHere"));
  EXPECT_LT(stack.ips.size(), 8u);
  EXPECT_EQ(unwinder.stats().truncated, 1u);
  EXPECT_EQ(unwinder.stats().stack_exhausted, 1u);
}

TEST(DwarfUnwinderTest, WithoutTheProcessFilesOnlyTheIpRemains) {
  Capture capture;
  unwind_fixture_a(&CaptureHere, &capture);
  AddressSpaceTracker spaces = OwnMappings();
  DwarfUnwinder unwinder(nullptr);
  UnwoundStack stack = unwinder.Unwind(capture.sample, kRegsMask, spaces);
  ASSERT_EQ(stack.ips.size(), 1u);
  EXPECT_TRUE(stack.truncated);
}

TEST(DwarfUnwinderTest, KernelThreadSamplesHaveNoUserStack) {
  recording::Sample sample;  // PERF_SAMPLE_REGS_ABI_NONE: no registers
  AddressSpaceTracker spaces;
  OwnRoot files;
  DwarfUnwinder unwinder(&files);
  UnwoundStack stack = unwinder.Unwind(sample, kRegsMask, spaces);
  EXPECT_TRUE(stack.ips.empty());
  EXPECT_FALSE(stack.truncated);
  EXPECT_EQ(unwinder.stats().stacks, 0u);
}

TEST(DwarfUnwinderTest, GarbageStackNeverCrashes) {
  Capture capture;
  unwind_fixture_a(&CaptureHere, &capture);
  AddressSpaceTracker spaces = OwnMappings();
  OwnRoot files;
  DwarfUnwinder unwinder(&files);
  uint32_t seed = 1;
  for (int round = 0; round < 200; ++round) {
    recording::Sample sample = capture.sample;
    for (char& c : sample.user_stack) {
      seed = seed * 1103515245u + 12345u;
      if ((seed >> 16) % 7 == 0) c = static_cast<char>(seed >> 24);
    }
    if (round % 3 == 0) sample.user_regs[8] ^= seed;  // a wild IP
    UnwoundStack stack = unwinder.Unwind(sample, kRegsMask, spaces);
    EXPECT_LE(stack.ips.size(), 512u);
  }
}

}  // namespace
}  // namespace profcpu::symbolize
