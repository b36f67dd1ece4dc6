#include "symbolize/kallsyms.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "symbolize/test_util.h"

namespace profcpu::symbolize {
namespace {

using ::testing::HasSubstr;

// Shaped like /proc/kallsyms (kernel/kallsyms.c s_show): core symbols, then
// modules with a tab and [name]; data symbols interleaved.
constexpr absl::string_view kText =
    "ffffffff81000000 T _text\n"
    "ffffffff81000000 T startup_64\n"
    "ffffffff81000000 t _local_alias\n"
    "ffffffff81000100 T secondary_startup_64\n"
    "ffffffff81000200 D some_data\n"
    "ffffffff81001000 t do_syscall_64\n"
    "ffffffff81002000 W weak_thing\n"
    "ffffffff81003000 b bss_thing\n"
    "ffffffffc0a01000 t nvme_queue_rq\t[nvme]\n"
    "ffffffffc0a01400 T nvme_complete_rq\t[nvme]\n"
    "ffffffffc0a02000 d nvme_data\t[nvme]\n"
    "ffffffffc0b00000 t bpf_prog_6deef7357e7b4530_sd_fw_egress\t[bpf]\n";

TEST(KallsymsTest, NamesCoreKernelText) {
  auto parsed = Kallsyms::Parse(kText);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  auto match = parsed->Lookup(0xffffffff81001010);
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->name, "do_syscall_64");
  EXPECT_EQ(match->offset, 0x10u);
  EXPECT_EQ(match->module, "[kernel.kallsyms]");
}

TEST(KallsymsTest, NamesModuleTextWithModuleLabel) {
  auto parsed = Kallsyms::Parse(kText);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  auto match = parsed->Lookup(0xffffffffc0a01404);
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->name, "nvme_complete_rq");
  EXPECT_EQ(match->offset, 4u);
  EXPECT_EQ(match->module, "[nvme]");
  match = parsed->Lookup(0xffffffffc0b00020);
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->module, "[bpf]");
}

TEST(KallsymsTest, OnlyTextSymbolsAreKept) {
  auto parsed = Kallsyms::Parse(kText);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  // some_data (D) does not name its address: the text symbol before it does.
  auto match = parsed->Lookup(0xffffffff81000200);
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->name, "secondary_startup_64");
  EXPECT_EQ(match->offset, 0x100u);
  // Weak text counts as text.
  match = parsed->Lookup(0xffffffff81002000);
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->name, "weak_thing");
}

TEST(KallsymsTest, AliasesPreferGlobalWithFewerUnderscores) {
  auto parsed = Kallsyms::Parse(kText);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  auto match = parsed->Lookup(0xffffffff81000000);
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->name, "startup_64");
}

TEST(KallsymsTest, AddressesBelowTheFirstAndFarPastTheLastAreUnknown) {
  auto parsed = Kallsyms::Parse(kText);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_FALSE(parsed->Lookup(0xffffffff80000000).has_value());
  EXPECT_TRUE(parsed->Lookup(0xffffffffc0b00fff).has_value());
  EXPECT_FALSE(parsed->Lookup(0xffffffffc0b10000).has_value());
}

TEST(KallsymsTest, AllZeroAddressesMeanHiddenSymbols) {
  auto parsed = Kallsyms::Parse(
      "0000000000000000 T _text\n"
      "0000000000000000 t do_syscall_64\n"
      "0000000000000000 t nvme_queue_rq\t[nvme]\n");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(parsed.status().message(), HasSubstr("kernel symbols are hidden"));
  EXPECT_THAT(parsed.status().message(), HasSubstr("CAP_SYSLOG"));
  EXPECT_THAT(parsed.status().message(), HasSubstr("kernel.kptr_restrict=0"));
}

TEST(KallsymsTest, MalformedLinesAreCountedAndSkipped) {
  auto parsed = Kallsyms::Parse(
      "ffffffff81000000 T _text\n"
      "not a line\n"
      "ffffffff81000100 Tnospace\n"
      "zzzz T bad_address\n"
      "ffffffff81000200 t broken_module\t[nvme\n"
      "ffffffff81001000 t good\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->malformed_lines(), 4u);
  EXPECT_EQ(parsed->size(), 2u);
}

TEST(KallsymsTest, NothingUsableIsAnError) {
  EXPECT_FALSE(Kallsyms::Parse("").ok());
  EXPECT_FALSE(Kallsyms::Parse("ffffffff81000200 D some_data\n").ok());
}

TEST(KallsymsTest, LoadsFromAFile) {
  testing::ScratchDir dir;
  std::string path = dir.Write("kallsyms", kText);
  auto loaded = Kallsyms::Load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->size(), 7u);
  auto missing = Kallsyms::Load(dir.path() + "/absent");
  EXPECT_FALSE(missing.ok());
}

TEST(KallsymsTest, ParsesThisMachinesKallsymsIfReadable) {
  auto loaded = Kallsyms::Load("/proc/kallsyms");
  if (!loaded.ok()) GTEST_SKIP() << loaded.status();
  EXPECT_GT(loaded->size(), 1000u);
  EXPECT_EQ(loaded->malformed_lines(), 0u);
}

}  // namespace
}  // namespace profcpu::symbolize
