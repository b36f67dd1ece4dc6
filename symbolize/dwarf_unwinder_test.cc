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
#include <memory>
#include <thread>
#include <fstream>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "symbolize/elf_symbols.h"
#include "symbolize/libunwind_unwinder.h"

extern "C" int unwind_fixture_a(void (*capture)(void*), void* arg);
extern "C" int unwind_fixture_bp_table(void (*capture)(const ucontext_t*, void*), void* arg);
extern "C" const unsigned long kUnwindFixtureTable[4];

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
void CaptureContext(const ucontext_t* uc, void* arg);

__attribute__((noinline)) void CaptureHere(void* arg) {
  ucontext_t uc;
  getcontext(&uc);
  CaptureContext(&uc, arg);
}

// Fills a Capture from `uc`, taken in a frame at or above this one's caller.
__attribute__((noinline)) void CaptureContext(const ucontext_t* uc, void* arg) {
  auto* c = static_cast<Capture*>(arg);
  const greg_t* g = uc->uc_mcontext.gregs;
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

// Every known answer below holds for both CFI unwinders: libdwfl's, which
// profcpu uses, and libunwind's, which docs/unwinders.md compares with it.
template <typename Unwinder>
class CfiUnwinderTest : public ::testing::Test {};
template <typename Unwinder>
class LeafRepairTest : public ::testing::Test {};
class UnwinderNames {
 public:
  template <typename T>
  static std::string GetName(int) {
    return std::is_same_v<T, DwarfUnwinder> ? "libdwfl" : "libunwind";
  }
};
using Unwinders = ::testing::Types<DwarfUnwinder, LibunwindUnwinder>;
TYPED_TEST_SUITE(CfiUnwinderTest, Unwinders, UnwinderNames);
TYPED_TEST_SUITE(LeafRepairTest, Unwinders, UnwinderNames);

std::vector<std::string> Names(const UnwoundStack& stack) {
  std::vector<std::string> names;
  for (size_t i = 0; i < stack.ips.size(); ++i) {
    names.push_back(NameOf(i == 0 ? stack.ips[i] : stack.ips[i] - 1));
  }
  return names;
}

TYPED_TEST(CfiUnwinderTest, WalksCodeWithoutFramePointersToTheProcessStart) {
  Capture capture;
  unwind_fixture_a(&CaptureHere, &capture);
  AddressSpaceTracker spaces = OwnMappings();
  OwnRoot files;
  TypeParam unwinder(&files);
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

// The second walk of a stack meets what the first one cached (libunwind
// caches each IP's rules and then skips looking the CFI up): same frames.
TYPED_TEST(CfiUnwinderTest, AStackUnwoundAgainGivesTheSameFrames) {
  Capture capture;
  unwind_fixture_a(&CaptureHere, &capture);
  AddressSpaceTracker spaces = OwnMappings();
  OwnRoot files;
  TypeParam unwinder(&files);
  UnwoundStack first = unwinder.Unwind(capture.sample, kRegsMask, spaces);
  UnwoundStack second = unwinder.Unwind(capture.sample, kRegsMask, spaces);
  EXPECT_GE(first.ips.size(), 5u);
  EXPECT_EQ(second.ips, first.ips);
  EXPECT_EQ(second.truncated, first.truncated);
}

TYPED_TEST(CfiUnwinderTest, ShortStackCopyIsTruncatedAndSaysWhy) {
  Capture capture;
  capture.max_stack = 256;
  unwind_fixture_a(&CaptureHere, &capture);
  AddressSpaceTracker spaces = OwnMappings();
  OwnRoot files;
  TypeParam unwinder(&files);
  UnwoundStack stack = unwinder.Unwind(capture.sample, kRegsMask, spaces);
  EXPECT_TRUE(stack.truncated);
  ASSERT_FALSE(stack.ips.empty());
  EXPECT_THAT(NameOf(stack.ips[0]), ::testing::HasSubstr("CaptureHere"));
  EXPECT_LT(stack.ips.size(), 8u);
  EXPECT_EQ(unwinder.stats().truncated, 1u);
  EXPECT_EQ(unwinder.stats().stack_exhausted, 1u);
}

TYPED_TEST(CfiUnwinderTest, WithoutTheProcessFilesOnlyTheIpRemains) {
  Capture capture;
  unwind_fixture_a(&CaptureHere, &capture);
  AddressSpaceTracker spaces = OwnMappings();
  TypeParam unwinder(nullptr);
  UnwoundStack stack = unwinder.Unwind(capture.sample, kRegsMask, spaces);
  ASSERT_EQ(stack.ips.size(), 1u);
  EXPECT_TRUE(stack.truncated);
}

TYPED_TEST(CfiUnwinderTest, KernelThreadSamplesHaveNoUserStack) {
  recording::Sample sample;  // PERF_SAMPLE_REGS_ABI_NONE: no registers
  AddressSpaceTracker spaces;
  OwnRoot files;
  TypeParam unwinder(&files);
  UnwoundStack stack = unwinder.Unwind(sample, kRegsMask, spaces);
  EXPECT_TRUE(stack.ips.empty());
  EXPECT_FALSE(stack.truncated);
  EXPECT_EQ(unwinder.stats().stacks, 0u);
}

TYPED_TEST(CfiUnwinderTest, GarbageStackNeverCrashes) {
  Capture capture;
  unwind_fixture_a(&CaptureHere, &capture);
  AddressSpaceTracker spaces = OwnMappings();
  OwnRoot files;
  TypeParam unwinder(&files);
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

// -callgraph fp+cfi: a sample taken on the first instruction of getcontext
// (glibc's, frameless) as CaptureHere (built with frame pointers) called it:
// SP points at the return address into CaptureHere and BP is still
// CaptureHere's frame, so the kernel's frame-pointer chain goes from the
// leaf straight to CaptureHere's caller.
constexpr uint64_t kLeafMask = 0x1c0;  // BP, SP, IP

struct LeafSample {
  recording::OffCpuSample stay;  // holds the registers and the copy
  std::vector<uint64_t> chain;   // what the kernel's walk gives
  uint64_t return_into_capture = 0;
  UserStackCopy copy() const { return StackCopyOf(stay, kLeafMask); }
};

uint64_t Word(const std::string& stack, uint64_t sp, uint64_t address) {
  uint64_t word = 0;
  std::memcpy(&word, stack.data() + (address - sp), sizeof(word));
  return word;
}

// perf_callchain_user's walk: the IP, then each frame record's return
// address from BP on, while the records lie inside the copy.
std::vector<uint64_t> KernelChain(uint64_t ip, uint64_t bp, uint64_t sp, const std::string& stack) {
  std::vector<uint64_t> chain = {ip};
  while (bp >= sp && bp - sp + 16 <= stack.size() && chain.size() < 128) {
    chain.push_back(Word(stack, sp, bp + 8));
    uint64_t next = Word(stack, sp, bp);
    if (next <= bp) break;
    bp = next;
  }
  return chain;
}

LeafSample InGetcontext(const Capture& capture) {
  const std::vector<uint64_t>& regs = capture.sample.user_regs;  // kRegsMask order
  const uint64_t bp = regs[6], sp = regs[7], ip = regs[8];
  LeafSample leaf;
  leaf.return_into_capture = ip;
  const uint64_t leaf_ip = reinterpret_cast<uint64_t>(dlsym(RTLD_DEFAULT, "getcontext"));
  const uint64_t leaf_sp = sp - 8;  // the call pushed the return address
  leaf.stay.pid = capture.sample.pid;
  leaf.stay.tid = capture.sample.tid;
  leaf.stay.user_regs_abi = 2;
  leaf.stay.user_regs = {bp, leaf_sp, leaf_ip};
  leaf.stay.user_stack_copy.assign(reinterpret_cast<const char*>(&ip), sizeof(ip));
  leaf.stay.user_stack_copy += capture.sample.user_stack;
  leaf.chain = KernelChain(leaf_ip, bp, leaf_sp, leaf.stay.user_stack_copy);
  return leaf;
}

TYPED_TEST(LeafRepairTest, AFramelessLeafGetsItsCallerBack) {
  Capture capture;
  CaptureHere(&capture);
  LeafSample leaf = InGetcontext(capture);
  ASSERT_GE(leaf.chain.size(), 3u);
  AddressSpaceTracker spaces = OwnMappings();
  OwnRoot files;
  TypeParam unwinder(&files);
  UnwoundStack repaired = unwinder.RepairLeaf(leaf.copy(), leaf.chain, spaces);
  std::vector<uint64_t> expected = {leaf.chain[0], leaf.return_into_capture};
  expected.insert(expected.end(), leaf.chain.begin() + 1, leaf.chain.end());
  EXPECT_EQ(repaired.ips, expected);
  EXPECT_FALSE(repaired.truncated);
  EXPECT_THAT(NameOf(repaired.ips[1] - 1), ::testing::HasSubstr("CaptureHere"));
  EXPECT_EQ(unwinder.stats().leaf.repaired, 1u);
  EXPECT_EQ(unwinder.stats().leaf.frames_added, 1u);
}

TYPED_TEST(LeafRepairTest, ALeafWithItsFrameKeepsTheChain) {
  Capture capture;
  CaptureHere(&capture);
  const std::vector<uint64_t>& regs = capture.sample.user_regs;
  recording::OffCpuSample stay;
  stay.pid = capture.sample.pid;
  stay.tid = capture.sample.tid;
  stay.user_regs_abi = 2;
  stay.user_regs = {regs[6], regs[7], regs[8]};
  stay.user_stack_copy = capture.sample.user_stack;
  std::vector<uint64_t> chain = KernelChain(regs[8], regs[6], regs[7], stay.user_stack_copy);
  AddressSpaceTracker spaces = OwnMappings();
  OwnRoot files;
  TypeParam unwinder(&files);
  EXPECT_EQ(unwinder.RepairLeaf(StackCopyOf(stay, kLeafMask), chain, spaces).ips, chain);
  EXPECT_EQ(unwinder.stats().leaf.unchanged, 1u);
}

TYPED_TEST(LeafRepairTest, WhatCannotBeRepairedIsLeftAsItWas) {
  Capture capture;
  CaptureHere(&capture);
  AddressSpaceTracker spaces = OwnMappings();
  OwnRoot files;
  TypeParam unwinder(&files);

  LeafSample short_copy = InGetcontext(capture);  // CFI cannot reach the record
  short_copy.stay.user_stack_copy.resize(8);
  EXPECT_EQ(unwinder.RepairLeaf(short_copy.copy(), short_copy.chain, spaces).ips,
            short_copy.chain);
  EXPECT_EQ(unwinder.stats().leaf.no_splice, 1u);

  LeafSample other_chain = InGetcontext(capture);  // the slot the kernel read disagrees
  other_chain.chain[1] ^= 0x40;
  EXPECT_EQ(unwinder.RepairLeaf(other_chain.copy(), other_chain.chain, spaces).ips,
            other_chain.chain);
  EXPECT_EQ(unwinder.stats().leaf.mismatch, 1u);

  LeafSample wild = InGetcontext(capture);  // a return address into no code
  const uint64_t nowhere = 0x10;
  std::memcpy(wild.stay.user_stack_copy.data(), &nowhere, sizeof(nowhere));
  EXPECT_EQ(unwinder.RepairLeaf(wild.copy(), wild.chain, spaces).ips, wild.chain);
  EXPECT_EQ(unwinder.stats().leaf.repaired, 0u);

  LeafSample no_regs = InGetcontext(capture);  // a kernel thread
  no_regs.stay.user_regs_abi = 0;
  EXPECT_EQ(unwinder.RepairLeaf(no_regs.copy(), no_regs.chain, spaces).ips, no_regs.chain);
  EXPECT_EQ(unwinder.stats().leaf.no_registers, 1u);

  TypeParam without_files(nullptr);
  LeafSample leaf = InGetcontext(capture);
  EXPECT_EQ(without_files.RepairLeaf(leaf.copy(), leaf.chain, spaces).ips, leaf.chain);
}

TYPED_TEST(LeafRepairTest, WithoutAFrameRecordCfiFramesStandIn) {
  Capture capture;
  CaptureHere(&capture);
  LeafSample leaf = InGetcontext(capture);
  leaf.stay.user_regs[0] = 0;  // BP 0: the kernel's walk gives the IP alone
  leaf.chain.resize(1);
  AddressSpaceTracker spaces = OwnMappings();
  OwnRoot files;
  TypeParam unwinder(&files);
  UnwoundStack repaired = unwinder.RepairLeaf(leaf.copy(), leaf.chain, spaces);
  ASSERT_GE(repaired.ips.size(), 2u);
  EXPECT_EQ(repaired.ips[0], leaf.chain[0]);
  EXPECT_EQ(repaired.ips[1], leaf.return_into_capture);
  EXPECT_TRUE(repaired.truncated);
  EXPECT_EQ(unwinder.stats().leaf.cfi_only, 1u);
}

// Code without frame pointers between the leaf and the first frame that
// keeps one, using BP for data (libcrypto's SHA-256 keeps its constants
// table there): the kernel's walk reads the table as a frame record, so its
// chain is the IP and a number that is no code. CFI goes past it.
void* CaptureWithBpOnATable(void* arg) {
  unwind_fixture_bp_table(&CaptureContext, arg);
  return nullptr;
}

struct TableSample {
  recording::OffCpuSample stay;
  std::vector<uint64_t> chain;
  UserStackCopy copy() const { return StackCopyOf(stay, kLeafMask); }
};

TableSample SampleWithBpOnATable(const Capture& capture) {
  const std::vector<uint64_t>& regs = capture.sample.user_regs;  // kRegsMask order
  TableSample leaf;
  leaf.stay.pid = capture.sample.pid;
  leaf.stay.tid = capture.sample.tid;
  leaf.stay.user_regs_abi = 2;
  leaf.stay.user_regs = {regs[6], regs[7], regs[8]};
  leaf.stay.user_stack_copy = capture.sample.user_stack;
  // perf_callchain_user from BP = the table: its second word as a return
  // address, then its first as the next record, which is no user address.
  leaf.chain = {regs[8], kUnwindFixtureTable[1]};
  return leaf;
}

TYPED_TEST(LeafRepairTest, ABpHoldingDataIsUnwoundPastByCfiToTheThreadStart) {
  Capture capture;
  pthread_t thread;
  ASSERT_EQ(pthread_create(&thread, nullptr, &CaptureWithBpOnATable, &capture), 0);
  pthread_join(thread, nullptr);
  ASSERT_TRUE(capture.whole_stack);
  ASSERT_EQ(capture.sample.user_regs[6], reinterpret_cast<uint64_t>(kUnwindFixtureTable));
  TableSample leaf = SampleWithBpOnATable(capture);
  AddressSpaceTracker spaces = OwnMappings();
  OwnRoot files;
  TypeParam unwinder(&files);
  UnwoundStack repaired = unwinder.RepairLeaf(leaf.copy(), leaf.chain, spaces);
  std::vector<std::string> names = Names(repaired);
  SCOPED_TRACE(::testing::PrintToString(names));
  ASSERT_GE(names.size(), 4u);
  EXPECT_EQ(repaired.ips[0], leaf.chain[0]);
  EXPECT_EQ(names[0], "unwind_fixture_frameless_capture");
  EXPECT_EQ(names[1], "unwind_fixture_bp_table");
  EXPECT_THAT(names[2], ::testing::HasSubstr("CaptureWithBpOnATable"));
  // Then glibc's start_thread and clone3 (not exported: dladdr names them
  // after a neighbour), the thread's first frame.
  EXPECT_FALSE(repaired.truncated);
  EXPECT_GE(names.size(), 5u);
  EXPECT_EQ(unwinder.stats().leaf.cfi_whole, 1u);

  // The copy ends before the thread's start (cut just above the fixture's
  // frames): the CFI frames, marked cut, still beat a chain whose second
  // address is no code.
  size_t fixture_frames_end = 0;
  for (size_t size = 64; size <= capture.sample.user_stack.size(); size += 8) {
    TableSample probe = SampleWithBpOnATable(capture);
    probe.stay.user_stack_copy.resize(size);
    TypeParam scratch(&files);
    if (scratch.RepairLeaf(probe.copy(), probe.chain, spaces).ips.size() >= 3) {
      fixture_frames_end = size;
      break;
    }
  }
  ASSERT_GT(fixture_frames_end, 0u);
  TableSample short_copy = SampleWithBpOnATable(capture);
  short_copy.stay.user_stack_copy.resize(fixture_frames_end);
  UnwoundStack cut = unwinder.RepairLeaf(short_copy.copy(), short_copy.chain, spaces);
  SCOPED_TRACE(::testing::PrintToString(Names(cut)));
  ASSERT_GE(cut.ips.size(), 3u);
  EXPECT_EQ(cut.ips[1], repaired.ips[1]);
  EXPECT_TRUE(cut.truncated);
  EXPECT_EQ(unwinder.stats().leaf.cfi_only, 1u);
}

// The parallel replay's workers (fold/profile_builder_parallel.h): each
// thread unwinds with a DwarfUnwinder of its own, over its own view of the
// mappings, at once; every answer is the run's unwinder's, and the counts
// come back to it.
TEST(DwarfUnwinderWorkersTest, WorkersOnThreadsOfTheirOwnAnswerAsTheRunsUnwinder) {
  Capture capture;
  unwind_fixture_a(&CaptureHere, &capture);
  Capture leaf_capture;
  CaptureHere(&leaf_capture);
  LeafSample leaf = InGetcontext(leaf_capture);
  AddressSpaceTracker spaces = OwnMappings();
  OwnRoot files;
  DwarfUnwinder unwinder(&files);
  const UnwoundStack stack = unwinder.Unwind(capture.sample, kRegsMask, spaces);
  const UnwoundStack repaired = unwinder.RepairLeaf(leaf.copy(), leaf.chain, spaces);
  ASSERT_GE(stack.ips.size(), 5u);
  ASSERT_GT(repaired.ips.size(), leaf.chain.size());
  constexpr int kWorkers = 4;
  constexpr int kRounds = 20;
  std::vector<std::unique_ptr<UserStackUnwinder>> workers;
  for (int i = 0; i < kWorkers; ++i) workers.push_back(unwinder.NewWorker(kWorkers));
  std::vector<int> same(kWorkers, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < kWorkers; ++i) {
    threads.emplace_back([&, i] {
      AddressSpaceTracker own = OwnMappings();
      for (int round = 0; round < kRounds; ++round) {
        UnwoundStack s = workers[i]->Unwind(capture.sample, kRegsMask, own);
        UnwoundStack r = workers[i]->RepairLeaf(leaf.copy(), leaf.chain, own);
        if (s.ips == stack.ips && s.truncated == stack.truncated && r.ips == repaired.ips) ++same[i];
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kWorkers; ++i) EXPECT_EQ(same[i], kRounds) << "worker " << i;
  for (auto& worker : workers) unwinder.AddWorker(*worker);
  EXPECT_EQ(unwinder.stats().stacks, 1u + kWorkers * kRounds);
  EXPECT_EQ(unwinder.stats().leaf.repaired, 1u + kWorkers * kRounds);
}

}  // namespace
}  // namespace profcpu::symbolize
